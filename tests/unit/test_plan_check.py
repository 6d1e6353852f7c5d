"""`pgfsbench plan check` on every example and built-in plan, and `plans --show`."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pgfsbench.plan.load import builtin_names

EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.toml"))


def pgfsbench(*args):
    return subprocess.run(
        [sys.executable, "-m", "pgfsbench", *args], capture_output=True, text=True
    )


@pytest.mark.parametrize("plan", EXAMPLES, ids=lambda p: p.name)
def test_every_example_checks(plan):
    result = pgfsbench("plan", "check", str(plan), "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["targets"] and info["runs_per_target"] and info["estimated_seconds"] > 0
    assert info["problems"] == []


def test_examples_cover_the_studies_variants():
    names = {p.stem for p in EXAMPLES}
    assert {
        "ext4-vs-xfs-tuned",
        "btrfs-tuning",
        "ext4-writeback",
        "dirty-sysctls",
    } <= names
    info = json.loads(
        pgfsbench(
            "plan", "check", str(EXAMPLES[0].parent / "ext4-vs-xfs-tuned.toml"), "--json"
        ).stdout
    )
    xfs = next(t for t in info["targets"] if t["fs"] == "xfs")
    assert xfs["log_size"] == "256M" and "logbsize=262144" in xfs["mount"]
    assert xfs["sysctls"] == {"vm.dirty_background_bytes": 102400000, "vm.dirty_ratio": 80}
    assert xfs["image_bytes"] == (6 * 1024 + 256) * 2**20


def test_builtin_plans_check_and_show():
    for name in builtin_names():
        assert pgfsbench("plan", "check", name).returncode == 0
    shown = pgfsbench("plans", "--show", "smoke").stdout
    assert shown.startswith('name = "smoke"')


def test_a_plan_too_big_for_its_image_warns(tmp_path):
    plan = tmp_path / "big.toml"
    plan.write_text(
        'name = "big"\n[[targets]]\nname = "a"\nfs = "ext4"\nsize = "512M"\n'
        '[[workloads]]\ntype = "seqwrite"\nsize = "1G"\n'
    )
    result = pgfsbench("plan", "check", str(plan))
    assert result.returncode == 0
    assert "give it a larger size" in result.stderr


def test_a_broken_plan_fails_check_with_exit_2(tmp_path):
    plan = tmp_path / "bad.toml"
    plan.write_text(
        'name = "bad"\n[[targets]]\nname = "a"\nfs = "xfs"\nmount = "noatme"\n'
        '[[workloads]]\ntype = "fsync"\n'
    )
    result = pgfsbench("plan", "check", str(plan))
    assert result.returncode == 2
    assert "targets.a.mount: xfs has no mount option 'noatme'" in result.stderr


def test_estimate_counts_rounds_fresh_reused_and_auto() -> None:
    from pgfsbench.plan.check import describe
    from pgfsbench.plan.model import Plan

    def plan(**reps):
        return Plan.model_validate(
            {
                "name": "p",
                "repetitions": reps,
                "targets": [{"name": "a", "fs": "ext4"}, {"name": "b", "fs": "xfs"}],
                "workloads": [
                    {"type": "pgbench-init", "scale": 4, "repetitions": 1},
                    {"type": "pgbench", "duration": 10},
                ],
            }
        )

    once = describe(plan(count=1))
    fresh = describe(plan(count=3))
    reused = describe(plan(count=3, fresh=False, settle=False))
    settled = describe(plan(count=3, fresh=False))
    auto = describe(plan(count="auto", min=3, max=6))
    assert [r["repetitions"] for r in fresh["runs_per_target"]] == [1, 3]
    assert fresh["total_runs"] == 8 and once["total_runs"] == 4
    # fresh rounds pay setup and the load again; reused ones only restart PostgreSQL
    assert fresh["estimated_seconds"] > reused["estimated_seconds"] > once["estimated_seconds"]
    # the settling round: one more pgbench per target (the load counts once, in it)
    assert settled["budget"]["settling_round"] and not reused["budget"]["settling_round"]
    assert settled["total_runs"] == reused["total_runs"] + 2 == 10
    assert [r["settling"] for r in settled["runs_per_target"]] == [False, True]
    assert settled["estimated_seconds"] > reused["estimated_seconds"]
    assert auto["estimated_seconds"] == fresh["estimated_seconds"]  # auto at its min = 3
    assert auto["estimated_seconds_max"] > auto["estimated_seconds"]
    assert auto["budget"] == {
        "most_rounds": 6,
        "settling_round": False,
        "first_look": 3,
        "looks": [3, 6],
        "max_minutes": 60,
    }
    # the time budget caps the longest: rounds start until max_minutes has passed
    capped = describe(plan(count="auto", min=3, max=6, max_minutes=1))
    one_round = auto["estimated_seconds"] / 3
    assert one_round < 60 < 2 * one_round  # so a second round starts, and no third
    assert capped["estimated_seconds"] == capped["estimated_seconds_max"] == 2 * one_round


def test_check_notes_that_ci_width_is_ignored(tmp_path) -> None:
    from pgfsbench.plan.check import describe
    from pgfsbench.plan.model import Plan

    plan = Plan.model_validate(
        {
            "name": "p",
            "repetitions": {"count": "auto", "ci_width": 0.03},
            "targets": [{"name": "a", "fs": "ext4"}],
            "workloads": [{"type": "fsync"}],
        }
    )
    [note] = describe(plan)["notes"]
    assert "ci_width is ignored" in note


def test_the_lvm_stripe_example_computes_the_studys_stripe_options():
    info = json.loads(
        pgfsbench("plan", "check", str(EXAMPLES[0].parent / "lvm-stripe.toml"), "--json").stdout
    )
    by_name = {t["name"]: t for t in info["targets"]}
    assert by_name["ext4-stripe"]["stripe_geometry"]["computed_options"] == [
        "stride=2",
        "stripe-width=6",
    ]
    assert by_name["xfs-stripe"]["stripe_geometry"]["computed_options"] == ["sunit=16", "swidth=48"]
    assert by_name["xfs-stripe"]["mkfs"] == [
        "-b",
        "size=4096",
        "-d",
        "agcount=8,sunit=16,swidth=48",
    ]
    assert by_name["ext4-stripe"]["image_bytes"] == 3 * 2 * 2**30
    from pgfsbench.provision.lvm import unavailable_reason

    skipped = [n for n in info["notes"] if "this machine would skip it" in n]
    assert len(skipped) == (2 if unavailable_reason() else 0)


def test_stripe_options_on_one_image_are_warned_about(tmp_path):
    plan = tmp_path / "p.toml"
    plan.write_text(
        'name = "p"\n[[targets]]\nname = "x"\nfs = "xfs"\n'
        'mkfs = ["-d", "sunit=16,swidth=48"]\n[[workloads]]\ntype = "fsync"\n'
    )
    info = json.loads(pgfsbench("plan", "check", str(plan), "--json").stdout)
    assert any("does nothing without a stripe" in p for p in info["problems"])
