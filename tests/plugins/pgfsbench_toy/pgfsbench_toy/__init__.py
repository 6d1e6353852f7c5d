"""Toy pgfsbench extensions: each module declares one thing, pyproject.toml names it."""
