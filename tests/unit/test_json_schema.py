"""The JSON documents follow the JSON Schema shipped in the package (export/schema.json)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from pgfsbench import __version__
from pgfsbench.cli import app
from pgfsbench.export.json import SCHEMA_VERSION, campaign_data, schema
from pgfsbench.store.read import load_campaign
from tests.unit.test_export import build_results
from tests.unit.test_fail_if_worse import ROUNDS, _store

VALIDATOR = jsonschema.Draft202012Validator(schema())


def test_the_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(schema())
    assert schema()["$defs"]["header"]["properties"]["schema_version"]["const"] == SCHEMA_VERSION


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """Failed and skipped targets, unsupported and infinite values (test_export)."""
    return build_results(tmp_path_factory.mktemp("schema") / "r")


@pytest.fixture(scope="module")
def repeated(tmp_path_factory) -> Path:
    """Repeated rounds: CIs, ratios, verdicts."""
    return _store(tmp_path_factory.mktemp("schema") / "rep", "c-rep",
                  {"base": 1.0, "slow": 0.85, "same": 1.0}, ROUNDS)


def _cli_json(*args: str) -> dict:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("which", ["results", "repeated"])
def test_export_documents_follow_the_schema(request, which) -> None:
    doc = _cli_json("export", str(request.getfixturevalue(which)), "--format", "json")
    assert (doc["schema_version"], doc["pgfsbench_version"], doc["kind"]) == \
        (SCHEMA_VERSION, __version__, "export")
    assert list(doc)[:3] == ["schema_version", "pgfsbench_version", "kind"]  # at the top
    VALIDATOR.validate(doc)


@pytest.mark.parametrize("which", ["results", "repeated"])
def test_comparison_documents_follow_the_schema(request, which) -> None:
    doc = _cli_json("compare", str(request.getfixturevalue(which)), "--metric", "*",
                    "--format", "json")
    assert (doc["schema_version"], doc["kind"]) == (SCHEMA_VERSION, "comparison")
    VALIDATOR.validate(doc)
    if which == "repeated":  # the optional parts are there, and checked
        cells = [c for r in doc["rows"] for c in r["cells"].values() if "vs_baseline" in c]
        assert {c["vs_baseline"]["verdict"] for c in cells} >= {"worse", "equivalent"}


def test_the_schema_rejects_what_it_does_not_describe(results) -> None:
    """Mutations a reader would trip on: each must fail validation."""
    doc = campaign_data(load_campaign(results))
    VALIDATOR.validate(doc)
    mutations = [
        lambda d: d.pop("schema_version"),
        lambda d: d.update(schema_version=SCHEMA_VERSION + 1),
        lambda d: d.update(kind="comparison"),
        lambda d: d["runs"][0]["metrics"][0].update(value="1000.0"),
        lambda d: d["runs"][0]["metrics"][0].update(direction="up"),
        lambda d: d["runs"][0].update(unexpected=True),
        lambda d: d["targets"][0].update(status="fine"),
        lambda d: d["comparison"]["rows"][0]["cells"].update(x={"status": "ok"}),
    ]
    for i, mutate in enumerate(mutations):
        bad = copy.deepcopy(doc)
        mutate(bad)
        assert not VALIDATOR.is_valid(bad), f"mutation {i} passed validation"
