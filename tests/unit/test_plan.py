import pytest

from pgfsbench.errors import UserError
from pgfsbench.plan.load import builtin_names, load_plan, parse_plan
from pgfsbench.plan.model import size_to_mb

GOOD = """
name = "p"
[[targets]]
name = "a"
fs = "ext4"
[[workloads]]
type = "fsync"
"""


def test_builtin_plans_load():
    assert {"quick", "smoke"} <= set(builtin_names())
    for name in builtin_names():
        plan = load_plan(name)
        assert plan.name == name
        assert [t.fs for t in plan.targets] == ["ext4", "xfs", "btrfs"]


def test_a_good_plan_gets_defaults():
    plan = parse_plan(GOOD, "t")
    assert plan.targets[0].size_mb == 2048
    assert plan.workloads[0].seconds == 2


@pytest.mark.parametrize("text, expected", [
    (GOOD + "colour = 1\n", "colour: unknown key"),
    (GOOD.replace('fs = "ext4"', 'fs = "ntfs"'), "targets.0.fs"),
    (GOOD.replace('fs = "ext4"', 'fs = "ext4"\nsize = "lots"'), "'lots' is not a size"),
    (GOOD + '[[targets]]\nname = "a"\nfs = "xfs"\n', "two targets are named 'a'"),
    (GOOD + '[[workloads]]\ntype = "pgbench"\n', "needs a pgbench-init workload before it"),
    (GOOD + '[[workloads]]\ntype = "pgbench-init"\nscale = "big"\n', "workloads.1.pgbench-init.scale"),
    (GOOD + '[[workloads]]\ntype = "nope"\n', "workloads.1"),
    (GOOD.replace('name = "a"', 'name = "Has Space"'), "targets.0.name"),
    (GOOD.replace('fs = "ext4"', ''), "set fs (a loop image target) or dir"),
    ("name = [", "not valid TOML"),
])
def test_plan_errors_name_the_key(text, expected):
    with pytest.raises(UserError) as info:
        parse_plan(text, "bad.toml")
    assert "bad.toml" in str(info.value)
    assert expected in str(info.value)


def test_missing_plan_file():
    with pytest.raises(UserError, match="not a built-in plan"):
        load_plan("/nonexistent/plan.toml")


@pytest.mark.parametrize("text, mb", [("512M", 512), ("2G", 2048), ("1.5GiB", 1536),
                                      ("1T", 1048576), (300, 300)])
def test_sizes(text, mb):
    assert size_to_mb(text) == mb
