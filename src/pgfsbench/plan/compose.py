"""Targets that compose: ``extends`` (targets or mixins) and ``matrix`` expansion.

Works on the raw TOML data before validation, so the validated model only ever
sees plain, complete targets:

    [mixins.fast-log]                  # a partial target, never run itself
    mount = "logbsize=262144"

    [[targets]]
    name = "xfs-tuned"
    extends = ["xfs", "fast-log"]      # earlier first, later wins, own keys win last

    [[matrix]]                         # one target per combination
    extends = "xfs"
    name = "xfs-{mount}"               # optional; default joins the labels with '-'
    [matrix.axes]
    mount = { default = "", noatime = "noatime" }   # label = value, or a plain list
    "postgres.settings.io_method" = ["sync", "worker"]   # one setting as an axis

An axis named ``postgres.settings.NAME``, ``sysctls.NAME`` or ``queue.NAME`` varies that
one entry (merged into the target's table like any other), so several settings can each
be an axis of their own; a ``name`` template calls it by its last part (``{io_method}``).
"""

from __future__ import annotations

import copy
import itertools
import math
import re
from typing import NoReturn

from pgfsbench.errors import UserError

MERGED_TABLES = ("sysctls", "queue")  # merged key by key; every other key is replaced
MAX_TARGETS = 1000  # a matrix multiplies: far beyond what anyone can run, refused early


def _merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if key in MERGED_TABLES and isinstance(value, dict):
            out[key] = {**out.get(key, {}), **value}
        elif key == "postgres" and isinstance(value, dict):
            settings = {**out.get("postgres", {}).get("settings", {}), **value.get("settings", {})}
            out["postgres"] = {**out.get("postgres", {}), **value, "settings": settings}
        else:
            out[key] = copy.deepcopy(value)
    return out


class _Resolver:
    def __init__(self, targets: list[dict], mixins: dict[str, dict], source: str):
        self.source = source
        self.raw: dict[str, dict] = {}
        for name, body in mixins.items():
            if not isinstance(body, dict):
                self.fail(f"mixins.{name}", "a mixin is a table of target keys")
            self.raw[name] = body
        for t in targets:
            if isinstance(t, dict) and isinstance(t.get("name"), str):
                if t["name"] in mixins:
                    self.fail(f"targets.{t['name']}", "a target and a mixin share this name")
                self.raw.setdefault(t["name"], t)
        self.done: dict[str, dict] = {}

    def fail(self, where: str, what: str) -> NoReturn:
        raise UserError(f"plan {self.source}: {where}: {what}")

    def resolve(self, name: str, chain: tuple[str, ...] = ()) -> dict:
        if name in chain:
            self.fail(
                f"targets.{chain[0]}.extends", "extends cycle: " + " -> ".join((*chain, name))
            )
        if name in self.done:
            return self.done[name]
        if name not in self.raw:
            where = f"targets.{chain[-1]}.extends" if chain else "extends"
            self.fail(where, f"no target or mixin named '{name}'")
        body = self.raw[name]
        out = self.expand(body, (*chain, name), where=f"targets.{name}")
        self.done[name] = out
        return out

    def expand(self, body: dict, chain: tuple[str, ...], where: str) -> dict:
        parents = body.get("extends", [])
        if isinstance(parents, str):
            parents = [parents]
        if not isinstance(parents, list) or not all(isinstance(p, str) for p in parents):
            self.fail(f"{where}.extends", "a name or a list of names")
        out: dict = {}
        for parent in parents:
            inherited = {k: v for k, v in self.resolve(parent, chain).items() if k != "name"}
            out = _merge(out, inherited)
        return _merge(out, {k: v for k, v in body.items() if k != "extends"})


# An axis that varies one entry of a table: the key's prefix names the table.
ENTRY_AXES = {
    "postgres.settings.": ("postgres", "settings"),
    "sysctls.": ("sysctls",),
    "queue.": ("queue",),
}


def _axis_entry(key: str, value: object) -> dict | None:
    """``postgres.settings.io_method = "sync"`` as the target keys it sets, or None
    for a plain target key."""
    for prefix, path in ENTRY_AXES.items():
        if key.startswith(prefix) and len(key) > len(prefix):
            nested: object = {key[len(prefix) :]: value}
            for part in reversed(path):
                nested = {part: nested}
            return nested  # type: ignore[return-value]
    return None


def _label(value: object) -> str:
    text = re.sub(r"[^a-z0-9]+", "-", str(value).lower()).strip("-")
    return text or "default"


def _matrix_targets(entry: dict, index: int, resolver: _Resolver) -> list[dict]:
    where = f"matrix.{index}"
    axes = entry.get("axes")
    if not isinstance(axes, dict) or not axes:
        resolver.fail(f"{where}.axes", 'give at least one axis, e.g. fs = ["ext4", "xfs"]')
    unknown = set(entry) - {"axes", "extends", "name"}
    if unknown:
        resolver.fail(f"{where}.{sorted(unknown)[0]}", "unknown key")
    choices = []
    for key, values in axes.items():
        if isinstance(values, dict):
            pairs = list(values.items())
        elif isinstance(values, list) and values:
            pairs = [(_label(v), v) for v in values]
        else:
            resolver.fail(f"{where}.axes.{key}", "a non-empty list or a table label = value")
        if "." in key and _axis_entry(key, None) is None:
            resolver.fail(
                f"{where}.axes.{key}",
                "a dotted axis varies one entry of " + ", ".join(p + "NAME" for p in ENTRY_AXES),
            )
        choices.append([(key, label, value) for label, value in pairs])
    if (count := math.prod(len(c) for c in choices)) > MAX_TARGETS:
        resolver.fail(f"{where}.axes", f"makes {count:,} targets; at most {MAX_TARGETS:,}")
    base = resolver.expand({"extends": entry.get("extends", [])}, (), where)
    template = entry.get("name")
    out = []
    for combo in itertools.product(*choices):
        labels = {key: str(label) for key, label, _ in combo}
        named = {key.rsplit(".", 1)[-1]: label for key, label in labels.items()}
        try:
            name = template.format(**named) if template else "-".join(labels.values())
        except (KeyError, IndexError, AttributeError, ValueError):
            resolver.fail(
                f"{where}.name",
                f"'{template}' names an axis the matrix lacks (axes: {', '.join(named)})",
            )
        over: dict = {}
        for key, _, value in combo:
            over = _merge(over, _axis_entry(key, value) or {key: value})
        out.append(_merge(base, {**over, "name": name}))
    return out


def compose(data: dict, source: str) -> dict:
    """Resolve ``extends`` and expand ``matrix``; returns plan data with plain targets."""
    data = dict(data)
    targets = data.get("targets", [])
    mixins = data.pop("mixins", {})
    matrix = data.pop("matrix", [])
    if (
        not isinstance(targets, list)
        or not isinstance(mixins, dict)
        or not isinstance(matrix, list)
    ):
        return data  # wrong shapes: let validation name them
    resolver = _Resolver(targets, mixins, source)
    resolved = []
    for i, t in enumerate(targets):
        if isinstance(t, dict) and "extends" in t:
            name = t.get("name", f"#{i}")
            t = {**resolver.expand(t, (str(name),), f"targets.{name}"), "name": t.get("name")}
        resolved.append(t)
    for i, entry in enumerate(matrix):
        if not isinstance(entry, dict):
            resolver.fail(f"matrix.{i}", "a table with axes")
        resolved += _matrix_targets(entry, i, resolver)
        if len(resolved) > MAX_TARGETS:
            resolver.fail(
                "matrix", f"the plan makes {len(resolved):,} targets; at most {MAX_TARGETS:,}"
            )
    data["targets"] = resolved
    return data
