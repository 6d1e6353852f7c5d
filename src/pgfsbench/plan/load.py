"""Loading a plan: a built-in name or a TOML file, with one clear error."""

from __future__ import annotations

import re
import tomllib
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from pgfsbench.errors import UserError
from pgfsbench.plan.compose import compose
from pgfsbench.plan.model import Plan
from pgfsbench.plan.strings import check_strings

BUILTIN = resources.files("pgfsbench.plan").joinpath("builtin")
MAX_PLAN_BYTES = 1 << 20  # the largest built-in plan is a few kB


def builtin_names() -> list[str]:
    return sorted(p.name[:-5] for p in BUILTIN.iterdir() if p.name.endswith(".toml"))


def builtin_text(name: str) -> str:
    return BUILTIN.joinpath(f"{name}.toml").read_text()


# pydantic names the branch of a union in an error's location ("count.constrained-int",
# "count.literal['auto']"): not a key of the plan.
_UNION_BRANCH = re.compile(r"(constrained-\w+|int|float|str|bool|literal\[.*\]|"
                           r"(list|dict|function-\w+|is-instance|lax-or-strict)\[.*\])")


def _describe(error: ValidationError, data: dict) -> str:
    parts: dict[str, list[str]] = {}
    targets = data.get("targets") if isinstance(data.get("targets"), list) else []
    for e in error.errors():
        loc = [str(x) for x in e["loc"]
               if not str(x).endswith("Workload") and not _UNION_BRANCH.fullmatch(str(x))]
        # Name a target by its name: after extends/matrix its index means little.
        if len(loc) > 1 and loc[0] == "targets" and loc[1].isdigit() \
                and int(loc[1]) < len(targets) and isinstance(targets[int(loc[1])], dict) \
                and isinstance(targets[int(loc[1])].get("name"), str):
            loc[1] = targets[int(loc[1])]["name"]
        where = ".".join(loc) or "plan"
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            msg = "unknown key"
        parts.setdefault(where, []).append(msg)
    # a value that fits no branch of a union: one entry naming what each would take
    return "; ".join(f"{where}: {' or '.join(dict.fromkeys(msgs))}"
                     for where, msgs in parts.items())


def parse_plan(text: str, source: str) -> Plan:
    try:
        data = tomllib.loads(text)
        check_strings(data, source)
        data = compose(data, source)
        check_strings(data, source)  # names the composed target, not its parts
        return Plan.model_validate(data)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"plan {source}: not valid TOML: {exc}") from None
    except ValidationError as exc:
        raise UserError(f"plan {source}: {_describe(exc, data)}") from None
    except RecursionError:
        # tomllib, extends chains and validation all recurse: a plan is a few levels deep
        raise UserError(f"plan {source}: nested too deeply (tables or arrays inside each "
                        "other, or a chain of extends, thousands of levels deep)") from None


def load_plan(name_or_path: str) -> Plan:
    if name_or_path in builtin_names():
        return parse_plan(builtin_text(name_or_path), f"'{name_or_path}' (built-in)")
    path = Path(name_or_path)
    if not path.is_file():
        raise UserError(f"no plan '{name_or_path}': not a built-in plan "
                        f"({', '.join(builtin_names())}) and no such file")
    try:
        if (size := path.stat().st_size) > MAX_PLAN_BYTES:
            raise UserError(f"plan {path}: {size:,} bytes is not a plan file (at most "
                            f"{MAX_PLAN_BYTES:,}); check the file name")
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"plan {path}: cannot read it: {exc}") from None
    return parse_plan(text, str(path))
