"""The JSON Schema of a plan file, made from the plan model.

The model validates a plan after ``extends`` and ``matrix`` are resolved (plan/compose.py);
a plan *file* may also hold ``[mixins.NAME]``, ``[[matrix]]`` and a target's ``extends``.
The schema adds those to the model's own, so an editor (a TOML language server reading a
JSON Schema) validates and completes the file as written. ``pgfsbench plan schema`` prints
it and docs/gen_plan_reference.py writes the plan reference page from it.
"""

from __future__ import annotations

import copy
from typing import Any

DIALECT = "https://json-schema.org/draft/2020-12/schema"

_NAMES = {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
EXTENDS = {
    **_NAMES,
    "description": "targets or mixins whose keys this one starts from, "
    "earlier first; its own keys win (sysctls, queue and "
    "postgres.settings merge key by key)",
}
MATRIX = {
    "type": "object",
    "title": "Matrix",
    "description": "One target per combination of the axes' values ([[matrix]]).",
    "additionalProperties": False,
    "required": ["axes"],
    "properties": {
        "axes": {
            "type": "object",
            "minProperties": 1,
            "description": "target keys to vary: a list of values (labelled by their text) "
            'or a table label = value; "postgres.settings.NAME", '
            '"sysctls.NAME" or "queue.NAME" varies that one entry',
            "additionalProperties": {
                "anyOf": [{"type": "array", "minItems": 1}, {"type": "object", "minProperties": 1}]
            },
        },
        "extends": {**EXTENDS, "description": "targets or mixins every combination starts from"},
        "name": {
            "type": "string",
            "description": 'name template such as "{fs}-{mount}" '
            "(default: the labels joined with '-')",
        },
    },
}


def plan_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a plan file, every field described."""
    from pgfsbench.plan.model import Plan

    schema = Plan.model_json_schema()
    defs = schema["$defs"]
    target = defs["Target"]
    target["properties"]["extends"] = EXTENDS
    mixin = copy.deepcopy(target)
    mixin.pop("required", None)
    del mixin["properties"]["name"]
    mixin["title"] = "Mixin"
    mixin["description"] = (
        "A partial target to share ([mixins.NAME]): any target key but "
        "name; never run by itself, only extended."
    )
    defs["Mixin"] = mixin
    defs["Matrix"] = MATRIX
    schema["properties"]["mixins"] = {
        "type": "object",
        "additionalProperties": {"$ref": "#/$defs/Mixin"},
        "description": "partial targets that targets and matrices extend",
    }
    schema["properties"]["matrix"] = {
        "type": "array",
        "items": {"$ref": "#/$defs/Matrix"},
        "description": "targets made from every combination of axes",
    }
    # a plan of matrices alone has no [[targets]] table
    schema["required"] = [k for k in schema["required"] if k != "targets"]
    schema["anyOf"] = [{"required": ["targets"]}, {"required": ["matrix"]}]
    for model in defs.values():
        kind = model.get("properties", {}).get("type", {})
        if "const" in kind and "description" not in kind:
            kind["description"] = f'the workload kind: "{kind["const"]}"'
    schema["title"] = "pgfsbench plan"
    schema["description"] = (
        "A pgfsbench plan file (TOML): the targets to compare, the "
        "workloads measured on each, how often, and how differences "
        "are judged. Check one with: pgfsbench plan check FILE."
    )
    return {"$schema": DIALECT, **schema}
