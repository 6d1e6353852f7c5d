"""Loading a plan: a built-in name or a TOML file, with one clear error."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from pgfsbench.errors import UserError
from pgfsbench.plan.compose import compose
from pgfsbench.plan.model import Plan

BUILTIN = resources.files("pgfsbench.plan").joinpath("builtin")


def builtin_names() -> list[str]:
    return sorted(p.name[:-5] for p in BUILTIN.iterdir() if p.name.endswith(".toml"))


def builtin_text(name: str) -> str:
    return BUILTIN.joinpath(f"{name}.toml").read_text()


def _describe(error: ValidationError, data: dict) -> str:
    parts = []
    targets = data.get("targets") if isinstance(data.get("targets"), list) else []
    for e in error.errors():
        loc = [str(x) for x in e["loc"] if not str(x).endswith("Workload")]
        # Name a target by its name: after extends/matrix its index means little.
        if len(loc) > 1 and loc[0] == "targets" and loc[1].isdigit() \
                and int(loc[1]) < len(targets) and isinstance(targets[int(loc[1])], dict) \
                and isinstance(targets[int(loc[1])].get("name"), str):
            loc[1] = targets[int(loc[1])]["name"]
        where = ".".join(loc) or "plan"
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            msg = "unknown key"
        parts.append(f"{where}: {msg}")
    return "; ".join(parts)


def parse_plan(text: str, source: str) -> Plan:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"plan {source}: not valid TOML: {exc}") from None
    data = compose(data, source)
    try:
        return Plan.model_validate(data)
    except ValidationError as exc:
        raise UserError(f"plan {source}: {_describe(exc, data)}") from None


def load_plan(name_or_path: str) -> Plan:
    if name_or_path in builtin_names():
        return parse_plan(builtin_text(name_or_path), f"'{name_or_path}' (built-in)")
    path = Path(name_or_path)
    if not path.is_file():
        raise UserError(f"no plan '{name_or_path}': not a built-in plan "
                        f"({', '.join(builtin_names())}) and no such file")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"plan {path}: cannot read it: {exc}") from None
    return parse_plan(text, str(path))
