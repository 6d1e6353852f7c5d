"""LVM striped logical volumes joining a target's members into one block device.

The XFS-vs-ext4 study stripes three disks: ``pvcreate`` each, ``vgcreate`` a group of them,
``lvcreate -i 3 -I 8`` over all its space. Each step is in the ledger before it
runs (a physical volume per member, the group, the volume); the releasers undo
them in reverse: lvremove, vgremove, pvremove. Command construction is apart from
running it, so it is unit-tested on machines without device-mapper.
"""

from __future__ import annotations

import os
from pathlib import Path

from pgfsbench import proc
from pgfsbench.errors import CommandFailed, UserError
from pgfsbench.ledger import releaser
from pgfsbench.provision.members import current_device
from pgfsbench.provision.target import Provisioning

# LVM warns about every inherited descriptor on stderr: noise in the recorded output.
LVM_ENV = {"LVM_SUPPRESS_FD_WARNINGS": "1"}


KERNEL_FIX = "modprobe dm_mod, or boot a kernel built with CONFIG_BLK_DEV_DM"


def unavailable_reason() -> str | None:
    """Why striped logical volumes cannot be made here, with the fix; None if they can."""
    if not _has_device_mapper():
        return (
            "the running kernel has no device-mapper, which LVM volumes need (no "
            f"device-mapper in /proc/misc, no /sys/module/dm_mod): {KERNEL_FIX}"
        )
    if proc.which("lvcreate") is None:
        return "lvcreate is missing: apt-get install lvm2"
    return None


def _has_device_mapper() -> bool:
    try:
        misc = Path("/proc/misc").read_text().split()
    except OSError:
        misc = []
    return "device-mapper" in misc or Path("/sys/module/dm_mod").is_dir()


def pvcreate_argv(member: str) -> list[str]:
    return ["pvcreate", "--yes", member]


def vgcreate_argv(vg: str, members: list[str]) -> list[str]:
    return ["vgcreate", "--yes", vg, *members]


def lvcreate_argv(vg: str, lv: str, stripes: int, stripe_bytes: int) -> list[str]:
    """The study's ``lvcreate -i 3 -I 8`` over all the group's space (-I in KiB)."""
    return [
        "lvcreate",
        "--yes",
        "-i",
        str(stripes),
        "-I",
        f"{stripe_bytes // 1024}k",
        "-l",
        "100%FREE",
        "-n",
        lv,
        vg,
    ]


def lv_path(vg: str, lv: str) -> str:
    return f"/dev/{vg}/{lv}"


def _run(argv: list[str], commands: list | None = None) -> proc.CommandResult:
    result = proc.run([proc.which(argv[0]) or argv[0], *argv[1:]], env=LVM_ENV, check=False)
    if commands is not None:
        commands.append(result)
    return result


def create_striped_volume(
    vg: str, lv: str, stripe_bytes: int, members: list[dict], p: Provisioning
) -> str:
    """The logical volume striped over ``members`` (member records); every step in the
    ledger before it runs."""
    for member in members:
        p.hold("lvm-pv", member=member)
        if not (result := _run(pvcreate_argv(member["device"]), p.commands)).ok:
            raise CommandFailed(result)
    p.hold("lvm-vg", vg=vg)
    if not (result := _run(vgcreate_argv(vg, [m["device"] for m in members]), p.commands)).ok:
        raise CommandFailed(result)
    p.hold("lvm-lv", vg=vg, lv=lv)
    if not (result := _run(lvcreate_argv(vg, lv, len(members), stripe_bytes), p.commands)).ok:
        raise CommandFailed(result)
    path = lv_path(vg, lv)
    if not os.path.exists(path):
        raise UserError(f"lvcreate reported success but {path} does not exist")
    return os.path.realpath(path)


def _problem(what: str, result: proc.CommandResult) -> list[str]:
    return [] if result.ok else [f"could not {what}: {(result.stderr or result.stdout).strip()}"]


def _vg_exists(vg: str) -> bool:
    return _run(["vgs", "--noheadings", "-o", "vg_name", vg]).ok


@releaser("lvm-lv")
def remove_lv(res: dict) -> list[str]:
    if not _vg_exists(res["vg"]):
        return []
    lvs = _run(["lvs", "--noheadings", "-o", "lv_name", res["vg"]])
    if res["lv"] not in lvs.stdout.split():
        return []  # never made (lvcreate failed) or already removed
    return _problem(
        f"remove logical volume {res['vg']}/{res['lv']}",
        _run(["lvremove", "-f", f"{res['vg']}/{res['lv']}"]),
    )


@releaser("lvm-vg")
def remove_vg(res: dict) -> list[str]:
    if not _vg_exists(res["vg"]):
        return []
    return _problem(f"remove volume group {res['vg']}", _run(["vgremove", "-f", res["vg"]]))


@releaser("lvm-pv")
def remove_pv(res: dict) -> list[str]:
    device = current_device(res["member"])
    if device is None:
        return []  # its loop is gone: the image (and its label) goes with it
    if not _run(["pvs", "--noheadings", device]).ok:
        return []  # not a physical volume (pvcreate never ran, or already wiped)
    return _problem(f"wipe the LVM label on {device}", _run(["pvremove", "-ff", "-y", device]))
