"""extends, mixins and matrix: targets that share everything but what differs."""

import pytest

from pgfsbench.errors import UserError
from pgfsbench.plan.load import parse_plan

TAIL = '\n[[workloads]]\ntype = "fsync"\n'


def targets(text):
    return {t.name: t for t in parse_plan(text + TAIL, "p.toml").targets}


def test_extends_a_target_and_a_mixin_in_order():
    got = targets("""
name = "p"
[mixins.big-log]
mount = "logbsize=262144"
sysctls = { "vm.dirty_ratio" = 80 }
[[targets]]
name = "xfs"
fs = "xfs"
size = "1G"
sysctls = { "vm.dirty_background_bytes" = 102400000 }
postgres.settings = { shared_buffers = "64MB" }
[[targets]]
name = "xfs-tuned"
extends = ["xfs", "big-log"]
mkfs = ["-d", "agcount=4"]
postgres.settings = { synchronous_commit = "off" }
""")
    assert set(got) == {"xfs", "xfs-tuned"}  # a mixin is never run itself
    tuned = got["xfs-tuned"]
    assert (tuned.fs, tuned.size, tuned.mount) == ("xfs", "1G", "logbsize=262144")
    assert tuned.mkfs == ["-d", "agcount=4"]
    assert tuned.sysctls == {"vm.dirty_background_bytes": 102400000, "vm.dirty_ratio": 80}
    assert tuned.postgres.settings == {"shared_buffers": "64MB", "synchronous_commit": "off"}
    assert got["xfs"].mount == ""


def test_matrix_expands_every_combination_with_generated_names():
    got = targets("""
name = "p"
[mixins.base]
size = "1G"
[[targets]]
name = "plain"
fs = "ext4"
[[matrix]]
extends = "base"
[matrix.axes]
fs = ["ext4", "xfs"]
mount = { default = "", noatime = "noatime,nodiratime" }
[[matrix]]
name = "btrfs-{mount}"
[matrix.axes]
fs = ["btrfs"]
mount = ["ssd,discard", "nodatacow"]
""")
    assert list(got) == [
        "plain",
        "ext4-default",
        "ext4-noatime",
        "xfs-default",
        "xfs-noatime",
        "btrfs-ssd-discard",
        "btrfs-nodatacow",
    ]
    assert got["xfs-noatime"].mount == "noatime,nodiratime"
    assert got["xfs-noatime"].size == "1G"
    assert got["btrfs-nodatacow"].size == "2G"


def test_a_setting_is_an_axis_of_its_own():
    """io_method × effective_io_concurrency, each setting its own axis, merged
    into the extended target's settings and sysctls (not replacing them)."""
    got = targets("""
name = "p"
[mixins.base]
size = "1G"
postgres.settings = { shared_buffers = "16MB" }
sysctls = { "vm.dirty_ratio" = 20 }
[[matrix]]
extends = "base"
name = "{fs}-{io_method}-eic{effective_io_concurrency}"
[matrix.axes]
fs = ["ext4", "xfs"]
"postgres.settings.io_method" = ["sync", "worker"]
"postgres.settings.effective_io_concurrency" = [1, 16]
"sysctls.vm.dirty_background_bytes" = { small = 102400000 }
""")
    assert len(got) == 8
    t = got["xfs-worker-eic16"]
    assert t.fs == "xfs" and t.size == "1G"
    assert t.postgres.settings == {
        "shared_buffers": "16MB",
        "io_method": "worker",
        "effective_io_concurrency": 16,
    }
    assert t.sysctls == {"vm.dirty_ratio": 20, "vm.dirty_background_bytes": 102400000}
    assert got["ext4-sync-eic1"].postgres.settings["io_method"] == "sync"


def test_a_dotted_axis_names_a_table_it_may_vary():
    with pytest.raises(UserError) as info:
        targets('name = "p"\n[[matrix]]\n[matrix.axes]\nfs = ["ext4"]\n"mount.noatime" = ["a"]\n')
    assert (
        "matrix.0.axes.mount.noatime: a dotted axis varies one entry of "
        "postgres.settings.NAME" in str(info.value)
    )


@pytest.mark.parametrize(
    "body, words",
    [
        (
            '[[targets]]\nname = "a"\nfs = "ext4"\nextends = "b"\n'
            '[[targets]]\nname = "b"\nfs = "ext4"\nextends = "a"\n',
            "extends cycle: a -> b -> a",
        ),
        (
            '[[targets]]\nname = "a"\nfs = "ext4"\nextends = "nope"\n',
            "targets.a.extends: no target or mixin named 'nope'",
        ),
        ('[[targets]]\nname = "a"\nfs = "ext4"\nextends = 3\n', "a name or a list of names"),
        (
            '[[matrix]]\nname = "x-{colour}"\n[matrix.axes]\nfs = ["ext4"]\n',
            "names an axis the matrix lacks",
        ),
        ("[[matrix]]\n[matrix.axes]\n", "give at least one axis"),
        ('[[matrix]]\nshape = 1\n[matrix.axes]\nfs = ["ext4"]\n', "matrix.0.shape: unknown key"),
        ('[[matrix]]\n[matrix.axes]\nfs = ["ext4", "ext4"]\n', "two targets are named 'ext4'"),
        (
            '[[targets]]\nname = "a"\nfs = "xfs"\nmount = "logbsize=64k,nosuchopt"\n',
            "targets.a.mount: xfs has no mount option 'nosuchopt'",
        ),
        (
            '[[targets]]\nname = "a"\nfs = "btrfs"\nlog_size = "64M"\n',
            "btrfs cannot use an external log device",
        ),
        (
            '[[targets]]\nname = "a"\nfs = "ext4"\nsysctls = { dirty = 1 }\n',
            "'dirty' is not a sysctl name",
        ),
        (
            '[[targets]]\nname = "a"\nfs = "ext4"\ndevice = "/dev/vdb"\ndir = "/srv"\n',
            "either dir or device",
        ),
    ],
)
def test_composition_errors_name_the_place(body, words):
    with pytest.raises(UserError) as info:
        parse_plan('name = "p"\n' + body + TAIL, "p.toml")
    assert "p.toml" in str(info.value)
    assert words in str(info.value)


def test_kinds():
    got = targets(
        'name = "p"\n[[targets]]\nname = "d"\nfs = "ext4"\ndevice = "/dev/vdb"\n'
        '[[targets]]\nname = "s"\ndir = "/srv"\n[[targets]]\nname = "l"\nfs = "xfs"\n'
    )
    assert [t.kind for t in got.values()] == ["device", "dir", "loop"]
