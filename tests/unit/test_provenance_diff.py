"""provenance_diff: only what is not the same on every target, as dotted keys."""

from __future__ import annotations

from pgfsbench.analysis.caveats.diff import DiffRow, provenance_diff, target_keys
from pgfsbench.store.read import StoredTarget


def _spec(name: str, fs: str = "xfs", **over) -> dict:
    # What Target.model_dump(mode="json") stores, defaults included.
    spec = {
        "name": name,
        "fs": fs,
        "size": "2G",
        "mkfs": [],
        "mount": "",
        "dir": None,
        "device": None,
        "log_size": None,
        "direct_io": True,
        "sysctls": {},
        "queue": {},
        "postgres": {"settings": {}},
        "pg_bin": None,
    }
    spec.update(over)
    return spec


def _prov(fs: str = "xfs", loop: int = 3, **over) -> dict:
    geometry = (
        {"meta-data.agcount": 4, "data.sunit": 0, "log.internal": True}
        if fs == "xfs"
        else {"block_size": 4096, "raid_stride": 2, "journal": "internal"}
    )
    prov = {
        "kind": "loop",
        "fs": fs,
        "device": f"/dev/loop{loop}",
        "mounted_fs_type": fs,
        "mount_point": f"/var/tmp/pgfsbench/t{loop}/mnt",
        "effective_mount_options": ["rw", "relatime", "inode64", "logbufs=8", "logbsize=32k"],
        "geometry": {"tool": ["xfs_info", "/mnt"], "facts": geometry, "raw": "..."},
        "device_facts": {
            "device": f"/dev/loop{loop}",
            "name": f"loop{loop}",
            "dev": f"7:{loop}",
            "size_bytes": 2 * 2**30,
            "rotational": True,
            "scheduler": "none",
            "loop_backing_file": f"/var/tmp/pgfsbench/t{loop}/image.img",
            "loop_dio": True,
        },
        "backing_device": {
            "path": f"/var/tmp/pgfsbench/t{loop}/image.img",
            "device": "/dev/vda",
            "name": "vda",
            "scheduler": "mq-deadline",
            "write_cache": "write back",
        },
        "sysctls": {"vm.dirty_ratio": 20, "vm.dirty_background_ratio": 10},
        "postgres_version": "18.6",
        "postgres_settings": {
            "port": str(5400 + loop),
            "unix_socket_directories": f"/tmp/pgfsb-{loop}",
            "shared_buffers": "16384 8kB",
            "max_connections": "20",
        },
    }
    prov.update(over)
    return prov


def _target(
    pos: int, name: str, spec: dict, prov: dict, fs: str = "xfs", status: str = "ok"
) -> StoredTarget:
    return StoredTarget(pos + 1, name, pos, "loop", fs, status, None, spec, prov)


def _keys(rows: list[DiffRow]) -> list[str]:
    return [r.key for r in rows]


def test_identical_targets_have_no_differences_despite_loop_numbers_ports_and_paths() -> None:
    a = _target(0, "a", _spec("a"), _prov(loop=3))
    b = _target(1, "b", _spec("b"), _prov(loop=7))
    assert provenance_diff([a, b]) == []


def test_xfs_logbsize_and_external_log() -> None:
    a = _target(0, "xfs-small-log", _spec("xfs-small-log", mount="logbsize=32k"), _prov(loop=3))
    b_prov = _prov(loop=5)
    b_prov["effective_mount_options"] = [
        "rw",
        "relatime",
        "inode64",
        "logbufs=8",
        "logbsize=256k",
        "logdev=/dev/loop6",
    ]
    b_prov["geometry"]["facts"] = {
        "meta-data.agcount": 4,
        "data.sunit": 0,
        "log.internal": False,
        "log.device": "/dev/loop6",
    }
    b = _target(
        1, "xfs-ext-log", _spec("xfs-ext-log", mount="logbsize=256k", log_size="64M"), b_prov
    )
    rows = provenance_diff([a, b])
    assert _keys(rows) == [
        "plan.mount",
        "plan.log_size",
        "mount.logbsize",
        "mount.logdev",
        "geometry.log.internal",
        "geometry.log.device",
    ]
    by_key = {r.key: r.values for r in rows}
    assert by_key["mount.logbsize"] == {"xfs-small-log": "32k", "xfs-ext-log": "256k"}
    # loop numbers are masked: they change on every run
    assert by_key["mount.logdev"] == {"xfs-small-log": None, "xfs-ext-log": "/dev/loopN"}
    assert by_key["geometry.log.internal"] == {"xfs-small-log": "true", "xfs-ext-log": "false"}
    assert by_key["plan.log_size"] == {"xfs-small-log": None, "xfs-ext-log": "64M"}
    assert rows[0].group == "plan" and rows[2].group == "mount"


def test_ext4_mount_options_sysctls_and_postgres_settings() -> None:
    ext4_opts = ["rw", "noatime", "nodiratime", "nodelalloc", "nobarrier", "stripe=6"]
    a = _target(
        0,
        "ext4-a",
        _spec(
            "ext4-a", fs="ext4", mount="noatime,nodiratime", mkfs=["-E", "stride=2,stripe-width=6"]
        ),
        _prov("ext4", 1, effective_mount_options=ext4_opts),
        fs="ext4",
    )
    b_prov = _prov("ext4", 2, effective_mount_options=["rw", "noatime", "nodiratime", "stripe=6"])
    b_prov["sysctls"] = {"vm.dirty_ratio": 5, "vm.dirty_background_ratio": 10}
    b_prov["postgres_settings"] = {**b_prov["postgres_settings"], "synchronous_commit": "off"}
    b = _target(
        1,
        "ext4-b",
        _spec(
            "ext4-b",
            fs="ext4",
            mount="noatime,nodiratime",
            mkfs=["-E", "stride=2,stripe-width=6"],
            sysctls={"vm.dirty_ratio": 5},
            postgres={"settings": {"synchronous_commit": False}},
        ),
        b_prov,
        fs="ext4",
    )
    rows = provenance_diff([a, b])
    assert _keys(rows) == [
        "plan.sysctls.vm.dirty_ratio",
        "plan.postgres.settings.synchronous_commit",
        "mount.nodelalloc",
        "mount.nobarrier",
        "sysctl.vm.dirty_ratio",
        "postgres.settings.synchronous_commit",
    ]
    values = {r.key: r.values for r in rows}
    assert values["mount.nobarrier"] == {"ext4-a": "on", "ext4-b": None}
    assert values["sysctl.vm.dirty_ratio"] == {"ext4-a": "20", "ext4-b": "5"}
    assert values["plan.postgres.settings.synchronous_commit"] == {
        "ext4-a": None,
        "ext4-b": "false",
    }


def test_geometry_is_compared_only_between_targets_of_the_same_fs() -> None:
    xfs = _target(0, "xfs", _spec("xfs"), _prov("xfs", 1))
    ext4 = _target(
        1,
        "ext4",
        _spec("ext4", fs="ext4"),
        _prov("ext4", 2, effective_mount_options=["rw", "relatime"]),
        fs="ext4",
    )
    keys = _keys(provenance_diff([xfs, ext4]))
    assert "plan.fs" in keys and not [k for k in keys if k.startswith("geometry.")]
    # a second ext4 with another stride: now geometry differs among the ext4 targets
    other = _prov("ext4", 3, effective_mount_options=["rw", "relatime"])
    other["geometry"]["facts"] = {"block_size": 4096, "raid_stride": 4, "journal": "internal"}
    ext4b = _target(2, "ext4b", _spec("ext4b", fs="ext4"), other, fs="ext4")
    rows = {r.key: r.values for r in provenance_diff([xfs, ext4, ext4b])}
    assert [k for k in rows if k.startswith("geometry.")] == ["geometry.raid_stride"]
    assert rows["geometry.raid_stride"] == {"xfs": None, "ext4": "2", "ext4b": "4"}


def test_device_facts_that_name_rather_than_describe_are_left_out() -> None:
    a = _target(0, "a", _spec("a"), _prov(loop=1))
    b_prov = _prov(loop=2)
    b_prov["device_facts"] = {
        **b_prov["device_facts"],
        "scheduler": "mq-deadline",
        "loop_dio": False,
    }
    b = _target(1, "b", _spec("b", direct_io=False, queue={"scheduler": "mq-deadline"}), b_prov)
    assert _keys(provenance_diff([a, b])) == [
        "plan.direct_io",
        "plan.queue.scheduler",
        "device.scheduler",
        "device.loop_dio",
    ]


def test_targets_without_provenance_are_left_out() -> None:
    a = _target(0, "a", _spec("a"), _prov(loop=1))
    b = _target(
        1,
        "b",
        _spec("b", mount="noatime"),
        _prov(
            loop=2,
            effective_mount_options=["rw", "noatime", "inode64", "logbufs=8", "logbsize=32k"],
        ),
    )
    skipped = _target(2, "zfs", {"name": "zfs", "dir": "/tank"}, {}, fs="zfs", status="skipped")
    rows = provenance_diff([a, b, skipped])
    assert _keys(rows) == ["plan.mount", "mount.relatime", "mount.noatime"]
    assert all(set(r.values) == {"a", "b"} for r in rows)
    assert provenance_diff([a]) == [] and provenance_diff([a, skipped]) == []


def test_target_keys_flatten_spec_and_provenance() -> None:
    t = _target(
        0,
        "x",
        _spec(
            "x", mkfs=["-d", "agcount=8", "-l", "size=64m"], sysctls={"vm.dirty_bytes": 67108864}
        ),
        _prov(loop=4),
    )
    keys = target_keys(t)
    assert keys["plan.mkfs"] == "-d agcount=8 -l size=64m"
    assert keys["plan.sysctls.vm.dirty_bytes"] == "67108864"
    assert keys["plan.direct_io"] == "true" and "plan.name" not in keys
    assert keys["mount.inode64"] == "on" and keys["mount.logbsize"] == "32k"
    assert keys["geometry.meta-data.agcount"] == "4"
    assert keys["device.scheduler"] == "none" and "device.name" not in keys
    assert keys["backing_device.scheduler"] == "mq-deadline"
    assert "backing_device.path" not in keys and "device.loop_backing_file" not in keys
    assert keys["postgres.version"] == "18.6"
    assert keys["postgres.settings.shared_buffers"] == "16384 8kB"
    assert "postgres.settings.port" not in keys


def test_pg15_against_pg18_shows_their_data_checksums() -> None:
    """PostgreSQL 18 turns data checksums on by default, 15 does not: a comparison of the
    two must say so, as the plan entry (asked) and as the server ran."""
    a = _target(
        0,
        "pg15",
        _spec("pg15", pg_bin="/usr/lib/postgresql/15/bin"),
        _prov(postgres_version="15.18", data_checksums=False),
    )
    b = _target(
        1,
        "pg18",
        _spec("pg18", postgres={"settings": {}, "data_checksums": True}),
        _prov(loop=4, data_checksums=True),
    )
    values = {r.key: r.values for r in provenance_diff([a, b])}
    assert values["postgres.data_checksums"] == {"pg15": "false", "pg18": "true"}
    assert values["plan.postgres.data_checksums"] == {"pg15": None, "pg18": "true"}
    # recorded before it was kept: not reported (—), never a guess
    old = _target(1, "old", _spec("old"), _prov(loop=5))
    values = {r.key: r.values for r in provenance_diff([a, old])}
    assert values["postgres.data_checksums"] == {"pg15": "false", "old": None}


def test_recorded_io_settings_show_both_sides_of_a_changed_one() -> None:
    # The server's durability and I/O settings, defaults included, recorded with the
    # non-default ones: a target with synchronous_commit = off reads "off vs on", not
    # "off vs (unset)", and settings every target ran alike are no row.
    io = {"fsync": "on", "synchronous_commit": "on", "wal_sync_method": "fdatasync"}
    rows = provenance_diff(
        [
            _target(0, "a", _spec("a"), _prov(postgres_io_settings=io)),
            _target(
                1,
                "b",
                _spec("b"),
                _prov(
                    postgres_io_settings={**io, "synchronous_commit": "off"},
                    postgres_settings={**_prov()["postgres_settings"], "synchronous_commit": "off"},
                ),
            ),
        ]
    )
    [row] = [r for r in rows if r.group == "postgres"]
    assert (row.key, row.values) == (
        "postgres.settings.synchronous_commit",
        {"a": "on", "b": "off"},
    )
