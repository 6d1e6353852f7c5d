"""What can be known to fail before anything is made: refused up front, exit code 2.

A plan that cannot work should say so in a second, not as a failed target an
hour into a campaign: a pg_bin that is not PostgreSQL, settings the server
refuses, an image too small for its filesystem, mkfs options mkfs refuses, a
device that may not be formatted, sysctl and queue values the kernel would
refuse, data checksums initdb cannot set. ``run`` refuses on any of these before it
changes anything; ``plan check`` runs the same checks that need no command-line
permission.

Each check is a ``Check`` that declares the stages it applies to, declared as an entry
point of the ``pgfsbench.checks`` group (extensions.py; the shipped ones at the end of
this module, named in pyproject.toml): ``run_checks(plan, stage, context)`` runs those of
a stage, in their order, so a new check is one declaration and one entry point.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pgfsbench import extensions
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
            raise UserError(
                f"target '{t.name}': {t.fs} needs an image of at least "
                f"{recipe.min_size_mb} MB, the plan gives {t.size_mb} MB: set "
                f'size = "{recipe.min_size_mb}M" or more'
            )


def check_dirs(plan: Plan) -> None:
    for t in plan.targets:
        if t.kind == "dir" and (t.dir is None or not t.dir.is_dir()):
            raise UserError(
                f"target '{t.name}': directory {t.dir} does not exist: create it "
                "(pgfsbench only ever makes its own sub-directory inside) or fix "
                "'dir' in the plan"
            )


def check_settings(plan: Plan, bins_for) -> None:
    """The server each target runs judges its settings (``bins_for(name)``), and its
    initdb whether it can make the cluster with or without data checksums as asked."""
    for t in plan.targets:
        bins = bins_for(t.name)
        try:
            initdb_flags(bins, plan.data_checksums(t))
        except UserError as exc:
            raise UserError(f"target '{t.name}': {exc}") from None
        settings = plan.server_settings(t)
        if problems := settings_problems(bins, settings):
            if why := _io_uring_missing(settings, problems, bins):
                raise UserError(f"target '{t.name}': {why}")
            raise UserError(
                f"target '{t.name}': PostgreSQL {bins.version} refuses its "
                f"settings: {'; '.join(problems)}; fix [postgres.settings] in "
                "the plan"
            )


def _io_uring_missing(settings: dict[str, object], problems: list[str], bins) -> str | None:
    """Why io_method = io_uring cannot run on this server (built without liburing: its
    io_method offers no io_uring), or None when that is not what the server refused."""
    if str(settings.get("io_method", "")).strip().lower() != "io_uring":
        return None
    # a server before 18 has no io_method at all: the plain refusal says that
    if not any(p.startswith('invalid value for parameter "io_method"') for p in problems):
        return None
    offered = next(
        (p.split(":", 1)[1].strip() for p in problems if p.startswith("Available values:")),
        "sync, worker",
    )
    return (
        f"io_method = io_uring needs a PostgreSQL built with liburing (configure "
        f"--with-liburing); PostgreSQL {bins.version} in {bins.bindir} was built "
        f'without it (its io_method offers {offered}): use io_method = "worker" or '
        '"sync", or point pg_bin at a build with liburing'
    )


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
            device = own if (SYS_BLOCK / os.path.basename(os.path.realpath(own))).exists() else None
        try:
            judge_knobs(dict(t.sysctls), dict(t.queue), device)
        except UserError as exc:
            raise UserError(
                f"target '{t.name}': {exc}; fix its sysctls or queue in the plan"
            ) from None


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
    from pgfsbench.provision.zfs_pool import plan_problems, unavailable_reason

    if unavailable_reason():
        return  # no ZFS here: the targets are skipped with the reason
    if problems := plan_problems(plan.targets):
        raise UserError("; ".join(problems) + "; fix the target's zfs/zpool table in the plan")


# --- the checks, as the stages run them ----------------------------------------------------

RUN = "run"  # before a campaign makes anything: every check
PLAN_CHECK = "plan check"  # on any machine, without the command line's permissions
STAGES = (RUN, PLAN_CHECK)


@dataclass(frozen=True)
class CheckContext:
    """What a check may need beyond the plan."""

    # Each target's PostgreSQL (run: already found and staged); None: plan check, which
    # looks for the binaries here without staging them.
    bins_for: Callable[[str], PgBinaries] | None = None
    allow_format: Iterable[str] = ()  # run --allow-format
    wipe_signatures: bool = False  # run --wipe-signatures


@dataclass(frozen=True)
class Check:
    """One preflight check: raises UserError (exit 2) on what would fail; returns what it
    could not check here (plan check shows those as warnings)."""

    name: str  # its entry point's name
    stages: frozenset[str]  # where it applies: RUN and/or PLAN_CHECK
    order: int  # lower first
    check: Callable[[Plan, CheckContext], list[str]] = field(repr=False)

    def __post_init__(self) -> None:
        if unknown := set(self.stages) - set(STAGES):
            raise ValueError(f"check {self.name!r}: no stage {sorted(unknown)}")


def contract(name: str, obj: object) -> str | None:
    """What an entry of the group must be: a Check named as the entry."""
    if not isinstance(obj, Check):
        return f"not a Check but {type(obj).__name__}"
    if obj.name != name:
        return f"the check is named '{obj.name}', the entry point '{name}'"
    return None


def checks(stage: str) -> list[Check]:
    """The checks of ``stage``, in their order."""
    if stage not in STAGES:
        raise ValueError(f"no stage {stage!r} (stages: {', '.join(STAGES)})")
    found = extensions.load_all(extensions.CHECKS, contract).values()
    return sorted((c for c in found if stage in c.stages), key=lambda c: (c.order, c.name))


def run_checks(plan: Plan, stage: str, context: CheckContext) -> list[str]:
    """Run the checks of ``stage``: the first refusal raises; returns what could not be
    checked here."""
    return [note for c in checks(stage) for note in c.check(plan, context)]


def _sizes(plan: Plan, context: CheckContext) -> list[str]:
    check_sizes(plan)
    return []


def _dirs(plan: Plan, context: CheckContext) -> list[str]:
    check_dirs(plan)
    return []


def _knobs(plan: Plan, context: CheckContext) -> list[str]:
    check_knobs(plan)
    return []


def _settings(plan: Plan, context: CheckContext) -> list[str]:
    """The run's binaries judge the settings; plan check asks the ones found here (a
    warning when there are none)."""
    bins_for = context.bins_for
    if bins_for is None:
        try:  # look, don't stage: a plan check changes nothing
            default = find_binaries(stage=False)
            bins = {**{t.name: default for t in plan.targets}, **target_binaries(plan, stage=False)}
        except UserError as exc:
            return [f"PostgreSQL settings not checked against a server: {exc}"]
        bins_for = bins.__getitem__
    check_settings(plan, bins_for)
    return []


def _devices(plan: Plan, context: CheckContext) -> list[str]:
    check_devices(plan, context.allow_format, context.wipe_signatures)
    return []


def _mkfs(plan: Plan, context: CheckContext) -> list[str]:
    check_mkfs(plan)
    return []


def _zfs(plan: Plan, context: CheckContext) -> list[str]:
    """The installed zfs and zpool judge the ZFS targets' properties; a warning instead
    when there is no ZFS here to ask."""
    if not any(t.fs == "zfs" and (t.zfs or t.zpool) for t in plan.targets):
        return []
    from pgfsbench.provision.zfs_pool import unavailable_reason

    if reason := unavailable_reason():
        return [f"ZFS properties not checked against zfs: {reason}"]
    check_zfs_properties(plan)
    return []


def _memory(plan: Plan, context: CheckContext) -> list[str]:
    """A memory size needs the kernel's memory controller (plan check, anywhere) and, to
    run, a memory cgroup pgfsbench may make (root, a writable hierarchy)."""
    if not any(plan.memory_limit(t) is not None for t in plan.targets):
        return []
    from pgfsbench.provision.memory import memory_controller_missing, memory_support

    reason = memory_support() if context.bins_for is not None else memory_controller_missing()
    if reason:
        raise UserError(reason)
    return []


BOTH = frozenset(STAGES)
# The order is run's: what is cheapest and most often wrong first, mkfs's dry runs late.
SIZES = Check("sizes", BOTH, 10, _sizes)
DIRS = Check("dirs", frozenset({RUN}), 20, _dirs)  # the plan may be checked elsewhere
KNOBS = Check("knobs", BOTH, 30, _knobs)
SETTINGS = Check("settings", BOTH, 40, _settings)
DEVICES = Check("devices", frozenset({RUN}), 50, _devices)  # needs --allow-format
MKFS = Check("mkfs", BOTH, 60, _mkfs)
ZFS = Check("zfs", BOTH, 70, _zfs)
MEMORY = Check("memory", BOTH, 15, _memory)  # cheap: two small files
