"""JSON Schemas of the JSON documents, generated from the typed dictionaries their
writers are annotated with (formats/export_document.py, formats/comparison_document.py,
formats/list_history_documents.py): one source for what a writer writes, what mypy checks and what
``pgfsbench schema`` prints.

pydantic (a dependency already, for the plan model) makes the schema from the types;
each field's description is the docstring under it. Loaded only by the schema command
and the tests: the writers never import pydantic's schema machinery.
"""

from __future__ import annotations

from typing import Any

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def json_schema(
    model: Any, *, id: str, title: str, description: str, note: str = ""
) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``model`` (a TypedDict, a list of one, a union),
    every part described, without the titles pydantic derives from the field names. Its
    description: ``description`` (what writes it), the model's docstring, ``note``."""
    from pydantic import TypeAdapter
    from pydantic.json_schema import GenerateJsonSchema

    class _Untitled(GenerateJsonSchema):
        def field_title_should_be_set(self, schema: Any) -> bool:
            return False

    body = TypeAdapter(model).json_schema(schema_generator=_Untitled)
    _tidy(body)
    # what writes it, then what the model's docstring says of it
    described = " ".join(filter(None, [description, body.pop("description", None), note]))
    return {"$schema": DIALECT, "$id": id, "title": title, "description": described, **body}


def _tidy(node: Any) -> None:
    """Without the class names pydantic gives each part as a title (the $defs keep them
    as keys); each description on one line (a docstring is wrapped to fit the source)."""
    if isinstance(node, dict):
        if isinstance(node.get("title"), str) and node.get("type") == "object":
            del node["title"]
        if isinstance(node.get("description"), str):
            node["description"] = " ".join(node["description"].split())
        for value in node.values():
            _tidy(value)
    elif isinstance(node, list):
        for value in node:
            _tidy(value)
