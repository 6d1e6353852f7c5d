"""Plans for the integration tests, built from a few keyword arguments instead of a TOML
text repeated in every file: ``plan_toml(name, targets, workloads, repetitions=...,
settings=...)`` writes the file a user would, and ``run_campaign(directory, ...)`` runs it.

The pieces most campaigns share are named once here: a small loop target (ext4 or any
filesystem), the pgbench load (in every round, or done once per target), a short TPC-B
run, and interleaved rounds that reuse the loaded cluster."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import tomli_w

from tests.integration.conftest import run_plan

# PostgreSQL's shared_buffers in every pgbench campaign here: tiny loop images, quick start.
SMALL_BUFFERS = {"shared_buffers": "32MB"}
# The pgbench tables loaded (scale 1) in every round that runs the load.
LOAD = {"type": "pgbench-init", "scale": 1}
# The pgbench tables loaded once per target (scale 1), then reused by every round.
LOAD_ONCE = {**LOAD, "repetitions": 1}
# A server that sleeps 10 ms before every WAL flush: each group commit waits that long.
COMMIT_DELAY = {"settings": {"commit_delay": 10000, "commit_siblings": 0}}


def loop(name: str, fs: str, size: str = "512M", **fields: Any) -> dict[str, Any]:
    """A loop target: an image of ``size`` made ``fs``, with any other target fields."""
    return {"name": name, "fs": fs, "size": size, **fields}


def ext4(name: str, size: str = "512M", **fields: Any) -> dict[str, Any]:
    """An ext4 loop target of ``size``, with any other target fields."""
    return loop(name, "ext4", size, **fields)


def pgbench(clients: int | list[int], duration: int, **fields: Any) -> dict[str, Any]:
    """A TPC-B pgbench run of ``duration`` seconds at ``clients`` clients."""
    return {"type": "pgbench", "clients": clients, "duration": duration, **fields}


def rounds(count: int | str, order: str = "random", **fields: Any) -> dict[str, Any]:
    """``[repetitions]``: ``count`` interleaved rounds reusing each target's cluster."""
    return {"count": count, "order": order, "fresh": False, **fields}


def plan_toml(
    name: str,
    targets: list[dict[str, Any]],
    workloads: list[dict[str, Any]],
    *,
    description: str | None = None,
    repetitions: dict[str, Any] | None = None,
    verdicts: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
    mixins: dict[str, dict[str, Any]] | None = None,
) -> str:
    """The plan file's text: ``settings`` are PostgreSQL's for every target."""
    doc: dict[str, Any] = {"name": name}
    for key, value in (
        ("description", description),
        ("repetitions", repetitions),
        ("verdicts", verdicts),
        ("postgres", settings and {"settings": settings}),
        ("mixins", mixins),
    ):
        if value:
            doc[key] = value
    doc["targets"], doc["workloads"] = targets, workloads
    return tomli_w.dumps(doc)


def run_campaign(
    directory: Path, *args: str, **plan: Any
) -> tuple[Path, subprocess.CompletedProcess]:
    """Run the plan ``plan_toml(**plan)`` from ``directory`` with the CLI's ``args``;
    returns (results, run)."""
    return run_plan(directory, plan_toml(**plan), *args)
