"""extends, mixins and matrix: targets that share everything but what differs."""

import pytest

from pgfsbench.errors import UserError
from pgfsbench.plan.load import parse_plan

TAIL = '\n[[workloads]]\ntype = "fsync"\n'


def targets(text):
    return {t.name: t for t in parse_plan(text + TAIL, "p.toml").targets}


def test_extends_a_target_and_a_mixin_in_order():
    got = targets('''
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
''')
    assert set(got) == {"xfs", "xfs-tuned"}  # a mixin is never run itself
    tuned = got["xfs-tuned"]
    assert (tuned.fs, tuned.size, tuned.mount) == ("xfs", "1G", "logbsize=262144")
    assert tuned.mkfs == ["-d", "agcount=4"]
    assert tuned.sysctls == {"vm.dirty_background_bytes": 102400000, "vm.dirty_ratio": 80}
    assert tuned.postgres.settings == {"shared_buffers": "64MB", "synchronous_commit": "off"}
    assert got["xfs"].mount == ""


def test_matrix_expands_every_combination_with_generated_names():
    got = targets('''
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
''')
    assert list(got) == ["plain", "ext4-default", "ext4-noatime", "xfs-default", "xfs-noatime",
                         "btrfs-ssd-discard", "btrfs-nodatacow"]
    assert got["xfs-noatime"].mount == "noatime,nodiratime"
    assert got["xfs-noatime"].size == "1G"
    assert got["btrfs-nodatacow"].size == "2G"


@pytest.mark.parametrize("body, words", [
    ('[[targets]]\nname = "a"\nfs = "ext4"\nextends = "b"\n'
     '[[targets]]\nname = "b"\nfs = "ext4"\nextends = "a"\n', "extends cycle: a -> b -> a"),
    ('[[targets]]\nname = "a"\nfs = "ext4"\nextends = "nope"\n',
     "targets.a.extends: no target or mixin named 'nope'"),
    ('[[targets]]\nname = "a"\nfs = "ext4"\nextends = 3\n', "a name or a list of names"),
    ('[[matrix]]\nname = "x-{colour}"\n[matrix.axes]\nfs = ["ext4"]\n',
     "names an axis the matrix lacks"),
    ('[[matrix]]\n[matrix.axes]\n', "give at least one axis"),
    ('[[matrix]]\nshape = 1\n[matrix.axes]\nfs = ["ext4"]\n', "matrix.0.shape: unknown key"),
    ('[[matrix]]\n[matrix.axes]\nfs = ["ext4", "ext4"]\n', "two targets are named 'ext4'"),
    ('[[targets]]\nname = "a"\nfs = "xfs"\nmount = "logbsize=64k,nosuchopt"\n',
     "targets.a.mount: xfs has no mount option 'nosuchopt'"),
    ('[[targets]]\nname = "a"\nfs = "btrfs"\nlog_size = "64M"\n',
     "btrfs cannot use an external log device"),
    ('[[targets]]\nname = "a"\nfs = "ext4"\nsysctls = { dirty = 1 }\n',
     "'dirty' is not a sysctl name"),
    ('[[targets]]\nname = "a"\nfs = "ext4"\ndevice = "/dev/vdb"\ndir = "/srv"\n',
     "either dir or device"),
])
def test_composition_errors_name_the_place(body, words):
    with pytest.raises(UserError) as info:
        parse_plan('name = "p"\n' + body + TAIL, "p.toml")
    assert "p.toml" in str(info.value)
    assert words in str(info.value)


def test_kinds():
    got = targets('name = "p"\n[[targets]]\nname = "d"\nfs = "ext4"\ndevice = "/dev/vdb"\n'
                  '[[targets]]\nname = "s"\ndir = "/srv"\n[[targets]]\nname = "l"\nfs = "xfs"\n')
    assert [t.kind for t in got.values()] == ["device", "dir", "loop"]
