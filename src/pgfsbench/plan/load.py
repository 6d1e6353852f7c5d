"""Loading a plan: a built-in name or a TOML file, with one clear error."""

from __future__ import annotations

import difflib
import re
import tomllib
import typing
from pathlib import Path

from pydantic import BaseModel, ValidationError

from pgfsbench.errors import UserError
from pgfsbench.plan.builtin import builtin_names, builtin_text
from pgfsbench.plan.compose import compose
from pgfsbench.plan.model import Plan, Workload
from pgfsbench.plan.strings import check_strings
from pgfsbench.workloads import registry

MAX_PLAN_BYTES = 1 << 20  # the largest built-in plan is a few kB


# pydantic names the branch of a union in an error's location ("count.constrained-int",
# "count.literal['auto']"): not a key of the plan.
_UNION_BRANCH = re.compile(
    r"(constrained-\w+|int|float|str|bool|literal\[.*\]|"
    r"(list|dict|function-\w+|is-instance|lax-or-strict)\[.*\])"
)


def _describe(error: ValidationError, data: dict) -> str:
    parts: dict[str, list[str]] = {}
    given = data.get("targets")
    targets: list = given if isinstance(given, list) else []
    for e in error.errors():
        loc = [
            str(x)
            for x in e["loc"]
            if not str(x).endswith("Workload") and not _UNION_BRANCH.fullmatch(str(x))
        ]
        # Name a target by its name: after extends/matrix its index means little.
        if (
            len(loc) > 1
            and loc[0] == "targets"
            and loc[1].isdigit()
            and int(loc[1]) < len(targets)
            and isinstance(targets[int(loc[1])], dict)
            and isinstance(targets[int(loc[1])].get("name"), str)
        ):
            loc[1] = targets[int(loc[1])]["name"]
        where = ".".join(loc) or "plan"
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            msg = "unknown key" + _suggestion(e["loc"])
        elif e["type"] == "too_short" and loc == ["targets"]:
            msg = "no [[targets]] table: a plan needs at least one target"
        parts.setdefault(where, []).append(msg)
    # a value that fits no branch of a union: one entry naming what each would take
    return "; ".join(
        f"{where}: {' or '.join(dict.fromkeys(msgs))}" for where, msgs in parts.items()
    )


def _suggestion(loc: tuple) -> str:
    """' (did you mean "targets"?)' for an unknown key close to one its table takes."""
    known = _keys_at(loc[:-1])
    near = difflib.get_close_matches(str(loc[-1]), known, 1, 0.7) if known else []
    return f" (did you mean '{near[0]}'?)" if near else ""


def _keys_at(path: tuple) -> list[str]:
    """The keys the table at ``path`` (a validation error's location) takes: the plan
    model walked field by field; a list index is skipped, and where a value may be one
    of several models (the workload kinds) the next part, its type tag, picks one."""
    models: list[type[BaseModel]] = [Plan]
    for part in path:
        if isinstance(part, int):
            continue
        field = models[0].model_fields.get(str(part)) if len(models) == 1 else None
        models = (
            _models_in(field.annotation)
            if field is not None
            else [m for m in models if _tag(m) == part]
        )
    return list(models[0].model_fields) if len(models) == 1 else []


def _models_in(annotation) -> list[type[BaseModel]]:
    """The models an annotation holds: list[Target] → [Target]; a union → its members."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    if annotation is Workload:  # a union made from the registry when the schema is built
        return [k.params for k in registry.kinds()]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def _tag(model) -> str | None:
    field = getattr(model, "model_fields", {}).get("type")
    args = typing.get_args(field.annotation) if field is not None else ()
    return args[0] if len(args) == 1 and isinstance(args[0], str) else None


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
        raise UserError(
            f"plan {source}: nested too deeply (tables or arrays inside each "
            "other, or a chain of extends, thousands of levels deep)"
        ) from None


def load_plan(name_or_path: str) -> Plan:
    if name_or_path in builtin_names():
        return parse_plan(builtin_text(name_or_path), f"'{name_or_path}' (built-in)")
    path = Path(name_or_path)
    if not path.is_file():
        near = difflib.get_close_matches(name_or_path, builtin_names(), 1, 0.6)
        mean = f"did you mean '{near[0]}'? " if near else ""
        raise UserError(
            f"no plan '{name_or_path}': {mean}not a built-in plan "
            f"({', '.join(builtin_names())}) and no such file"
        )
    try:
        if (size := path.stat().st_size) > MAX_PLAN_BYTES:
            raise UserError(
                f"plan {path}: {size:,} bytes is not a plan file (at most "
                f"{MAX_PLAN_BYTES:,}); check the file name"
            )
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"plan {path}: cannot read it: {exc}") from None
    return parse_plan(text, str(path))
