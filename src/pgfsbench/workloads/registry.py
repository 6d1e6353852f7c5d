"""The workload kinds: plan ``type`` → its declaration (``WorkloadKind``, workloads/kind.py).

The kinds are the entry points of the ``pgfsbench.workloads`` group (extensions.py): the
shipped ones are declared in pyproject.toml, a third party's in its own package. A kind
module is imported when its type is first asked for; a test adds a toy kind with
``registered(kind)``. Plan validation, the runner lookup, the estimate, the headline
metric and the efficiency ratios all ask here, so an unregistered type fails loudly
instead of estimating 0 s or giving no verdict.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator, Mapping

from pydantic import BaseModel, ValidationError

from pgfsbench import extensions
from pgfsbench.workloads.kind import WorkloadBase, WorkloadKind

# Stored params keys not re-validated: the plan's measurements() may have appended the
# parameters that tell two measurements apart to the tag, beyond what a plan may write;
# nothing derived from params reads it (the run's label keeps it).
NOT_REVALIDATED = ("type", "tag")


class UnknownWorkloadType(LookupError):
    pass


class StoredParamsWarning(UserWarning):
    """A stored run's params that its kind no longer accepts (an older version stored them)."""


_added: dict[str, WorkloadKind] = {}  # by register(): a test's toy
_dependents: list[type[BaseModel]] = []  # models whose schema holds the kinds' params


def contract(name: str, obj: object) -> str | None:
    """What an entry of the group must be: a WorkloadKind whose type is the entry's name."""
    if not isinstance(obj, WorkloadKind):
        return f"not a WorkloadKind but {type(obj).__name__}"
    if not (isinstance(obj.params, type) and issubclass(obj.params, WorkloadBase)):
        return "its params model is not a WorkloadBase"
    if obj.type != name:
        return f"its params declare type '{obj.type}', the entry point's name is '{name}'"
    return None


def _installed(type_: str) -> WorkloadKind | None:
    if type_ not in extensions.names(extensions.WORKLOADS):
        return None
    return extensions.load(extensions.WORKLOADS, type_, contract)


def kind(type_: str) -> WorkloadKind:
    found = find(type_)
    if found is None:
        raise UnknownWorkloadType(
            f"no workload type '{type_}' is registered (known: "
            f"{', '.join(k.type for k in kinds())})"
        )
    return found


def find(type_: str) -> WorkloadKind | None:
    """``kind`` for stored runs: None for a type this version does not have."""
    return _added.get(type_) or _installed(type_)


def kinds() -> list[WorkloadKind]:
    """Every kind, in the order they declare (imports every kind module)."""
    every = {**extensions.load_all(extensions.WORKLOADS, contract), **_added}
    return sorted(every.values(), key=lambda k: (k.order, k.type))


def register(new: WorkloadKind) -> None:
    if find(new.type) is not None:
        raise ValueError(f"workload type '{new.type}' is registered already")
    _added[new.type] = new
    _rebuild()


def unregister(type_: str) -> None:
    kind(type_)  # an unknown type is a mistake, not a no-op
    if type_ not in _added:
        raise ValueError(f"workload type '{type_}' is installed, not registered by a test")
    del _added[type_]
    _rebuild()


@contextlib.contextmanager
def registered(new: WorkloadKind) -> Iterator[WorkloadKind]:
    """``new`` is a kind for the duration of the block (a test's toy kind)."""
    register(new)
    try:
        yield new
    finally:
        unregister(new.type)


def rebuild_on_change(model: type[BaseModel]) -> None:
    """Rebuild ``model``'s schema whenever a kind is registered or unregistered: its
    validation holds every kind's params model (the plan's workload union)."""
    _dependents.append(model)


def _rebuild() -> None:
    for model in _dependents:
        model.model_rebuild(force=True)


def params(type_: str, stored: Mapping[str, object]) -> WorkloadBase:
    """A run's stored params validated again by its kind's model.

    Stored params are the expanded workload's ``model_dump(mode='json')``: a sweep is
    already one value, a path a string. ``type`` may be there or not (the run's
    workload says it); the tag is left out (see NOT_REVALIDATED). What the run did not
    record gets the model's defaults, the one place they live. Raises ValidationError
    when the kind no longer accepts what was stored.
    """
    data = {k: v for k, v in stored.items() if k not in NOT_REVALIDATED}
    return kind(type_).params.model_validate({**data, "type": type_})


def stored_params(of: WorkloadKind, stored: Mapping[str, object]) -> WorkloadBase | None:
    """``params`` for the read side, which must never crash on old results: None, with a
    StoredParamsWarning, when the kind no longer accepts what an older version stored.
    What depends on the params (a headline chosen by them, logical bytes) is then left
    out for those runs; everything else about them is still shown."""
    try:
        return params(of.type, stored)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "params"
        warnings.warn(
            StoredParamsWarning(
                f"stored {of.type} parameters are not valid for this version ({where}: "
                f"{first['msg'].removeprefix('Value error, ')}): what depends on them (a "
                "headline chosen by parameters, logical bytes) is left out for those runs"
            ),
            stacklevel=3,
        )
        return None


extensions.on_refresh(_rebuild)  # a package put on sys.path by a test
