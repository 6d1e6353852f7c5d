import re

import pytest

from pgfsbench.analysis.stats.stored_design import design_for
from pgfsbench.errors import UserError
from pgfsbench.plan.load import builtin_names, load_plan, parse_plan
from pgfsbench.units import size_to_mb

GOOD = """
name = "p"
[[targets]]
name = "a"
fs = "ext4"
[[workloads]]
type = "fsync"
"""


def test_builtin_plans_load():
    assert {
        "quick",
        "smoke",
        "seed-xfs-vs-ext4",
        "seed-fsync",
        "seed-client-scaling",
        "seed-parallel",
        "seed-seqwrite",
    } <= set(builtin_names())
    for name in builtin_names():
        plan = load_plan(name)
        assert plan.name == name and plan.description
    for name in ("quick", "smoke"):
        assert [t.fs for t in load_plan(name).targets] == ["ext4", "xfs", "btrfs"]


@pytest.mark.parametrize(
    "name",
    [
        "quick",
        "thorough",
        "seed-xfs-vs-ext4",
        "seed-fsync",
        "seed-client-scaling",
        "seed-parallel",
        "seed-seqwrite",
    ],
)
def test_answering_plans_repeat_in_interleaved_rounds_and_state_their_budget(name):
    plan = load_plan(name)
    reps = plan.repetitions
    # One run per target cannot decide anything: these plans repeat until decided.
    assert reps.count == "auto" and reps.max >= 6
    assert reps.max_minutes <= (30 if name == "thorough" else 25)
    assert f"at most {reps.max} rounds or {reps.max_minutes:g} minutes" in plan.description


def test_the_xfs_vs_ext4_plan_has_the_studys_variants():
    from pgfsbench.analysis.caveats.durability import UNSAFE, classify

    plan = load_plan("seed-xfs-vs-ext4")
    targets = {t.name: t for t in plan.targets}
    assert targets["xfs"].log_size is not None  # the study's external XFS log device
    for t in targets.values():  # the study's dirty-page sysctls, on every target
        assert t.sysctls == {"vm.dirty_background_bytes": 102400000, "vm.dirty_ratio": 80}
    unsafe = targets["ext4-nobarrier"]
    assert classify(unsafe.fs, unsafe.mount.split(","), {}).level == UNSAFE
    assert targets["ext4"].mkfs == unsafe.mkfs  # the same filesystem, barriers aside


def test_a_client_sweep_expands_into_one_measurement_per_count():
    plan = load_plan("seed-client-scaling")
    runs = [w for w in plan.measurements() if w.type == "pgbench"]
    assert [(w.clients, w.jobs, w.label()) for w in runs] == [
        (1, 1, "clients=1"),
        (2, 2, "clients=2"),
        (4, 4, "clients=4"),
        (8, 8, "clients=8"),
        (16, 16, "clients=16"),
    ]
    assert plan.server_settings()["max_connections"] == 26


def test_workloads_raise_server_limits_but_never_lower_them():
    text = GOOD + '[[workloads]]\ntype = "parallel-scan"\nworkers = [0, 6]\n'
    settings = parse_plan(text, "t").server_settings()
    assert (settings["max_worker_processes"], settings["max_parallel_workers"]) == (14, 8)
    text += "[postgres.settings]\nmax_worker_processes = 64\n"
    assert parse_plan(text, "t").server_settings()["max_worker_processes"] == 64


def test_threads_are_capped_at_clients():
    text = GOOD + (
        '[[workloads]]\ntype = "pgbench-init"\n[[workloads]]\ntype = "pgbench"\n'
        "clients = [1, 4]\nthreads = 2\n"
    )
    jobs = [w.jobs for w in parse_plan(text, "t").measurements() if w.type == "pgbench"]
    assert jobs == [1, 2]


def test_weights_name_a_type_or_one_measurement():
    text = GOOD + (
        '[[workloads]]\ntype = "pgbench-init"\n[[workloads]]\ntype = "pgbench"\n'
        'clients = [1, 4]\n[verdicts]\nweights = { fsync = 1, "pgbench clients=4" = 3 }\n'
    )
    design = design_for(parse_plan(text, "t").model_dump(mode="json"))
    assert design.weight(("pgbench", "clients=4", "a", "b")) == 3
    assert design.weight(("pgbench", "clients=1", "a", "b")) == 1
    assert design.weight(("fsync", "", "a", "b")) == 1


def test_a_good_plan_gets_defaults():
    plan = parse_plan(GOOD, "t")
    assert plan.targets[0].size_mb == 2048
    assert plan.workloads[0].seconds == 2


@pytest.mark.parametrize(
    "text, expected",
    [
        (GOOD + "colour = 1\n", "colour: unknown key"),
        (GOOD.replace('fs = "ext4"', 'fs = "ntfs"'), "targets.a.fs"),
        (GOOD.replace('fs = "ext4"', 'fs = "ext4"\nsize = "lots"'), "'lots' is not a size"),
        (GOOD + '[[targets]]\nname = "a"\nfs = "xfs"\n', "two targets are named 'a'"),
        (GOOD + '[[workloads]]\ntype = "pgbench"\n', "needs a pgbench-init workload before it"),
        (
            GOOD + '[[workloads]]\ntype = "pgbench-init"\nscale = "big"\n',
            "workloads.1.pgbench-init.scale",
        ),
        (GOOD + '[[workloads]]\ntype = "nope"\n', "workloads.1"),
        (GOOD.replace('name = "a"', 'name = "Has Space"'), "targets.Has Space.name"),
        (GOOD.replace('fs = "ext4"', ""), "set fs (a loop image or device target) or dir"),
        (
            GOOD + '[[workloads]]\ntype = "pgbench-init"\n[[workloads]]\ntype = "pgbench"\n'
            "clients = [0]\n",
            "clients must be between 1 and 1000",
        ),
        (GOOD + '[[workloads]]\ntype = "seqwrite"\nblock_size = "4q"\n', "'4q' is not a size"),
        (GOOD + '[[workloads]]\ntype = "parallel-scan"\nworkers = []\n', "workers"),
        ("name = [", "not valid TOML"),
        (GOOD + '[repetitions]\ncount = "many"\n', "repetitions.count"),
        (
            GOOD + '[repetitions]\ncount = "auto"\nmin = 9\nmax = 4\n',
            "min (9) is larger than max (4)",
        ),
        (GOOD + '[verdicts]\nbaseline = "zzz"\n', "verdicts.baseline 'zzz' is not a target"),
        (
            GOOD + "[verdicts]\nweights = { pgbench = 3 }\n",
            "verdicts.weights names 'pgbench', which this plan does not measure "
            "(its measurements: 'fsync')",
        ),
        (GOOD + "[verdicts]\nweights = { fsync = 0 }\n", "greater than 0"),
        (GOOD.replace('fs = "ext4"', 'fs = "ext4"\nthrottle = {}'), "throttle needs at least one"),
        (
            GOOD.replace('fs = "ext4"', 'fs = "ext4"\nthrottle = { read_bps = "0" }'),
            "must be larger than zero",
        ),
        (
            GOOD + '[[workloads]]\ntype = "pgbench-init"\n[[workloads]]\ntype = "pgbench"\n'
            "duration = 10\nwarmup = 10\n",
            "must be shorter than duration",
        ),
        (
            GOOD + '[[workloads]]\ntype = "pgbench-init"\n[[workloads]]\ntype = "pgbench"\n'
            "clients = [4, 4]\n",
            "two pgbench workloads measure the same thing (clients=4)",
        ),
        (
            GOOD + '[[workloads]]\ntype = "fsync"\nrepetitions = 1\n',
            "two fsync workloads measure the same thing",
        ),
    ],
)
def test_plan_errors_name_the_key(text, expected):
    with pytest.raises(UserError) as info:
        parse_plan(text, "bad.toml")
    assert "bad.toml" in str(info.value)
    assert expected in str(info.value)


def test_missing_plan_file():
    with pytest.raises(UserError, match="not a built-in plan"):
        load_plan("/nonexistent/plan.toml")


@pytest.mark.parametrize(
    "text, mb", [("512M", 512), ("2G", 2048), ("1.5GiB", 1536), ("1T", 1048576), (300, 300)]
)
def test_sizes(text, mb):
    assert size_to_mb(text) == mb


def test_two_different_workloads_of_one_type_get_distinct_labels():
    plan = parse_plan(
        GOOD + '[[workloads]]\ntype = "parallel-scan"\nrows = 10000\n'
        '[[workloads]]\ntype = "parallel-scan"\nrows = 90000\ntag = "big"\n'
        '[[workloads]]\ntype = "pgbench-init"\n'
        '[[workloads]]\ntype = "pgbench"\nclients = [1, 2]\n'
        '[[workloads]]\ntype = "pgbench"\nclients = 2\nscript = "/x/two.sql"\n',
        "ok.toml",
    )
    labels = [(m.type, m.label()) for m in plan.measurements() if m.type != "fsync"]
    # the differing parameters join the label, so their numbers are never pooled
    assert labels == [
        ("parallel-scan", ""),
        ("parallel-scan", "big"),  # a tag suffices
        ("pgbench-init", ""),
        ("pgbench", "clients=1"),
        ("pgbench", "clients=2"),
        ("pgbench", "clients=2 script=two.sql"),
    ]
    untagged = parse_plan(
        GOOD + '[[workloads]]\ntype = "parallel-scan"\nrows = 10000\n'
        '[[workloads]]\ntype = "parallel-scan"\nrows = 90000\n',
        "ok.toml",
    )
    assert [m.label() for m in untagged.measurements()][1:] == ["rows=10000", "rows=90000"]


def test_plans_lists_every_builtin_in_a_compact_table_at_80_columns():
    import os
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "pgfsbench", "plans"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": "80"},
    ).stdout
    lines = out.splitlines()
    assert lines[0].split() == ["plan", "study", "targets", "estimated"]
    assert max(len(ln) for ln in lines) <= 80
    rows = {ln.split()[0]: ln for ln in lines[1 : len(builtin_names()) + 1]}
    assert sorted(rows) == sorted(builtin_names())
    assert "XFS-vs-ext4" in rows["seed-xfs-vs-ext4"] and "ext4, xfs, btrfs" in rows["quick"]
    assert " 2 to 2 " not in out and re.search(r"\d+ to \d+ min|about \d+ min", rows["quick"])


@pytest.mark.parametrize(
    "text, said",
    [
        (
            'name = "p"\n[[target]]\nname = "a"\nfs = "ext4"\n[[workloads]]\ntype = "fsync"\n',
            "target: unknown key (did you mean 'targets'?)",
        ),
        (
            'name = "p"\n[[targets]]\nname = "a"\nfs = "ext4"\nmout = "noatime"\n'
            '[[workloads]]\ntype = "fsync"\n',
            "targets.a.mout: unknown key (did you mean 'mount'?)",
        ),
        (
            'name = "p"\n[[targets]]\nname = "a"\nfs = "ext4"\n[[workloads]]\ntype = "fsync"\n'
            "secnds = 3\n",
            "secnds: unknown key (did you mean 'seconds'?)",
        ),
    ],
)
def test_an_unknown_key_gets_the_nearest_known_one_in_plain_words(text, said):
    with pytest.raises(UserError) as e:
        parse_plan(text, "t.toml")
    assert said in str(e.value) and "List should have" not in str(e.value)


def test_a_misspelt_plan_name_gets_the_nearest_built_in_one():
    with pytest.raises(UserError, match="no plan 'quik': did you mean 'quick'"):
        load_plan("quik")
