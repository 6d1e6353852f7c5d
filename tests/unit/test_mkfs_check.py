"""mkfs judges a plan's options before anything is made: the real mkfs.xfs -N and
mke2fs -n on sparse files (they write nothing), at the size each target formats."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pgfsbench import exits, proc
from pgfsbench.cli import app
from pgfsbench.errors import UserError
from pgfsbench.plan.load import parse_plan
from pgfsbench.preflight import check_mkfs
from pgfsbench.provision.mkfs_check import formatted_bytes, mkfs_problems, refusal

TAIL = '[[workloads]]\ntype = "fsync"\n'


def plan(*targets: str):
    return parse_plan(
        'name = "p"\n' + "".join(f"[[targets]]\n{t}\n" for t in targets) + TAIL, "p.toml"
    )


def test_what_mkfs_refuses_at_the_targets_size_is_said_per_target() -> None:
    problems = mkfs_problems(
        plan(
            # the XFS-vs-ext4 study's 8K stripe over 3 disks: at 512 MB its minimum log does not fit
            'name = "small"\nfs = "xfs"\nsize = "512M"\nmkfs = ["-d", "su=8k,sw=3"]',
            'name = "typo"\nfs = "ext4"\nsize = "300M"\nmkfs = ["-O", "has_jornal"]',
            'name = "fine"\nfs = "xfs"\nsize = "600M"\nmkfs = ["-d", "su=8k,sw=3"]',
            'name = "xfs-log"\nfs = "xfs"\nsize = "1G"\nlog_size = "16M"',
            'name = "btrfs"\nfs = "btrfs"\nsize = "300M"\nmkfs = ["-m", "single"]',
        )
    )
    assert problems == [
        "target 'small': mkfs.xfs refuses its options on 512 MB: Log size must be at least "
        "64MB. (its dry run: mkfs.xfs -f -N -d su=8k,sw=3 …/small.img)",
        "target 'typo': mkfs.ext4 refuses its options on 300 MB: Invalid filesystem option "
        "set: has_jornal (its dry run: mkfs.ext4 -F -n -O has_jornal -E "
        "lazy_itable_init=0,lazy_journal_init=0 …/typo.img)",
        "target 'xfs-log': mkfs.xfs refuses its options on 1 GB: Log size must be at least "
        "64MB. (its dry run: mkfs.xfs -f -N -l logdev=…/xfs-log-log.img,size=16777216 "
        "…/xfs-log.img)",
    ]


def test_what_mkfs_accepts_passes_and_its_scratch_files_are_gone(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    ran = []
    with proc.watching(lambda argv, result: ran.append(result) if result else None):
        assert (
            mkfs_problems(
                plan(
                    'name = "x"\nfs = "xfs"\nsize = "1G"\nlog_size = "64M"\n'
                    'mkfs = ["-b", "size=4096", "-d", "agcount=8"]',
                    'name = "e"\nfs = "ext4"\nsize = "300M"\nlog_size = "16M"\nmkfs = ["-b", "4096"]',
                    # three 300 MB images striped: mkfs sees about 900 MB and the computed sunit
                    'name = "s"\nfs = "xfs"\nsize = "300M"\nimages = 3\n'
                    'volume = { kind = "lvm-stripe", stripe = "8K" }',
                    'name = "d"\ndir = "/tmp"',
                )
            )
            == []
        )
    # one dry run per made target, each on a file in the scratch directory, all gone now
    assert [(Path(r.argv[0]).name, r.ok) for r in ran] == [
        ("mkfs.xfs", True),
        ("mkfs.ext4", True),
        ("mkfs.xfs", True),
    ]
    assert all(r.argv[-1].startswith(str(tmp_path)) for r in ran)
    assert ran[2].argv[1:5] == ("-f", "-N", "-d", "sunit=16,swidth=48")  # the stripe's
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "target, size",
    [
        ('name = "a"\nfs = "xfs"\nsize = "300M"', 300 * 2**20),
        (
            'name = "a"\nfs = "xfs"\nsize = "300M"\nimages = 3\nvolume = { kind = "md-raid0" }',
            900 * 2**20,
        ),
        (
            'name = "a"\nfs = "xfs"\nsize = "300M"\nimages = 3\nvolume = { kind = "md-raid1" }',
            300 * 2**20,
        ),
        (
            'name = "a"\nfs = "xfs"\nsize = "300M"\nimages = 4\nvolume = { kind = "md-raid10" }',
            600 * 2**20,
        ),
        ('name = "a"\nfs = "xfs"\ndevice = "/dev/pgfsbench-no-such-disk"', None),
    ],
)
def test_the_size_mkfs_formats(target, size) -> None:
    assert formatted_bytes(plan(target).targets[0]) == size


def test_the_reason_is_mkfs_own_words_without_banner_or_usage() -> None:
    assert (
        refusal("mke2fs 1.47.0 (5-Feb-2023)\nInvalid filesystem option set: x\n")
        == "Invalid filesystem option set: x"
    )
    assert (
        refusal("unknown option -m relink=1\nUsage: mkfs.xfs\n/* blocksize */ [-b]\n")
        == "unknown option -m relink=1"
    )
    assert refusal("") == "no reason given"


def test_plan_check_refuses_in_one_line_with_exit_2(tmp_path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(
        'name = "p"\n[[targets]]\nname = "x"\nfs = "xfs"\nsize = "1G"\n'
        'mkfs = ["-m", "relink=1"]\n' + TAIL
    )
    result = CliRunner().invoke(app, ["plan", "check", str(path)], env={"COLUMNS": "400"})
    assert result.exit_code == exits.USAGE == 2
    assert result.stderr.strip() == (
        "error: target 'x': mkfs.xfs refuses its options on 1 GB: unknown option -m "
        "relink=1 (its dry run: mkfs.xfs -f -N -m relink=1 …/x.img); fix mkfs, size or "
        "log_size in the plan"
    )
    with pytest.raises(UserError, match="unknown option -m relink=1"):
        check_mkfs(plan('name = "x"\nfs = "xfs"\nsize = "1G"\nmkfs = ["-m", "relink=1"]'))
