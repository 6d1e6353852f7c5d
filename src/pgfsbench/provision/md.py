"""Linux md RAID arrays (mdadm) joining a target's members into one block device.

The array is in the ledger before ``mdadm --create`` runs; its releaser stops it
and zeroes the md superblock on every member, so neither the kernel nor a later
mdadm --assemble scan picks the members up again. Command construction is here,
apart from running it, so it is unit-tested on machines without md.
"""

from __future__ import annotations

import os
from pathlib import Path

from pgfsbench import proc
from pgfsbench.errors import CommandFailed, UserError
from pgfsbench.ledger import releaser
from pgfsbench.provision.members import current_device
from pgfsbench.provision.target import Provisioning

LEVELS = {"md-raid0": "0", "md-raid1": "1", "md-raid10": "10"}


KERNEL_FIX = "modprobe md_mod, or boot a kernel built with CONFIG_BLK_DEV_MD"


def unavailable_reason() -> str | None:
    """Why md arrays cannot be made here, with the fix; None if they can."""
    if not Path("/proc/mdstat").exists():
        return (
            f"the running kernel has no md (software RAID) driver (no /proc/mdstat): {KERNEL_FIX}"
        )
    if proc.which("mdadm") is None:
        return "mdadm is missing: apt-get install mdadm"
    return None


def create_argv(array: str, kind: str, chunk_bytes: int, members: list[str]) -> list[str]:
    """``mdadm --create``: no questions (--run), a chunk only where the level has one."""
    argv = [
        "mdadm",
        "--create",
        array,
        "--run",
        "--metadata=1.2",
        f"--level={LEVELS[kind]}",
        f"--raid-devices={len(members)}",
    ]
    if kind != "md-raid1":  # mirrors have no chunk
        argv.append(f"--chunk={chunk_bytes // 1024}K")
    if kind == "md-raid1":
        argv.append("--bitmap=none")  # a write-intent bitmap is extra writes to measure
    return [*argv, *members]


def stop_argv(array: str) -> list[str]:
    return ["mdadm", "--stop", array]


def zero_argv(member: str) -> list[str]:
    return ["mdadm", "--zero-superblock", member]


def detail_argv(array: str) -> list[str]:
    return ["mdadm", "--detail", array]


def create_array(
    array: str, kind: str, chunk_bytes: int, members: list[dict], p: Provisioning
) -> str:
    """The array made from ``members`` (member records), in the ledger before it exists."""
    p.hold("md", array=array, members=members)
    result = proc.run(
        create_argv(array, kind, chunk_bytes, [m["device"] for m in members]), check=False
    )
    p.commands.append(result)
    if not result.ok:
        raise CommandFailed(result)
    if not os.path.exists(array):
        raise UserError(f"mdadm reported success but {array} does not exist")
    return os.path.realpath(array)


@releaser("md")
def stop_recorded(res: dict) -> list[str]:
    problems = []
    if os.path.exists(res["array"]):
        result = proc.run([proc.which("mdadm") or "mdadm", "--stop", res["array"]], check=False)
        if not result.ok:
            return [
                f"could not stop md array {res['array']}: "
                f"{(result.stderr or result.stdout).strip()}"
            ]
    for member in res["members"]:
        device = current_device(member)
        if device is None:
            continue  # its loop is gone: the image (and its superblock) goes with it
        result = proc.run(
            [proc.which("mdadm") or "mdadm", "--zero-superblock", device], check=False
        )
        if not result.ok:
            problems.append(
                f"could not zero the md superblock on {device}: "
                f"{(result.stderr or result.stdout).strip()}"
            )
    return problems
