"""Filesystem recipes: one module per filesystem family, each declaring its ``RECIPES``.

A recipe (recipe.py) says how the filesystem is made (mkfs, an external log),
mounted (known options and the kernel's defaults), described (geometry tools and
their parsers) and how safe it is (durability). registry.py collects them. Nothing
here runs a command or imports ``pgfsbench.provision``: the plan, analysis and
report read recipes, provision runs what they build.
"""
