"""The built-in plans' files: their names and text, without loading the plan model (so
``plans --show`` and tab completion import no workload kind)."""

from __future__ import annotations

from importlib import resources

BUILTIN = resources.files("pgfsbench.plan").joinpath("builtin")


def builtin_names() -> list[str]:
    return sorted(p.name[:-5] for p in BUILTIN.iterdir() if p.name.endswith(".toml"))


def builtin_text(name: str) -> str:
    return BUILTIN.joinpath(f"{name}.toml").read_text()
