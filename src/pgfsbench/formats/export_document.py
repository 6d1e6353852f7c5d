"""The JSON export of a stored campaign (``export --format json``), as typed
dictionaries: ``campaign_data`` (formats/json.py) and ``target_provenance``
(formats/target_provenance.py) are annotated with them, so mypy checks every key they write,
and ``pgfsbench schema export`` generates the JSON Schema from them
(formats/json_schema.py). A field added to a writer is added here, with its description
as the docstring under it; the tests validate real exports against the generated schema.

Imported by the writers only for their annotations, and by the schema command.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, NotRequired

from pydantic import ConfigDict, Field, with_config
from typing_extensions import TypedDict  # pydantic reads typing's only from Python 3.12

from pgfsbench.formats.comparison_document import ComparisonData, Direction

CLOSED = ConfigDict(use_attribute_docstrings=True, extra="forbid")
# Free-form facts recorded as the program found them: the keys below are described, and
# results from older or newer versions may lack some or have others.
OPEN = ConfigDict(use_attribute_docstrings=True)

Level = Literal["safe", "may lose recent commits", "not crash-safe"]
TargetStatus = Literal["pending", "running", "ok", "skipped", "failed", "interrupted"]
RunStatus = Literal["ok", "failed", "interrupted", "running", "superseded", "redone"]


@with_config(OPEN)
class Host(TypedDict, total=False):
    """The machine and its tools, recorded at the start (what the report's Host section
    shows). Results from older versions lack some facts."""

    hostname: str
    machine_id: str | None
    """/etc/machine-id: tells hosts with one hostname apart"""
    os: str | None
    """PRETTY_NAME of /etc/os-release"""
    arch: str
    kernel: str
    """uname -r"""
    kernel_cmdline: str
    """/proc/cmdline"""
    cpu: str
    """CPU model"""
    cpus: int | None
    memory_mb: int
    """MemTotal in MiB"""
    root: bool
    """ran as root (needed to make filesystems)"""
    postgresql: str | None
    """the default PostgreSQL: version (origin, bin directory)"""
    postgresql_build_options: str | None
    """pg_config --configure"""
    pgfsbench: str
    """version (git revision)"""
    tools: dict[str, str | None]
    """tool → its version line (null: not installed)"""
    cpu_latency: dict
    """the CPUs' wake-up latency the plan's [machine] asked to hold (absent: nothing
    asked): asked_us, held, effective_us (what the kernel holds, read back), idle_driver
    (the kernel's cpuidle driver), why_not"""


@with_config(CLOSED)
class CampaignFacts(TypedDict):
    """What ran, when, where, and with which plan."""

    id: str
    plan: str
    """the plan's name"""
    status: str
    """ok, partial, failed, interrupted, killed, running"""
    started: float | None
    """epoch seconds"""
    ended: float | None
    """epoch seconds; null: not ended"""
    host: Host
    pgfsbench_version: str
    """of the program that ran the campaign"""
    plan_recorded: dict[str, Any]
    """the plan as the campaign recorded it (composed: matrices expanded, defaults filled
    in)"""


@with_config(OPEN)
class Resume(TypedDict):
    """A time the campaign was resumed (run --resume)."""

    at: float | None
    """epoch seconds"""
    from_round: int
    first_round: NotRequired[int]
    settling_again: NotRequired[bool]
    superseded_runs: int
    """runs of unfinished rounds, kept and never counted"""
    spent_minutes: NotRequired[float]
    """the minutes spent before"""
    previous_status: NotRequired[str]


@with_config(OPEN)
class Decision(TypedDict):
    """A headline comparison as the schedule decided it (a pair of targets on a
    measurement)."""

    workload: str
    label: str
    a: str
    b: str
    outcome: Literal["higher", "lower", "equivalent", "inconclusive", "na"]


@with_config(OPEN)
class DisturbedRun(TypedDict):
    """A run found disturbed at the end of its round, with the evidence."""

    round: int
    target: str
    workload: str
    label: str
    action: Literal["run again", "trimmed", "kept"]
    busy_s: float
    """seconds of the run with a cause at or above its threshold"""
    monitored_s: float
    causes: dict[str, dict[str, Any]]
    """other_cpu (% of all CPUs), steal (%), other_disk (MB/s beyond the loop device):
    its busy seconds, their mean level, the run's mean and the quietest run's of its
    round"""
    text: str


@with_config(OPEN)
class Redo(TypedDict):
    """Disturbed visits and the time spent running them again."""

    share: float
    """the most time spent so, as a share of the time spent measuring ([repetitions]
    redo)"""
    spent_s: float
    """seconds spent running visits again (on top of the budget)"""
    allowance_s: float
    """the most they could have taken when the schedule was last recorded"""
    from_budget_s: NotRequired[float]
    """seconds of runs again and waits for quiet past the allowance, paid from an 'auto'
    plan's budget (absent in results from before)"""
    disturbed: list[DisturbedRun]


@with_config(OPEN)
class Schedule(TypedDict, total=False):
    """How the rounds ran: count, order, seed, design, visits, why each measurement
    stopped, the headline decisions (empty in results from before it was recorded)."""

    count: int | str
    """rounds asked: a number, or 'auto' (until decided or the time budget is spent)"""
    order: str
    """the order of the targets within a round"""
    seed: int | None
    """of the random order; null: not random"""
    fresh: bool
    """a fresh filesystem and cluster for each round"""
    settle: bool
    """a settling round (0) ran first, never counted"""
    design: dict[str, Any] | None
    """the sequential design of an 'auto' count: alpha, noise, equivalence, the looks, the
    time budget; null: a fixed count"""
    rounds: int | None
    """the last counted round that ended"""
    visits: list[tuple[int, str]]
    """[round, target] in the order they ran"""
    plan_sha256: str
    """SHA-256 of the recorded (composed) plan; a resume checks it"""
    measurements: list[dict[str, Any]]
    """why each measurement stopped: its reason, round, comparisons left undecided"""
    stops: list[dict[str, Any]]
    """why each cell (target × measurement) stopped"""
    resumes: list[Resume]
    """each time the campaign was resumed (run --resume)"""
    decisions: list[Decision]
    redo: Redo
    """visits disturbed by others' load, run again or kept (absent in results from before
    it was recorded)"""


@with_config(CLOSED)
class Command(TypedDict):
    """A command pgfsbench ran (never through a shell) and its whole output."""

    argv: list[str]
    exit_code: int | None
    stdout: str
    stderr: str


@with_config(CLOSED)
class Knob(TypedDict):
    """A kernel setting the plan changed while the target ran, restored afterwards."""

    before: str
    """read before it was set (restored to it)"""
    asked: str | None
    """what the plan asked, as written to the kernel; null: not asked, recorded because an
    asked one changes it (the partner of a linked sysctl, a queue setting the scheduler
    resets)"""
    during: str
    """read back while the target ran (the kernel may round, clamp or choose)"""


@with_config(CLOSED)
class Geometry(TypedDict):
    """The filesystem as made, read by its own tool (dumpe2fs -h, xfs_info, btrfs
    inspect-internal dump-super, zfs get)."""

    tool: list[str] | None
    """the argv that read it; null: no tool for this filesystem"""
    facts: dict[str, Any]
    """the settled properties parsed from its output (block size, agcount, sunit/swidth,
    features...)"""
    raw: str
    """its whole output"""
    error: str | None
    """why it could not be read"""
    extra: list[Geometry]
    """further readers (btrfs filesystem df, zpool get)"""


@with_config(CLOSED)
class Postgres(TypedDict):
    """The PostgreSQL server as it ran on the target."""

    version: str
    """SHOW server_version"""
    bindir: str | None
    """its bin directory"""
    data_checksums: bool | None
    """SHOW data_checksums on the running cluster (on by default from PostgreSQL 18, off
    before; a plan sets it with postgres.data_checksums); null: recorded before it was
    kept"""
    settings: dict[str, str]
    """every setting not at its default, as the server shows it (current_setting); not
    those the client that read them set for its own session (psql's application_name)"""
    io_settings: dict[str, str | None]
    """every durability and I/O setting the server ran with, defaults included (fsync,
    synchronous_commit, full_page_writes, wal_sync_method, wal_level, data_checksums,
    io_method..., those of its version), as the server shows them; null: not recorded
    (see io_settings_recorded)"""
    io_settings_recorded: bool
    """true: io_settings were read from the running server; false: the campaign was
    recorded before pgfsbench kept them, and io_settings holds only what it did record
    (a setting not at its default, data_checksums); each null one was at the server's
    default, whose value was not recorded"""
    commands: list[list[str]]
    """initdb, pg_ctl and the other commands that made and started the cluster"""
    build_options: str | None
    """pg_config --configure of the target's own binaries (pg_bin), when recorded"""


@with_config(CLOSED)
class Durability(TypedDict):
    """The target's crash-safety class and why."""

    level: Level
    """by rule, from the effective mount options and PostgreSQL's settings"""
    reasons: list[str]
    crash_test: str | None
    """what a crash test measured on the target, beside the rule (null: none ran)"""
    measured_level: Level | None
    """the class the crash test found (null: none ran); the recommendation goes by the
    worse of the two"""


@with_config(CLOSED)
class MountOptionChange(TypedDict):
    """A mount option asked, and what the kernel made of it."""

    option: str
    status: Literal["kept", "equivalent", "default", "implied", "changed", "ignored"]
    effective: str | None
    """as the kernel lists it"""
    note: str


@with_config(CLOSED)
class TargetProvenance(TypedDict):
    """A target's recorded provenance: what the report's Targets section shows, in the
    stored values. Every key is always there: a target recorded before a fact was kept,
    or one that failed before it was made, has null or empty values."""

    plan: dict[str, Any]
    """the target's plan entry, as asked (mkfs, mount, sysctls, queue, postgres...)"""
    device: str | None
    """the block device formatted and mounted (a loop device, a named device, an md array
    or LV); null: a dir target or never made"""
    devices: list[str]
    """every member it was made on, in order"""
    log_device: str | None
    """the external log or journal device"""
    layout: dict[str, Any]
    """how several members were joined: volume kind, stripe geometry, computed mkfs
    options"""
    mounted_fs_type: str | None
    """the type the kernel mounted it as"""
    mount_point: str | None
    workdir: str | None
    """pgfsbench's own directory on it"""
    notes: list[str]
    """facts provisioning noted (loop direct I/O on)"""
    mount_option_changes: list[MountOptionChange]
    """each mount option asked, and what the kernel made of it"""
    mkfs: list[Command]
    """the commands that made the filesystem (mkfs, mke2fs for an external journal,
    zpool/zfs create), with their argv and output"""
    commands: list[Command]
    """every provisioning command in order (losetup, mkfs, mount...)"""
    geometry: Geometry | None
    """null: never made, or recorded before geometry was kept"""
    device_facts: dict[str, Any] | None
    """the device from /sys: size, rotational, block sizes, scheduler, read_ahead_kb,
    nr_requests, write cache, model, loop backing file and direct I/O"""
    backing_device: dict[str, Any] | None
    """the disk under a loop image (same facts), and the filesystem the image lives on"""
    sysctls_read: dict[str, int | str]
    """the writeback and memory sysctls (and every one the plan set) read while the target
    ran"""
    sysctls: dict[str, Knob]
    """sysctls the plan set: before, asked, during"""
    queue: dict[str, Knob]
    """block queue settings the plan set on the target's device: before, asked, during"""
    restore_problems: list[str]
    """settings that could not be put back afterwards"""
    throttle: dict[str, Any]
    """the cgroup I/O limits applied to the target's device (empty: none)"""
    memory: dict[str, Any]
    """the memory cgroup the server and its page cache were held in (empty: none): limit
    as asked and limit_bytes, mechanism, cgroup, the files written and read back
    (effective), peak_bytes (the highest over the visits), failcnt and memsw_failcnt
    (cgroup v1) or max_events (v2), summed over the visits, and visits, shared_with
    (cgroup v2: the throttle's cgroup it was made in)"""
    postgres: Postgres | None
    """null: the server never started on this target"""
    remade: list[dict[str, Any]]
    """each time a resumed campaign made the target again (a new mkfs): at which round,
    and what differs"""


@with_config(CLOSED)
class Target(TargetProvenance):
    """A target: how it was made, what the kernel and PostgreSQL ran with."""

    name: str
    kind: str
    """loop, device or dir"""
    fs: str
    status: TargetStatus
    reason: str | None
    """why it was skipped or failed"""
    effective_mount_options: list[str]
    durability: Durability | None
    """null: never mounted, nothing to classify"""
    caveats: list[str]


@with_config(CLOSED)
class Bound(TypedDict):
    """What limited a run."""

    classes: list[str]
    storage_bound: bool
    reasons: dict[str, str]


@with_config(CLOSED)
class Disturbed(TypedDict):
    """Someone else's load on the machine during a run (the monitors' evidence, never
    the run's result): run again in its round, or kept and left out of the statistics."""

    action: Literal["run again", "trimmed", "kept"]
    """run again: the run is 'redone' and a later run of its round counts instead;
    trimmed: the burst touched part of it, so it stays 'ok' and its headline counts as
    measured over the seconds no burst touched (its other figures are left out); kept:
    the allowance for runs again was spent (or it was disturbed every time), so it stays
    'ok' and is left out of every statistic"""
    why: str
    """the evidence: which cause, how much, during how many of its seconds"""


@with_config(CLOSED)
class RunMetric(TypedDict):
    """One number a run measured."""

    name: str
    """stable dotted name, e.g. pgbench.tps"""
    value: float | None
    """null: unsupported, not finite, or not applicable (never zero)"""
    unit: str
    direction: Direction
    note: NotRequired[str]
    """what the metric is and how it was read, where it says more than its name: for what
    a filesystem offers PostgreSQL (clone-db, fs-snapshot, compression), its crash-safety
    and restore notes; absent when none"""


@with_config(CLOSED)
class RunSeries(TypedDict):
    """A per-second series."""

    unit: str
    points: Sequence[tuple[float | None, float | None]]
    """[seconds from the run's start, value]"""


@with_config(CLOSED)
class RunCommand(TypedDict):
    """A tool the run ran (pgbench, pg_test_fsync, fio, dd, pg_basebackup, psql...), as
    it ran it: never through a shell, as the PostgreSQL user."""

    argv: list[str]
    """the exact argument list"""
    exit_code: int | None
    kind: str
    """what its kept output is: command (stdout and stderr as text), fio-json (fio's JSON
    report)"""
    output: str
    """where its output is kept, relative to the results directory"""


@with_config(CLOSED)
class Run(TypedDict):
    """One run of a workload on a target in a round."""

    target: str
    fs: str | None
    workload: str
    """the workload type, e.g. pgbench, fsync"""
    label: str
    """the measurement within a sweep (clients=8), or empty"""
    repetition: Annotated[int, Field(ge=0)]
    """the round; 0 is a settling round, never counted"""
    params: dict[str, Any]
    """the workload's parameters as the plan set them"""
    status: RunStatus
    """superseded: run again when the campaign was resumed; redone: disturbed by others'
    load on the machine and run again in its round (both kept, never counted)"""
    error: str | None
    started: float | None
    """epoch seconds"""
    ended: float | None
    """epoch seconds; null: not ended"""
    commands: list[RunCommand]
    """every tool the run ran, in order, with its exact argv (empty for results whose
    kept outputs were left out)"""
    bound: Bound | None
    """what limited the run (null without bound.* metrics)"""
    disturbed: Disturbed | None
    """null: not disturbed (or recorded before pgfsbench looked)"""
    metrics: list[RunMetric]
    series: dict[str, RunSeries]
    """per-second series by metric name"""


@with_config(CLOSED)
class ExportDocument(TypedDict):
    """One results directory: every target with its whole provenance (how it was made,
    what the kernel and PostgreSQL ran with) and every run with its exact commands,
    metrics and series, the host, the schedule, and the comparison the report shows."""

    schema_version: Literal[4]
    """the layout this document follows: it goes up when a field is removed or changes
    meaning; new fields may appear without it"""
    pgfsbench_version: str
    """of the program that wrote this document"""
    kind: Literal["export"]
    campaign: CampaignFacts
    schedule: Schedule
    targets: list[Target]
    runs: list[Run]
    comparison: ComparisonData
    """medians, CIs and verdicts per cell: the same numbers as the report"""
