"""pgfsbench plan schema: a JSON Schema of the plan file, made from the plan model, that
accepts every built-in and example plan as written (mixins, matrix, extends and all),
describes every key, and is the one source of the docs' plan reference page."""

from __future__ import annotations

import importlib.util
import json
import tomllib
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from pgfsbench.cli import app
from pgfsbench.plan.load import builtin_names, builtin_text
from pgfsbench.plan.schema import plan_schema

ROOT = Path(__file__).parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))


@pytest.fixture(scope="module")
def validator():
    schema = plan_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("name", builtin_names())
def test_the_schema_accepts_every_builtin_plan(validator, name):
    errors = [
        f"{list(e.path)}: {e.message}"
        for e in validator.iter_errors(tomllib.loads(builtin_text(name)))
    ]
    assert errors == []


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_the_schema_accepts_every_example_plan(validator, path):
    errors = [
        f"{list(e.path)}: {e.message}"
        for e in validator.iter_errors(tomllib.loads(path.read_text()))
    ]
    assert errors == []


@pytest.mark.parametrize(
    "plan",
    [
        {
            "name": "x",
            "targets": [{"name": "a", "fs": "ext4", "sise": "2G"}],
            "workloads": [{"type": "fsync"}],
        },  # unknown target key
        {
            "name": "x",
            "targets": [{"name": "a", "fs": "ext4"}],
            "workloads": [{"type": "fsync", "secs": 2}],
        },  # unknown workload key
        {
            "name": "x",
            "targets": [{"name": "a", "fs": "ext4"}],
            "workloads": [{"type": "no-such-kind"}],
        },  # unknown kind
        {"name": "x", "workloads": [{"type": "fsync"}]},  # no target, no matrix
        {
            "name": "x",
            "targets": [{"name": "a", "fs": "ext4"}],
            "workloads": [{"type": "fsync"}],
            "repetitions": {"count": "often"},
        },  # count: int or auto
    ],
)
def test_the_schema_refuses_what_the_model_refuses(validator, plan):
    assert list(validator.iter_errors(plan))


def test_every_key_is_described():
    schema = plan_schema()
    missing = [
        f"{name}.{key}"
        for name, model in [("plan", schema), *schema["$defs"].items()]
        for key, prop in model.get("properties", {}).items()
        if not prop.get("description")
    ]
    assert missing == []


def test_plan_schema_prints_it():
    result = CliRunner().invoke(app, ["plan", "schema"], prog_name="pgfsbench")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == plan_schema()


def test_the_plan_reference_page_is_the_generated_one():
    spec = importlib.util.spec_from_file_location(
        "gen_plan_reference", ROOT / "docs" / "gen_plan_reference.py"
    )
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert gen.PAGE.read_text() == gen.render(), (
        "docs/plan-reference.md is out of date: run python docs/gen_plan_reference.py"
    )
