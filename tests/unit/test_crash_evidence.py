"""The durability column measured where it was measured (issue 37): a crash test's
result beside the rule's class, in its sentence, the verdict lines, the exports, and a
recommendation that never picks a target a crash test found unsafe."""

from __future__ import annotations

import json

from pgfsbench.analysis.advice.advise import advise
from pgfsbench.analysis.caveats.crashtest import CrashTest, crash_tests
from pgfsbench.analysis.caveats.durability import (
    MAY_LOSE_COMMITS,
    SAFE,
    UNSAFE,
    durabilities,
    stated,
)
from pgfsbench.analysis.table import comparison_table
from pgfsbench.analysis.verdicts.verdict_lines import verdict_lines
from pgfsbench.formats.json import campaign_data
from pgfsbench.metrics import CRASH_CHECKS, Metric, WorkloadResult
from pgfsbench.store.read import load_campaign
from tests.unit.test_advice import build


def _test(states=200, lost=0, corrupt=0, commits=0, seconds=0.0, **checks) -> CrashTest:
    return CrashTest(states, lost, corrupt, commits, seconds, dict(checks))


def test_none_bad_says_the_bound_the_state_count_gives():
    t = _test(200)
    assert t.level == SAFE
    assert t.sentence() == (
        "crash test: 0 of 200 states lost a commit or were corrupt "
        "(95%: under 1.5% of such power cuts would)"
    )
    assert "under 19%" in _test(16).sentence()


def test_lost_commits_and_corrupt_states_say_how_many_how_long_and_which_check():
    t = _test(200, lost=37, corrupt=4, commits=1200, seconds=1.2, amcheck=3, start=1)
    assert t.level == UNSAFE
    assert t.sentence() == (
        "crash test: 37 of 200 states lost acknowledged commits (up to 1,200 commits, "
        "1.2 s); 4 corrupt (start, amcheck)"
    )
    lost = _test(16, lost=15, commits=1587, seconds=0.202)
    assert lost.level == MAY_LOSE_COMMITS
    assert lost.sentence().endswith("(up to 1,587 commits, 202 ms); none corrupt")
    assert _test(16, corrupt=2, checksums=2).sentence() == (
        "crash test: 0 of 16 states lost an acknowledged commit; 2 corrupt (checksums)"
    )


def _crash(found: dict[str, tuple[int, int, int]]):
    """A crash run per target: (states, states that lost commits, corrupt states)."""

    def add(store):
        for (tid, _name), (states, lost, corrupt) in zip(
            store.conn.execute("SELECT id, name FROM targets ORDER BY position").fetchall(),
            found.values(),
        ):
            run = store.start_run(tid, "crash", {"states": states}, repetition=1)
            metrics = [
                Metric("crash.bad_state_pct", 100.0 * max(lost, corrupt) / states, "%", False),
                Metric("crash.states", states, "states", None),
                Metric("crash.lost_commit_states", lost, "states", False),
                Metric("crash.corrupt_states", corrupt, "states", False),
                Metric("crash.lost_commits_max", 40 * lost, "commits", False),
                Metric("crash.lost_seconds_max", 0.5 if lost else 0.0, "s", False),
                *(
                    Metric(f"crash.corrupt.{c}", corrupt if c == "amcheck" else 0, "states", False)
                    for c in CRASH_CHECKS
                ),
            ]
            store.add_result(run, tid, WorkloadResult(metrics))
            store.finish_run(run, "ok")

    return add


def test_the_recommendation_never_picks_a_target_a_crash_test_found_unsafe(tmp_path):
    # xfs is ahead of ext4 on everything and safe by rule, but its crash test corrupted.
    results = build(
        tmp_path / "r",
        targets=("ext4", "xfs"),
        extra=_crash({"ext4": (100, 0, 0), "xfs": (100, 3, 2)}),
    )
    campaign = load_campaign(results)
    assert set(crash_tests(campaign)) == {"ext4", "xfs"}
    classes = durabilities(campaign)
    xfs = classes["xfs"]
    assert xfs is not None and xfs.level == SAFE and xfs.worst == UNSAFE  # the rule kept
    assert stated("xfs", xfs).startswith(
        "xfs is not crash-safe: crash test: 3 of 100 states lost acknowledged commits"
    )
    assert "by rule it is crash-safe" in stated("xfs", xfs)
    a = advise(campaign)
    assert a.target == "ext4"
    [u] = a.unsafe
    assert u.target == "xfs" and "2 corrupt (amcheck)" in u.warning
    lines = verdict_lines(comparison_table(campaign), classes)
    fsync = next(v for v in lines if v.workload == "fsync")
    assert fsync.durability == {"ext4": SAFE, "xfs": SAFE}  # the rule's class, beside ...
    assert fsync.crash_tests["ext4"].startswith("crash test: 0 of 100 states")  # ... the test
    assert fsync.warning.startswith("xfs is not crash-safe: crash test:")  # xfs leads fsync
    doc = json.loads(json.dumps(campaign_data(campaign), default=str))
    by_name = {t["name"]: t["durability"] for t in doc["targets"]}
    assert by_name["xfs"]["level"] == SAFE and by_name["xfs"]["measured_level"] == UNSAFE
    assert by_name["ext4"]["crash_test"].startswith("crash test: 0 of 100")
    [verdict] = [v for v in doc["comparison"]["verdicts"] if v["workload"] == "fsync"]
    assert set(verdict["crash_tests"]) == {"ext4", "xfs"}


def test_without_a_crash_test_nothing_changes(tmp_path):
    campaign = load_campaign(build(tmp_path / "r", targets=("ext4", "xfs")))
    assert crash_tests(campaign) == {}
    assert all(d is not None and d.crash_test is None for d in durabilities(campaign).values())
    assert advise(campaign).target == "xfs"
