"""ZFS: commands, the check of a plan's properties, and the parsers, against outputs
captured from Debian's zfs-fuse 0.7 (tests/fixtures/zfs_*, zpool_*)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from pgfsbench.analysis.caveats.durability import SAFE, UNSAFE, classify, target_durability
from pgfsbench.errors import UserError
from pgfsbench.filesystems import zfs
from pgfsbench.filesystems.registry import recipe
from pgfsbench.ledger import Ledger
from pgfsbench.plan.load import parse_plan
from pgfsbench.proc import CommandResult, RunAs
from pgfsbench.provision import mounting as provision_mounting
from pgfsbench.provision import zfs_pool as provision_zfs
from pgfsbench.provision.mountinfo import MountEntry
from pgfsbench.provision.target import Provisioning

FIXTURES = Path(__file__).parent.parent / "fixtures"
POOL = "pgfsb-20261124-230427-abc123-zfs"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


@pytest.fixture(scope="module")
def tables() -> dict[str, dict[str, zfs.PropertySpec]]:
    return {
        "zfs": zfs.parse_property_table(fixture("zfs_get_usage_exit2.stderr.txt")),
        "zpool": zfs.parse_property_table(fixture("zpool_get_usage_exit2.stderr.txt")),
    }


# --- what the installed zfs accepts -------------------------------------------------


def test_the_property_tables_of_zfs_fuse(tables):
    z, p = tables["zfs"], tables["zpool"]
    assert len(z) == 53 and len(p) == 18
    assert z["recordsize"] == zfs.PropertySpec("recordsize", True, "512 to 128k, power of 2")
    assert z["compression"].values == "on | off | lzjb | gzip | gzip-[1-9] | zle"
    assert not z["used"].editable and z["logbias"].editable
    assert "sync" not in z  # zfs-fuse 0.7 (pool version 23) has none
    assert p["ashift"].values == "<ashift, 9-13, or 0=default>" and p["ashift"].editable
    assert not p["health"].editable


@pytest.mark.parametrize(
    "tool, props",
    [
        (
            "zfs",
            {
                "recordsize": "8K",
                "compression": "on",
                "atime": False,
                "logbias": "throughput",
                "primarycache": "metadata",
            },
        ),
        (
            "zfs",
            {
                "recordsize": "128k",
                "compression": "gzip-9",
                "dedup": "sha256,verify",
                "checksum": "fletcher4",
                "copies": 2,
                "quota": "1G",
                "refquota": "none",
                "sharenfs": "rw=@10.0.0.0/8",
                "com.example:owner": "dba",
            },
        ),
        ("zpool", {"ashift": 12}),
        ("zpool", {"ashift": 0, "failmode": "continue", "autoexpand": True}),
    ],
)
def test_values_this_zfs_takes(tables, tool, props):
    assert zfs.property_problems(tool, props, tables[tool]) == []


@pytest.mark.parametrize(
    "tool, props, words",
    [
        (
            "zfs",
            {"compression": "lz4"},
            'compression = "lz4": this zfs accepts on | off | lzjb | gzip | gzip-[1-9] | zle',
        ),
        ("zfs", {"sync": "standard"}, "this zfs has no property 'sync' (it can set: aclinherit"),
        ("zfs", {"recordsize": "3K"}, 'recordsize = "3K": this zfs accepts 512 to 128k, power'),
        ("zfs", {"recordsize": "256K"}, "512 to 128k"),
        ("zfs", {"compression": "gzip-10"}, "gzip-[1-9]"),
        ("zfs", {"atime": "maybe"}, 'atime = "maybe": this zfs accepts on | off'),
        ("zfs", {"used": "1G"}, "zfs property 'used' is read-only"),
        ("zpool", {"ashift": 17}, 'ashift = "17": this zpool accepts <ashift, 9-13, or 0=default>'),
        ("zpool", {"ashift": 8}, "9-13"),
    ],
)
def test_values_this_zfs_refuses(tables, tool, props, words):
    (problem,) = zfs.property_problems(tool, props, tables[tool])
    assert words in problem


@pytest.mark.parametrize(
    "captured, prop, value",
    [
        ("zfs_set_error_lz4_exit1.stderr.txt", "compression", "lz4"),
        ("zfs_set_error_sync_exit1.stderr.txt", "sync", "disabled"),
        ("zfs_set_error_recordsize_exit1.stderr.txt", "recordsize", "3K"),
    ],
)
def test_what_zfs_set_refused_is_refused_before_anything_is_made(tables, captured, prop, value):
    refused = fixture(captured)
    assert f"'{prop}'" in refused  # the real tool's own refusal of exactly this value
    assert zfs.property_problems("zfs", {prop: value}, tables["zfs"])


def test_an_unreadable_property_table_is_a_user_error(monkeypatch):
    # What zfs get prints when the zfs-fuse daemon is not running.
    monkeypatch.setattr(
        provision_zfs,
        "_run",
        lambda argv, timeout=0: CommandResult(
            tuple(argv), 1, "", fixture("zpool_list_error_no_daemon_exit1.stderr.txt"), 0.0
        ),
    )
    with pytest.raises(UserError, match="listed no properties: connect"):
        provision_zfs.property_tables()


def test_the_tables_are_asked_once_per_zfs_build_then_read_from_the_cache(
    tables, tmp_path, monkeypatch
):
    """Reading the tables needs zpool to answer (zfs-fuse: a daemon started for 6-8 s);
    a second check of a plan reads them from the cache, another build asks again."""
    monkeypatch.setenv(provision_zfs.CACHE_ENV, str(tmp_path / "cache"))
    bins = tmp_path / "bin"
    bins.mkdir()
    for tool in ("zfs", "zpool"):
        (bins / tool).write_text("#!/bin/sh\n")
        (bins / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bins}:/usr/bin:/bin")
    asked = []
    monkeypatch.setattr(provision_zfs, "answering", contextlib.nullcontext)
    monkeypatch.setattr(provision_zfs, "property_tables", lambda: asked.append(1) or tables)
    targets = _plan('fs = "zfs"\nzfs = { recordsize = "8K", sync = "sometimes" }').targets
    first = provision_zfs.plan_problems(targets)
    assert first and "sync" in first[0] and asked == [1]
    assert provision_zfs.plan_problems(targets) == first and asked == [1]  # from the cache
    assert provision_zfs.cached_property_tables() == tables
    (bins / "zfs").write_text("#!/bin/sh\n# another build\n")
    assert provision_zfs.cached_property_tables() is None
    assert provision_zfs.plan_problems(targets) == first and asked == [1, 1]
    # an unreadable cache file is asked again, not an error
    for cached in (tmp_path / "cache").glob("zfs-properties-*.json"):
        cached.write_text("{not json")
    assert provision_zfs.plan_problems(targets) == first and asked == [1, 1, 1]


# --- the plan -------------------------------------------------------------------------

TAIL = '[[workloads]]\ntype = "fsync"\nseconds = 1\n'


def _plan(target: str):
    return parse_plan(f'name = "p"\n[[targets]]\nname = "z"\n{target}\n{TAIL}', "p.toml")


def test_a_zfs_target_in_a_plan():
    plan = _plan(
        'fs = "zfs"\nsize = "256M"\nzfs = { recordsize = "8K", atime = false }\n'
        "zpool = { ashift = 12 }"
    )
    (t,) = plan.targets
    assert t.kind == "loop" and t.zfs == {"recordsize": "8K", "atime": False}
    assert t.zpool == {"ashift": 12}
    (striped,) = _plan('fs = "zfs"\nsize = "128M"\nimages = 3').targets  # one pool over 3
    assert striped.member_count == 3


@pytest.mark.parametrize(
    "target, words",
    [
        ('fs = "ext4"\nzfs = { recordsize = "8K" }', 'apply to fs = "zfs" only'),
        ('fs = "zfs"\nmount = "noatime"', "ZFS takes no mount options"),
        ('fs = "zfs"\nmkfs = ["-o", "ashift=12"]', "zpool create, not mkfs"),
        ('fs = "zfs"\nzfs = { mountpoint = "/srv" }', "mountpoint is set by pgfsbench"),
        ('fs = "zfs"\nzpool = { cachefile = "/etc/zfs/zpool.cache" }', "cachefile is set by"),
        ('fs = "zfs"\nzfs = { "Record Size" = "8K" }', "is not a zfs property name"),
        ('fs = "zfs"\nzfs = { compression = "lz4; rm -rf /" }', "is not a property value"),
        ('fs = "zfs"\nthrottle = { write_iops = 100 }', "throttle cannot limit ZFS"),
        ('fs = "zfs"\nlog_size = "64M"', "zfs cannot use an external log device"),
        ('fs = "zfs"\nimages = 2\nvolume = { kind = "md-raid0" }', "ZFS joins its devices itself"),
    ],
)
def test_zfs_plan_errors(target, words):
    with pytest.raises(UserError) as info:
        _plan(target)
    assert words in str(info.value)


def test_the_example_plan_loads():
    plan = parse_plan(
        (Path(__file__).parents[2] / "examples/zfs-vs-ext4.toml").read_text(), "zfs-vs-ext4.toml"
    )
    by_name = {t.name: t for t in plan.targets}
    assert by_name["zfs-8k"].zfs["recordsize"] == "8K"
    assert plan.server_settings(by_name["zfs-8k"])["full_page_writes"] == "off"


# --- commands ---------------------------------------------------------------------------


def test_pool_and_dataset_commands():
    pool = zfs.pool_name("20261124-230427-abc123", "zfs 8k")
    assert pool == "pgfsb-20261124-230427-abc123-zfs-8k"
    assert zfs.create_pool_argv(pool, ["/dev/loop3", "/dev/loop4"], {"ashift": 12}) == [
        "zpool",
        "create",
        "-f",
        "-o",
        "cachefile=none",
        "-o",
        "ashift=12",
        "-m",
        "none",
        pool,
        "/dev/loop3",
        "/dev/loop4",
    ]
    assert zfs.create_dataset_argv(
        pool, "/tmp/pgfsbench-z-1", {"recordsize": "8K", "atime": False, "copies": 2}
    ) == [
        "zfs",
        "create",
        "-o",
        "mountpoint=/tmp/pgfsbench-z-1",
        "-o",
        "recordsize=8K",
        "-o",
        "atime=off",
        "-o",
        "copies=2",
        f"{pool}/pgdata",
    ]
    assert zfs.destroy_dataset_argv(f"{pool}/pgdata") == ["zfs", "destroy", "-f", f"{pool}/pgdata"]
    assert zfs.destroy_pool_argv(pool) == ["zpool", "destroy", "-f", pool]


def test_pool_list():
    assert zfs.parse_pool_list(fixture("zpool_list_H_name.txt")) == [POOL]
    assert zfs.parse_pool_list("no pools available\n") == []


# --- what was made ---------------------------------------------------------------------


def test_dataset_properties():
    facts = zfs.parse_zfs_get(fixture("zfs_get_Hp_all_dataset.txt"))
    assert facts["dataset.recordsize"] == 8192
    assert facts["dataset.compression"] == "on" and facts["dataset.atime"] == "off"
    assert facts["dataset.logbias"] == "throughput"
    assert facts["dataset.primarycache"] == "metadata"
    assert facts["dataset.checksum"] == "on" and facts["dataset.version"] == 4
    assert facts["dataset.set_locally"] == (
        "atime compression logbias mountpoint primarycache recordsize"
    )
    # counters, times and places differ between two targets made alike
    assert not {
        "dataset.used",
        "dataset.creation",
        "dataset.mountpoint",
        "dataset.available",
    } & set(facts)


def test_pool_properties():
    facts = zfs.parse_zpool_get(fixture("zpool_get_all.txt"))
    assert facts["pool.ashift"] == 12 and facts["pool.version"] == 23
    assert facts["pool.cachefile"] == "none" and facts["pool.failmode"] == "wait"
    assert facts["pool.bootfs"] == "-" and facts["pool.health"] == "ONLINE"
    assert not {"pool.guid", "pool.size", "pool.free", "pool.altroot"} & set(facts)


def test_geometry_reads_the_dataset_and_its_pool():
    g = recipe("zfs").geometry(f"{POOL}/pgdata", "/tmp/x")
    assert [r.argv for r in g] == [
        ["zfs", "get", "-H", "-p", "all", f"{POOL}/pgdata"],
        ["zpool", "get", "all", POOL],
    ]
    assert recipe("zfs").geometry("/dev/loop3", "/tmp/x") == []
    assert all(r.parse(fixture("zpool_list_error_no_daemon_exit1.stderr.txt")) == {} for r in g)


# --- durability and caveats ------------------------------------------------------------

FUSE = ["rw", "relatime", "user_id=0", "group_id=0", "default_permissions", "allow_other"]


def test_full_page_writes_off_is_safe_on_zfs_not_on_ext4():
    on_zfs = classify("zfs", FUSE, {"full_page_writes": "off"}, {"dataset.sync": "standard"})
    assert on_zfs.level == SAFE and "ZFS copy-on-write" in on_zfs.reasons[0]
    assert classify("ext4", ["rw"], {"full_page_writes": "off"}).level == UNSAFE


def test_sync_disabled_is_not_crash_safe():
    d = classify("zfs", FUSE, {}, {"dataset.sync": "disabled"})
    assert d.level == UNSAFE and "sync=disabled" in d.reasons[0]
    stored = {
        "effective_mount_options": FUSE,
        "postgres_settings": {},
        "geometry": {"facts": {"dataset.sync": "disabled", "dataset.recordsize": 8192}},
    }
    assert target_durability(stored, "zfs").level == UNSAFE
    stored["geometry"]["facts"]["dataset.sync"] = "standard"
    assert target_durability(stored, "zfs").level == SAFE


def test_the_fuse_caveat():
    (text,) = recipe("zfs").caveats({"mounted_fs_type": "fuse.zfs"})
    assert "zfs-fuse" in text and "does not represent kernel ZFS" in text
    assert recipe("zfs").caveats({"mounted_fs_type": "zfs"}) == []  # kernel ZFS
    assert recipe("ext4").caveats({"mounted_fs_type": "fuse.zfs"}) == []


# --- the lifecycle: in the ledger before it exists, undone in reverse ----------------


def test_make_pool_records_before_it_acts_and_undoes_in_reverse(tmp_path, monkeypatch):
    ledger = Ledger.create("20261124-230427-abc123", tmp_path)
    ran: list[tuple[str, list[str]]] = []  # (ledger kinds at that moment, argv)
    made: set[str] = set()  # pools and datasets, as the tools would hold them
    daemon = {"up": False}

    def tools(argv, **kwargs):
        argv = [Path(argv[0]).name, *argv[1:]]
        ran.append((",".join(r["kind"] for r in ledger.resources), argv))
        out, ok = "", daemon["up"]
        if argv[0] == "zfs-fuse":
            daemon["up"] = ok = True
            provision_zfs.PIDFILE.write_text("4242\n")
        elif argv[1:3] == ["list", "-H"]:
            out = "\n".join(m for m in made if "/" not in m)
            ok = ok and (argv[0] == "zpool" or argv[-1] in made)
        elif argv[1] == "create":
            made.add(argv[-2] if argv[0] == "zpool" else argv[-1])
        elif argv[1] == "destroy":
            made.discard(argv[-1])
        return CommandResult(tuple(argv), 0 if ok else 1, out, "", 0.0)

    monkeypatch.setattr(provision_zfs, "PIDFILE", tmp_path / "zfs-fuse.pid")
    monkeypatch.setattr(provision_zfs.proc, "run", tools)
    monkeypatch.setattr(provision_zfs.proc, "which", lambda n: f"/usr/sbin/{n}")
    monkeypatch.setattr(provision_zfs, "kernel_module", lambda: False)
    monkeypatch.setattr(
        provision_mounting,
        "mount_of",
        lambda p: MountEntry(
            str(p),
            "fuse.zfs",
            "pgfsb-20261124-230427-abc123-z/pgdata",
            "rw,relatime",
            "rw,user_id=0,group_id=0,default_permissions,allow_other",
            44,
        ),
    )
    monkeypatch.setattr(provision_mounting.os, "chown", lambda *a: None)
    monkeypatch.setattr(
        provision_mounting.tempfile, "mkdtemp", lambda prefix: str(tmp_path / f"{prefix}mp")
    )
    monkeypatch.setattr(provision_zfs, "unmount_recorded", lambda res: [])
    (tmp_path / "pgfsbench-z-mp").mkdir()
    spec = _plan('fs = "zfs"\nsize = "256M"\nzfs = { recordsize = "8K" }').targets[0]
    pool = "pgfsb-20261124-230427-abc123-z"
    with contextlib.ExitStack() as undo:
        workdir, mount, notes = provision_zfs.make_pool(
            spec, ["/dev/loop7"], Provisioning(ledger, undo), RunAs("pg", 999, 999, "/")
        )
        assert made == {pool, f"{pool}/pgdata"}
        making, ran[:] = list(ran), []
    acts = [(kinds, argv[:3]) for kinds, argv in making if argv[1] != "list"]
    assert acts == [  # each in the ledger before it is made
        ("zfs-daemon", ["zfs-fuse", "--pidfile", str(tmp_path / "zfs-fuse.pid")]),
        ("zfs-daemon,zfs-pool", ["zpool", "create", "-f"]),
        ("zfs-daemon,zfs-pool,zfs-dataset", ["zfs", "create", "-o"]),
    ]
    assert workdir == tmp_path / "pgfsbench-z-mp" / "pgfsbench" and mount.fs_type == "fuse.zfs"
    assert notes[0] == f"ZFS pool {pool} on /dev/loop7, dataset {pool}/pgdata"
    # Undone: the dataset, then the pool; the daemon stays for the rest of the campaign.
    assert [argv for _, argv in ran if argv[1] == "destroy"] == [
        ["zfs", "destroy", "-f", f"{pool}/pgdata"],
        ["zpool", "destroy", "-f", pool],
    ]
    assert made == set()
    assert [r["kind"] for r in ledger.resources] == ["zfs-daemon"]
    assert ledger.resources[0]["pid"] == 4242


def test_the_advice_makes_it_again_with_placeholders():
    ran = [
        ["/usr/sbin/losetup", "--find", "--show", "/r/images/z.img"],
        ["/usr/sbin/zfs-fuse", "--pidfile", "/run/pgfsbench-zfs-fuse.pid"],
        [
            "/usr/sbin/zpool",
            "create",
            "-f",
            "-o",
            "cachefile=none",
            "-o",
            "ashift=12",
            "-m",
            "none",
            POOL,
            "/dev/loop3",
            "/dev/loop4",
        ],
        [
            "/usr/sbin/zfs",
            "create",
            "-o",
            "mountpoint=/tmp/pgfsbench-z-x",
            "-o",
            "recordsize=8K",
            f"{POOL}/pgdata",
        ],
    ]
    made, notes = recipe("zfs").recreate(
        ran, {"/dev/loop3": "DEVICE1", "/dev/loop4": "DEVICE2"}, "/var/lib/postgresql"
    )
    assert made == [
        "zpool create -o ashift=12 -m none tank DEVICE1 DEVICE2",
        "zfs create -o mountpoint=/var/lib/postgresql -o recordsize=8K tank/pgdata",
    ]
    assert "cachefile=none" in notes[0] and "no fstab line" in notes[1]
