"""What can be known to fail before anything is made: refused up front, exit code 2.

A plan that cannot work should say so in a second, not as a failed target an
hour into a campaign: a pg_bin that is not PostgreSQL, settings the server
refuses, an image too small for its filesystem, mkfs options mkfs refuses, a
device that may not be formatted, sysctl and queue values the kernel would
refuse, data checksums initdb cannot set. ``run`` refuses on any of these before it
changes anything; ``plan check`` runs the same checks that need no command-line
permission.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from pgfsbench.errors import UserError
from pgfsbench.filesystems.registry import find
from pgfsbench.plan.model import Plan
from pgfsbench.postgres.binaries import PgBinaries, find_binaries
from pgfsbench.postgres.checksums import initdb_flags
from pgfsbench.postgres.config import settings_problems
from pgfsbench.provision.knobs import SYS_BLOCK, standin_device
from pgfsbench.provision.knobs import check_knobs as judge_knobs
from pgfsbench.provision.safety import check_formattable


def target_binaries(plan: Plan, stage: bool = True) -> dict[str, PgBinaries]:
    """Each target's own PostgreSQL (``pg_bin``): a wrong one is a plan error."""
    found = {}
    for t in plan.targets:
        if t.pg_bin:
            try:
                found[t.name] = find_binaries(t.pg_bin, stage=stage)
            except UserError as exc:
                raise UserError(f"target '{t.name}': pg_bin: {exc}") from None
    return found


def check_sizes(plan: Plan) -> None:
    for t in plan.targets:
        recipe = find(t.fs)
        if t.kind == "loop" and recipe is not None and t.size_mb < recipe.min_size_mb:
            raise UserError(f"target '{t.name}': {t.fs} needs an image of at least "
                            f"{recipe.min_size_mb} MB, the plan gives {t.size_mb} MB: set "
                            f"size = \"{recipe.min_size_mb}M\" or more")


def check_dirs(plan: Plan) -> None:
    for t in plan.targets:
        if t.kind == "dir" and not t.dir.is_dir():
            raise UserError(f"target '{t.name}': directory {t.dir} does not exist: create it "
                            "(pgfsbench only ever makes its own sub-directory inside) or fix "
                            "'dir' in the plan")


def check_settings(plan: Plan, bins_for) -> None:
    """The server each target runs judges its settings (``bins_for(name)``), and its
    initdb whether it can make the cluster with or without data checksums as asked."""
    for t in plan.targets:
        bins = bins_for(t.name)
        try:
            initdb_flags(bins, plan.data_checksums(t))
        except UserError as exc:
            raise UserError(f"target '{t.name}': {exc}") from None
        if problems := settings_problems(bins, plan.server_settings(t)):
            raise UserError(f"target '{t.name}': PostgreSQL {bins.version} refuses its "
                            f"settings: {'; '.join(problems)}; fix [postgres.settings] in "
                            "the plan")


def check_knobs(plan: Plan) -> None:
    """Each target's sysctls and queue settings, judged by this kernel's own files: the
    names exist and are writable, the values are of the type they hold (a loop target's
    queue by a stand-in loop device: its own is made later)."""
    for t in plan.targets:
        if not (t.sysctls or t.queue):
            continue
        device = None
        if t.queue and t.kind == "loop":
            device = standin_device()
        elif t.queue and t.member_devices:
            own = str(t.member_devices[0])
            # not there (yet): the run says so before it formats anything
            device = own if (SYS_BLOCK / os.path.basename(os.path.realpath(own))).exists() \
                else None
        try:
            judge_knobs(dict(t.sysctls), dict(t.queue), device)
        except UserError as exc:
            raise UserError(f"target '{t.name}': {exc}; fix its sysctls or queue in the "
                            "plan") from None


def check_devices(plan: Plan, allowed: Iterable[str], wipe_signatures: bool) -> None:
    # device_target checks again right before mkfs, and formats only what it checked
    for t in plan.targets:
        for device in t.member_devices:
            try:
                check_formattable(str(device), allowed, wipe_signatures)
            except UserError as exc:
                raise UserError(f"target '{t.name}': {exc}") from None


def check_mkfs(plan: Plan) -> None:
    """Each target's mkfs options, judged by mkfs's own dry run at the target's size."""
    from pgfsbench.provision.mkfs_check import mkfs_problems

    if problems := mkfs_problems(plan):
        raise UserError("; ".join(problems) + "; fix mkfs, size or log_size in the plan")


def check_zfs_properties(plan: Plan) -> None:
    """ZFS targets' zfs and zpool properties, judged by the installed tools (zfs-fuse 0.7
    has no lz4 and no sync property; OpenZFS has both)."""
    if not any(t.fs == "zfs" and (t.zfs or t.zpool) for t in plan.targets):
        return
    from pgfsbench.provision.zfs import plan_problems, unavailable_reason

    if unavailable_reason():
        return  # no ZFS here: the targets are skipped with the reason
    if problems := plan_problems(plan.targets):
        raise UserError("; ".join(problems) + "; fix the target's zfs/zpool table in the plan")
