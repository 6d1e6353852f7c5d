"""The read side (the plan's vocabulary, store, analysis, render, compare, report, formats)
never imports provisioning, PostgreSQL, the monitors, the campaign, the schedule, the
plan's check and estimate or the workloads' RunContext: reading results must not need (or risk touching) what makes them.
What a fresh process really loads; the static rules are test_import_rules.py's."""

from __future__ import annotations

import json
import subprocess
import sys

READ_SIDE = ("plan", "store", "analysis", "render", "compare", "report", "formats")
# The plan's check and estimate count the schedule's rounds: not the read side.
NOT_READ_SIDE = ("pgfsbench.plan.check", "pgfsbench.plan.check_text", "pgfsbench.plan.estimate")
FORBIDDEN = (
    "pgfsbench.provision",
    "pgfsbench.postgres",
    "pgfsbench.monitor",
    "pgfsbench.campaign",
    "pgfsbench.schedule",
    "pgfsbench.plan.check",
    "pgfsbench.plan.estimate",
    "pgfsbench.workloads.context",
)

# Imports every module of the given packages in a fresh interpreter, then lists what
# got loaded.
WALK = """
import importlib, json, pkgutil, sys
skip = set(sys.argv[1].split(","))
for name in sys.argv[2:]:
    package = importlib.import_module("pgfsbench." + name)
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if module.name not in skip:
            importlib.import_module(module.name)
print(json.dumps(sorted(m for m in sys.modules if m.startswith("pgfsbench"))))
"""


def _forbidden(module: str) -> bool:
    return any(module == f or module.startswith(f + ".") for f in FORBIDDEN)


def test_the_read_side_imports_no_provisioning_or_runner() -> None:
    out = subprocess.run(
        [sys.executable, "-c", WALK, ",".join(NOT_READ_SIDE), *READ_SIDE],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    loaded = json.loads(out)
    assert {
        "pgfsbench.report.html",
        "pgfsbench.formats.markdown",
        "pgfsbench.compare.campaigns",
        "pgfsbench.plan.model",
        "pgfsbench.analysis.caveats.efficiency",
        "pgfsbench.workloads.registry",
    } <= set(loaded)  # the walk reached them
    assert [m for m in loaded if _forbidden(m)] == []


def test_reading_a_paired_campaign_does_not_load_scipy_stats() -> None:
    """scipy.stats costs ~0.7 s at start-up; the paired tests and the bootstrap need only
    scipy.special (the rank tests of unpaired comparisons import it where they run)."""
    probe = (
        "import sys; import pgfsbench.report.terminal, pgfsbench.formats.json, "
        "pgfsbench.analysis.advice.advise; print('scipy.stats' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"


def test_listing_and_checking_plans_imports_no_numpy() -> None:
    """A plan's budget and schedule need no statistics: the paired tests (numpy, ~0.1 s
    of start-up) are imported where a campaign's decisions are replayed."""
    for command in (["plans"], ["plan", "check", "quick"]):
        err = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "pgfsbench", *command],
            capture_output=True,
            text=True,
            check=True,
        ).stderr
        assert [line for line in err.splitlines() if line.endswith(" numpy")] == [], command


def test_the_help_loads_the_output_formats_but_no_analysis() -> None:
    """Every command's --format help loads each output format's module (to list it and
    its description): a format module imports the analysis where it writes, not at the
    top, or every command, --help included, pays for it (~16 ms for durability alone)."""
    probe = """
import contextlib, io, json, sys
sys.argv = ["pgfsbench", "--help"]
from pgfsbench.cli import main
try:
    with contextlib.redirect_stdout(io.StringIO()):
        main()
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.startswith("pgfsbench"))))
"""
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    loaded = json.loads(out)
    assert "pgfsbench.formats.json" in loaded  # the formats were listed
    assert [m for m in loaded if m.startswith("pgfsbench.analysis")] == []
    assert [m for m in loaded if m.startswith("pgfsbench.filesystems")] == []
