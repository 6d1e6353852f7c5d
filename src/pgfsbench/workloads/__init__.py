"""Workload kinds, one module each (see kind.py for what a kind declares and registry.py
for the lookup by plan ``type``), and the parsers of the tools they run."""
