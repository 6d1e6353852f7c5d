"""Every releaser, for a process that releases a ledger it did not fill.

How a kind of resource is undone lives with the code that acquires it (``@releaser`` in
``ledger.py``, registered when its module is imported), and is declared as an entry
point of the ``pgfsbench.releasers`` group named by the ledger kind (extensions.py; the
shipped ones in pyproject.toml). A campaign imports those modules anyway, by using them;
a process that releases a ledger it did not fill (``pgfsbench cleanup`` after a killed
campaign) calls ``load_all()`` first. ``tests/unit/test_releasers.py`` checks that every
kind passed to ``ledger.add`` has a releaser.
"""

from __future__ import annotations

from pgfsbench import extensions
from pgfsbench.ledger import RELEASERS


def contract(name: str, obj: object) -> str | None:
    """What an entry must name: the function ``@releaser`` registered for the kind named."""
    if not callable(obj):
        return f"not a function but {type(obj).__name__}"
    if RELEASERS.get(name) is not obj:
        return f"not registered with @releaser({name!r}) in ledger.py"
    return None


def load_all() -> None:
    """Register every kind's releaser."""
    extensions.load_all(extensions.RELEASERS, contract)
