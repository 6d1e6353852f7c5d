"""`compare --fail-if-worse`: the gate reads compare's decisions, never a point estimate.

Stored results (written by Store, read back like any results directory): a baseline and
contenders whose per-round tps are the baseline's times a known factor with a little
round-to-round jitter, measured in the same rounds (paired); and two directories
compared across campaigns (unpaired).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pgfsbench import exits
from pgfsbench.analysis.table import comparison_table
from pgfsbench.cli import app
from pgfsbench.compare.gate import beyond, gate, parse_threshold
from pgfsbench.errors import UserError
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.store.db import Store
from pgfsbench.store.read import load_campaign

ROUNDS = 8
DRIFT = [1000, 1030, 990, 1010, 1045, 980, 1020, 1005]  # the machine, round by round
JITTER = [1.004, 0.997, 1.002, 0.996, 1.003, 0.998, 1.001, 0.999]  # each target's own
# contender → its tps relative to the baseline in every round
FACTORS = {"slow": 0.85, "slightly": 0.96, "same": 1.0, "fast": 1.15}


def _store(
    results: Path, campaign_id: str, targets: dict[str, float], rounds: int, noisy: bool = False
) -> Path:
    store = Store.create(results)
    store.start_campaign(campaign_id, "gate", {"name": "gate"}, {"kernel": "6.8.0"}, "0.1.0")
    for pos, (name, factor) in enumerate(targets.items()):
        tid = store.add_target(name, pos, "loop", "ext4", {"size": "1G"})
        store.set_target(
            tid, "ok", provenance={"kind": "loop", "fs": "ext4", "effective_mount_options": ["rw"]}
        )
        for r in range(1, rounds + 1):
            jitter = JITTER[(r + pos * 3) % len(JITTER)]
            if noisy:  # wild swings: nothing can be decided
                jitter = 1.6 if (r + pos) % 2 else 0.6
            tps = DRIFT[r - 1] * factor * jitter
            run = store.start_run(tid, "pgbench", {"type": "pgbench", "clients": 4}, repetition=r)
            store.add_result(
                run,
                tid,
                WorkloadResult(
                    [
                        Metric("pgbench.tps", tps, "tx/s", True),
                        Metric("pgbench.latency_avg_ms", 4000 / tps, "ms", False),
                        Metric("pgbench.transactions", tps * 3, "tx", None),
                    ]
                ),
            )
    store.end_campaign("ok")
    store.close()
    return results


@pytest.fixture(scope="module")
def paired(tmp_path_factory) -> Path:
    return _store(
        tmp_path_factory.mktemp("gate") / "paired", "c-paired", {"base": 1.0, **FACTORS}, ROUNDS
    )


def cli(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


@pytest.mark.parametrize(
    "text,value",
    [("5%", 0.05), ("5", 0.05), ("0", 0.0), ("2.5 %", 0.025), (".5%", 0.005), ("1000%", 10.0)],
)
def test_thresholds_are_percentages(text, value) -> None:
    assert parse_threshold(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["-5%", "five", "5%%", "", "1e3", "nan", "1001%", "0.05x"])
def test_a_bad_threshold_is_a_user_error(text) -> None:
    with pytest.raises(UserError, match="--fail-if-worse takes a percentage"):
        parse_threshold(text)


def test_paired_gate_sorts_each_contender_by_its_decision(paired) -> None:
    table = comparison_table(load_campaign(paired), "base")
    rows = [r for r in table.rows if r.metric == "pgbench.tps"]
    verdicts = {t: c.finding.outcome for t, c in rows[0].cells.items() if c.finding}
    assert verdicts == {
        "slow": "worse",
        "slightly": "worse",
        "same": "equivalent",
        "fast": "better",
    }
    assert all(c.finding.paired for t, c in rows[0].cells.items() if t != "base")

    at5 = gate(table, rows, 0.05)
    assert [f.target for f in at5.failed] == ["slow"]  # CI about [0.84, 0.86]
    assert [f.target for f in at5.within] == ["slightly"]  # worse, but not by 5%
    assert not at5.ok and at5.checked == 4 and not at5.inconclusive
    # Zero: any worse mark fails, still never 'same' (equivalent) or 'fast' (better).
    assert sorted(f.target for f in gate(table, rows, 0.0).failed) == ["slightly", "slow"]
    # 20%: slow is worse, but its CI does not show more than 20%.
    at20 = gate(table, rows, 0.20)
    assert at20.ok and [f.target for f in at20.within] == ["slow", "slightly"]


def test_the_threshold_follows_the_metric_direction(paired) -> None:
    table = comparison_table(load_campaign(paired), "base")
    [latency] = [r for r in table.rows if r.metric == "pgbench.latency_avg_ms"]
    slow = latency.cells["slow"]
    assert slow.finding.outcome == "worse" and slow.finding.ratio > 1.15  # latency is higher
    assert beyond(slow.finding, False, 0.05) and not beyond(slow.finding, False, 0.25)
    assert latency.cells["fast"].finding.outcome == "better"
    assert [f.target for f in gate(table, [latency], 0.05).failed] == ["slow"]
    # No direction (a count): "different" at most, never worse.
    [count] = [r for r in table.rows if r.metric == "pgbench.transactions"]
    assert gate(table, [count], 0.0).ok


def test_the_cli_exits_4_naming_what_failed(paired) -> None:
    result = cli("compare", str(paired), "--baseline", "base", "--fail-if-worse", "5%")
    assert result.exit_code == exits.WORSE == 4, result.output
    assert "pgbench.tps" in result.stdout  # the comparison is written in full first
    assert "--fail-if-worse 5%: 1 significantly worse than the baseline base" in result.stderr
    assert "pgbench pgbench.tps: slow vs base: −15% [" in result.stderr
    assert "not failing: 1 worse but not shown to be beyond 5%" in result.stderr
    assert "slightly" in result.stderr and "Traceback" not in result.output


def test_the_cli_passes_when_the_baseline_is_the_slow_one(paired) -> None:
    result = cli(
        "compare", str(paired), "--baseline", "slow", "--fail-if-worse", "5%", "--format", "json"
    )
    assert result.exit_code == exits.OK, result.output
    assert result.stdout.lstrip().startswith("{")  # stdout stays machine-readable
    assert (
        "no contender is significantly worse than the baseline slow by more than 5%"
        in result.stderr
    )


def test_the_gate_covers_the_rows_shown(paired) -> None:
    # --metric picks the rows: a latency regression fails only when latency is shown.
    assert (
        cli(
            "compare",
            str(paired),
            "--baseline",
            "base",
            "--metric",
            "pgbench.transactions",
            "--fail-if-worse",
            "0",
        ).exit_code
        == exits.OK
    )
    assert (
        cli(
            "compare",
            str(paired),
            "--baseline",
            "base",
            "--metric",
            "pgbench.latency_*",
            "--fail-if-worse",
            "5",
        ).exit_code
        == exits.WORSE
    )


def test_without_the_option_worse_still_exits_0(paired) -> None:
    result = cli("compare", str(paired), "--baseline", "base")
    assert result.exit_code == exits.OK and "fail-if-worse" not in result.output


def test_a_bad_threshold_exits_2_in_one_line(paired) -> None:
    result = cli("compare", str(paired), "--fail-if-worse", "lots")
    assert result.exit_code == exits.USAGE, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_inconclusive_never_fails(tmp_path) -> None:
    results = _store(tmp_path / "noisy", "c-noisy", {"base": 1.0, "slow": 0.9}, 4, noisy=True)
    result = cli("compare", str(results), "--fail-if-worse", "0")
    assert result.exit_code == exits.OK, result.output
    assert "not failing: 1 inconclusive" in result.stderr


def test_single_runs_never_fail_and_say_so(tmp_path) -> None:
    results = _store(tmp_path / "once", "c-once", {"base": 1.0, "slow": 0.5}, 1)
    result = cli("compare", str(results), "--fail-if-worse", "5%")
    assert result.exit_code == exits.OK, result.output
    assert "without a verdict (one run each, or no data)" in result.stderr


def test_unpaired_across_directories(tmp_path) -> None:
    """Two campaigns' rounds do not correspond: compare's unpaired route decides."""
    before = _store(tmp_path / "before", "c-before", {"ext4": 1.0}, ROUNDS)
    after = _store(tmp_path / "after", "c-after", {"ext4": 0.8}, ROUNDS)
    result = cli("compare", str(before), str(after), "--fail-if-worse", "5%")
    assert result.exit_code == exits.WORSE, result.output
    assert "pgbench ext4 pgbench.tps: after vs before: −20% [" in result.stderr
    assert "worse (8 and 8 runs)" in result.stderr
    # The other way round it is better: nothing fails.
    assert cli("compare", str(after), str(before), "--fail-if-worse", "5%").exit_code == 0
