"""Filesystem recipes: every registered one declares every piece, and one module (a toy
filesystem registered here) is all the plan, the mount-option check, geometry and the
durability classification need."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pgfsbench.analysis.caveats.durability import SAFE, UNSAFE, classify
from pgfsbench.errors import UserError
from pgfsbench.filesystems import registry
from pgfsbench.filesystems.mountcheck import (
    CHANGED,
    DEFAULT,
    IGNORED,
    IMPLIED,
    mount_option_changes,
)
from pgfsbench.filesystems.mountoptions import GENERIC, unknown_mount_options
from pgfsbench.filesystems.recipe import AtomicWrites, GeometryReader, LogSetup, Recipe
from pgfsbench.filesystems.registry import UnknownFilesystem, recipe, recipes, registered
from pgfsbench.plan.fsoptions import device_options
from pgfsbench.plan.load import parse_plan
from pgfsbench.provision import geometry

ALL = recipes()
TAIL = '\n[[workloads]]\ntype = "fsync"\n'


def _known(r: Recipe) -> frozenset[str]:
    return GENERIC | r.mount_options


def _name(option: str) -> str:
    return option.split("=", 1)[0]


# --- every recipe declares every piece ------------------------------------------------


def test_the_registry_holds_the_filesystems_pgfsbench_makes() -> None:
    assert [r.fs for r in ALL] == ["btrfs", "ext2", "ext3", "ext4", "f2fs", "xfs", "zfs"]
    package = Path(registry.__file__).parent
    families = {p.stem for p in package.glob("*.py")} - {
        "__init__",
        "recipe",
        "registry",
        "mountcheck",
        "mountoptions",
        "optionvalues",
        "textfacts",
    }
    assert families == {"ext", "xfs", "btrfs", "f2fs", "zfs"}  # a new module: a new family


@pytest.mark.parametrize("r", [r for r in ALL if not r.pooled], ids=lambda r: r.fs)
def test_making_it(r: Recipe) -> None:
    argv = r.mkfs_argv("/dev/loop9", ["-L", "x"])
    assert argv[0] == r.mkfs_tool and argv[-1] == "/dev/loop9"
    assert argv[1 : 1 + len(r.force_flags)] == list(r.force_flags) and r.force_flags
    assert "-L" in argv and r.apt_package and r.min_size_mb > 0
    assert r.driver and r.mount_argv("/dev/loop9", "/mnt/x", "noatime") == [
        "mount",
        "-t",
        r.fs,
        "-o",
        "noatime",
        "/dev/loop9",
        "/mnt/x",
    ]
    assert all(k.endswith("=") for k in r.device_option_keys)


@pytest.mark.parametrize("r", ALL, ids=lambda r: r.fs)
def test_its_log_device(r: Recipe) -> None:
    if r.log_device is None:
        return
    setup = r.log_device(["-b", "4096"], "/dev/loop8", 64 * 2**20)
    assert isinstance(setup, LogSetup)
    assert setup.mkfs_options[:2] == ["-b", "4096"]  # the plan's own options are kept
    mentions = " ".join(
        [*setup.mkfs_options, *setup.mount_options, *(" ".join(a) for a in setup.before_mkfs)]
    )
    assert "/dev/loop8" in mentions
    assert all(_name(o) in _known(r) for o in setup.mount_options)
    assert device_options(setup.mkfs_options)  # what the plan itself may not give


@pytest.mark.parametrize("r", ALL, ids=lambda r: r.fs)
def test_its_mount_options_and_kernel_defaults(r: Recipe) -> None:
    # a pooled filesystem (ZFS) takes properties instead of mount options
    assert r.mount_options or r.pooled
    assert not unknown_mount_options(r.fs, ",".join(r.mount_options))
    # a default is an option the filesystem has
    assert {_name(d) for d in r.kernel_defaults or ()} <= _known(r)
    assert set(r.implied_by) <= _known(r)
    assert {i for imp in r.implied_by.values() for i in imp} <= _known(r)
    for default in r.kernel_defaults or ():
        (row,) = mount_option_changes(default, ["rw"], fs=r.fs)
        assert row["status"] == DEFAULT, default


@pytest.mark.parametrize("r", ALL, ids=lambda r: r.fs)
def test_its_geometry_reader(r: Recipe) -> None:
    if r.geometry is None:
        return
    mounted = "tank/pgdata" if r.pooled else "/dev/loop9"  # what the mount table lists
    readers = r.geometry(mounted, "/mnt/x")
    assert readers and all(isinstance(g, GeometryReader) for g in readers)
    assert {mounted, "/mnt/x"} & set(readers[0].argv)
    assert all(g.parse("not the tool's output\n") == {} for g in readers)
    assert r.geometry(None, None) == []


@pytest.mark.parametrize("r", ALL, ids=lambda r: r.fs)
def test_its_durability(r: Recipe) -> None:
    assert set(r.durability_notes) <= _known(r)
    if r.atomic_writes is not None:
        assert r.atomic_writes.unless <= _known(r)


# --- unknown filesystems ---------------------------------------------------------------


def test_an_unknown_filesystem_names_the_known_ones_and_the_dir_target() -> None:
    with pytest.raises(UnknownFilesystem) as info:
        recipe("ufs")
    assert "ext4, f2fs, xfs, zfs" in str(info.value) and "dir target" in str(info.value)
    assert registry.find("ufs") is None and registry.find(None) is None


def test_a_plan_with_an_unknown_fs_points_to_the_dir_target() -> None:
    with pytest.raises(UserError) as info:
        parse_plan('name = "p"\n[[targets]]\nname = "a"\nfs = "ufs"\n' + TAIL, "p.toml")
    text = str(info.value)
    assert "targets.a.fs" in text and "'ufs'" in text
    assert "btrfs, ext2, ext3, ext4, f2fs, xfs, zfs" in text
    assert 'use a dir target: dir = "' in text


# --- a toy filesystem: one module (this one) is all it takes ---------------------------


def _toy_geometry(device: str | None, mount_point: str | None) -> list[GeometryReader]:
    return (
        [GeometryReader(["toyinfo", str(device)], lambda text: {"toy.blocks": len(text)})]
        if device
        else []
    )


TOY = Recipe(
    fs="toyfs",
    mkfs_tool="mkfs.toy",
    force_flags=("--yes",),
    apt_package="toy-tools",
    min_size_mb=8,
    log_device=None,
    device_option_keys=frozenset({"toydev="}),
    mount_options=frozenset({"toyopt", "toycow", "notoycow", "toysum", "toydev"}),
    kernel_defaults=frozenset({"toyopt=4k"}),
    implied_by={"toysum": ("notoycow",)},
    geometry=_toy_geometry,
    atomic_writes=AtomicWrites("toy shadow paging", unless=frozenset({"notoycow"})),
    durability_notes={"notoycow": "notoycow makes toy pages tear"},
)


@pytest.fixture
def toy() -> Recipe:
    with registered(TOY) as r:
        yield r
    assert registry.find("toyfs") is None


def test_a_toy_filesystem_is_accepted_by_plan_loading(toy: Recipe) -> None:
    plan = parse_plan(
        'name = "p"\n[[targets]]\nname = "a"\nfs = "toyfs"\nsize = "64M"\n'
        'mount = "toyopt=4096,noatime"\n' + TAIL,
        "p.toml",
    )
    assert plan.targets[0].fs == "toyfs" and plan.targets[0].mount == "toyopt=4096,noatime"
    with pytest.raises(UserError, match="toyfs has no mount option 'logbsize'"):
        parse_plan(
            'name = "p"\n[[targets]]\nname = "a"\nfs = "toyfs"\nmount = "logbsize=64k"\n' + TAIL,
            "p.toml",
        )
    with pytest.raises(
        UserError,
        match=r"toyfs cannot use an external log device \(only "
        r"ext3, ext4, xfs\)",
    ):
        parse_plan(
            'name = "p"\n[[targets]]\nname = "a"\nfs = "toyfs"\nlog_size = "64M"\n' + TAIL, "p.toml"
        )
    with pytest.raises(UserError, match="names a device"):
        parse_plan(
            'name = "p"\n[[targets]]\nname = "a"\nfs = "toyfs"\nmount = "toydev=x"\n' + TAIL,
            "p.toml",
        )


def test_a_toy_filesystem_in_the_mount_option_check(toy: Recipe) -> None:
    assert unknown_mount_options("toyfs", "toyopt,noatime,nobarrier") == ["nobarrier"]
    rows = {
        c["option"]: c["status"]
        for c in mount_option_changes("toyopt=4096,toysum,toycow", ["rw", "notoycow"], fs="toyfs")
    }
    # its kernel default in another unit, implied by what is listed, its opposite listed
    assert rows == {"toyopt=4096": DEFAULT, "toysum": IMPLIED, "toycow": CHANGED}
    # another filesystem's defaults are not the toy's
    (row,) = mount_option_changes("commit=5", ["rw"], fs="toyfs")
    assert row["status"] == IGNORED


def test_a_toy_filesystem_in_the_durability_classification(toy: Recipe) -> None:
    fpw_off = {"full_page_writes": "off"}
    d = classify("toyfs", ["rw"], fpw_off)
    assert d.level == SAFE and "relies on toy shadow paging" in " ".join(d.reasons)
    d = classify("toyfs", ["rw", "notoycow"], fpw_off)
    assert d.level == UNSAFE and "(toyfs with notoycow)" in " ".join(d.reasons)
    assert "notoycow makes toy pages tear" in d.reasons


def test_a_toy_filesystem_geometry_is_read_by_provision(toy: Recipe, monkeypatch) -> None:
    monkeypatch.setattr(geometry, "_run", lambda argv: ("four", None))
    g = geometry.filesystem_geometry("toyfs", "/dev/loop9", "/mnt/x")
    assert g["tool"] == ["toyinfo", "/dev/loop9"] and g["facts"] == {"toy.blocks": 4}


def test_registering_a_filesystem_twice_is_refused(toy: Recipe) -> None:
    with pytest.raises(ValueError, match="two recipes for filesystem 'toyfs'"):
        with registered(TOY):
            pass


# --- the read side reads recipes without provisioning ----------------------------------


def test_the_read_side_imports_no_provisioning() -> None:
    code = (
        "import sys\n"
        "import pgfsbench.filesystems.registry as r, pgfsbench.plan.model, "
        "pgfsbench.analysis.caveats.durability, pgfsbench.report.html, pgfsbench.report.terminal\n"
        "r.recipes()\n"
        "print(sorted(m for m in sys.modules if m.startswith('pgfsbench.provision')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("r", ALL, ids=lambda r: r.fs)
def test_typed_mount_options_are_known_and_their_defaults_fit_the_type(r: Recipe) -> None:
    """A value type for an option the recipe does not have, or one its own kernel default
    does not satisfy, would refuse a plan the kernel takes."""
    assert set(r.mount_option_values) <= _known(r)
    for default in r.kernel_defaults or ():
        name, _, value = default.partition("=")
        if value and name in r.mount_option_values:
            assert r.mount_option_values[name].accepts(value), default
