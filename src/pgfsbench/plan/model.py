"""The plan file model: what to compare (targets) and how (workloads).

Validated strictly: an unknown key or a wrong type is an error that names the
key, never a silently ignored setting.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import Field, GetCoreSchemaHandler, field_validator, model_validator
from pydantic_core import core_schema

from pgfsbench.fields import Size, Strict
from pgfsbench.filesystems.mountoptions import mount_option_problems, unknown_mount_options
from pgfsbench.filesystems.registry import find, recipe, recipes
from pgfsbench.plan.design import Repetitions, Verdicts
from pgfsbench.plan.fsoptions import device_options
from pgfsbench.units import pg_memory_bytes, size_to_bytes, size_to_mb
from pgfsbench.workloads import registry
from pgfsbench.workloads.kind import WorkloadBase

NAME_PATTERN = r"^[a-z0-9][a-z0-9_.-]{0,39}$"
# A memory limit holds shared_buffers and at least this much beside it: the backends,
# the client connections' buffers, and a page cache worth the name.
MEMORY_MARGIN = 64 * 2**20
# --- workloads ------------------------------------------------------------------
# Each workload type is a kind: one module in pgfsbench.workloads that declares its
# params model (what its [[workloads]] table may hold), how it runs and what it costs
# (workloads/kind.py). The registry lists them; nothing here names a type.


if TYPE_CHECKING:
    # To the type checker a [[workloads]] table is what it is at run time: an instance of
    # some kind's params model.
    Workload = WorkloadBase
else:

    class Workload:
        """A [[workloads]] table: the params model of the kind its ``type`` names.

        The union is made from the registry whenever the schema is built, and the registry
        rebuilds Plan's schema when a kind is registered or unregistered: a kind added after
        this module was imported (a test's toy) is then a plan type like the shipped ones,
        with the same error messages, and plan loading needs no step of its own.
        """

        @classmethod
        def __get_pydantic_core_schema__(
            cls, source: Any, handler: GetCoreSchemaHandler
        ) -> core_schema.CoreSchema:
            models = tuple(k.params for k in registry.kinds())
            return handler.generate_schema(
                # Union of a runtime tuple of classes: `|` cannot spell it.
                Annotated[Union[models], Field(discriminator="type")]  # noqa: UP007
            )


# --- targets --------------------------------------------------------------------

SettingValue = str | int | float | bool
SYSCTL_NAME = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)+")  # a name, never a path
QUEUE_KEY = re.compile(r"[a-z][a-z0-9_]*")  # a file in the device's queue directory
# What a sysctl or queue value is written in: numbers, words, a vector ("4096 87380"),
# "write back"; never a separator or shell character (the kernel types are judged
# against this machine's files by provision/knobs.py).
KNOB_VALUE = re.compile(r"[A-Za-z0-9 \t._:,/+-]+")
ZFS_PROPERTY = re.compile(r"[a-z][a-z0-9_.:@-]*")  # a native or user (with a colon) property
ZFS_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.,_:+-]*")


# postgresql.conf's grammar for a parameter name: an identifier, or two joined by a dot
# (an extension's own setting, e.g. auto_explain.log_min_duration).
GUC_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?")
# Settings pgfsbench owns: the server listens only on a private socket that trusts its
# one user; postgresql.conf must not move that, read other files or point elsewhere.
OWNED_SETTINGS = {
    "listen_addresses": "the server listens on no TCP address",
    "port": "pgfsbench picks a free port",
    "unix_socket_directories": "the socket lives in a private directory",
    "unix_socket_permissions": "only the PostgreSQL user may use the socket",
    "unix_socket_group": "only the PostgreSQL user may use the socket",
    "data_directory": "the cluster lives on the target",
    "config_file": "pgfsbench writes the configuration",
    "hba_file": "authentication is trust on the private socket only",
    "ident_file": "authentication is trust on the private socket only",
    "include": "a configuration directive, not a setting",
    "include_dir": "a configuration directive, not a setting",
    "include_if_exists": "a configuration directive, not a setting",
}


class Postgres(Strict):
    """The PostgreSQL cluster made on each target: the plan's [postgres] for every target,
    a target's own postgres table over it (its settings merged key by key)."""

    settings: dict[str, SettingValue] = Field(
        {},
        description="postgresql.conf settings; checked against the server's own "
        "parameters before anything runs",
    )
    data_checksums: bool | None = Field(
        None,
        description="initdb --data-checksums (true) or --no-data-checksums (false); "
        "default: the server's own (on from PostgreSQL 18, off before)",
    )

    @field_validator("settings")
    @classmethod
    def _settings_valid(cls, v: dict[str, SettingValue]) -> dict[str, SettingValue]:
        from pgfsbench.plan.strings import control_character

        for key, value in v.items():
            if not GUC_NAME.fullmatch(key):
                raise ValueError(
                    f"'{key}' is not a PostgreSQL parameter name (letters, "
                    "digits and _, like shared_buffers, or ext.name)"
                )
            if why := OWNED_SETTINGS.get(key.lower()):
                raise ValueError(f"{key}: pgfsbench sets this itself ({why}); remove it")
            if isinstance(value, str) and (problem := control_character(value)):
                raise ValueError(f"{key}: the value contains {problem}")
        return v


class Throttle(Strict):
    """Limits on the target's own device for the processes pgfsbench starts (cgroup
    blkio / io.max): emulate a slower disk, e.g. a cloud volume's IOPS cap."""

    read_iops: int | None = Field(
        None, ge=1, description="read operations per second (default: no limit)"
    )
    write_iops: int | None = Field(
        None, ge=1, description="write operations per second (default: no limit)"
    )
    read_bps: Size | None = Field(
        None, description='read bytes per second, a size such as "125M" (default: no limit)'
    )
    write_bps: Size | None = Field(
        None, description='write bytes per second, a size such as "125M" (default: no limit)'
    )

    @model_validator(mode="after")
    def _some_limit(self) -> Throttle:
        if not any((self.read_iops, self.write_iops, self.read_bps, self.write_bps)):
            raise ValueError(
                "throttle needs at least one of read_iops, write_iops, read_bps, write_bps"
            )
        return self


VOLUME_KINDS = ("lvm-stripe", "md-raid0", "md-raid1", "md-raid10")


class Volume(Strict):
    """Several members (loop images or devices) joined into one block device before
    mkfs: an LVM striped logical volume or a Linux md RAID array."""

    kind: Literal["lvm-stripe", "md-raid0", "md-raid1", "md-raid10"] = Field(
        description="an LVM striped volume (lvcreate -i N) or an md array (mdadm --create)"
    )
    stripe: Size = Field(
        "64K", description="stripe (LVM -I) or chunk (mdadm --chunk) size: a power of two from 4K"
    )

    @field_validator("stripe")
    @classmethod
    def _stripe_power_of_two(cls, v: str) -> str:
        from pgfsbench.units import size_to_bytes

        n = size_to_bytes(v)
        if n < 4096 or n & (n - 1):
            raise ValueError(
                f"stripe '{v}' must be a power of two of at least 4K (4K, 8K, 64K, 512K...)"
            )
        return v

    @property
    def stripe_bytes(self) -> int:
        from pgfsbench.units import size_to_bytes

        return size_to_bytes(self.stripe)


class Target(Strict):
    """One variant to measure.

    Where it lives: loop images (``fs`` + ``size``, ``images`` of them), block devices
    named by the plan (``device`` or ``devices``, formatted only with
    ``--allow-format``), or an existing directory (``dir``, never formatted). Several
    members are joined by the filesystem itself (btrfs) or by a ``volume`` (md RAID,
    LVM stripe). What it is: mkfs arguments, mount options, an external log device,
    and OS settings applied while it runs.
    """

    name: str = Field(
        pattern=NAME_PATTERN,
        description="the target's name in every "
        "output: lower-case letters, digits, _ . - (at most 40)",
    )
    # One of the filesystem recipes (pgfsbench.filesystems); a filesystem without one
    # is reached by a dir target.
    fs: str | None = Field(
        None,
        description="the filesystem to make: ext2, ext3, ext4, "
        "xfs, btrfs, zfs (f2fs untested); leave it out for a dir target",
    )
    size: Size = Field("2G", description='size of each loop image (sparse), e.g. "4G"')
    mkfs: list[str] = Field(
        [],
        description='extra mkfs arguments, e.g. ["-b", "4096"]; '
        "judged by mkfs's dry run where it has one",
    )
    mount: str = Field(
        "",
        description="mount options, comma-separated (default: the "
        "filesystem's own); names and values checked against the driver's",
    )
    dir: Path | None = Field(
        None,
        description="an existing directory (a mount made by "
        "you): only a sub-directory is created in it, never formatted",
    )
    device: Path | None = Field(
        None,
        description="a block device to format; only with "
        "--allow-format naming it on the command line",
    )
    devices: list[Path] = Field(
        [],
        description="several block devices (each needs "
        "--allow-format), joined by btrfs or a volume",
    )
    images: int = Field(1, ge=1, le=16, description="loop images of `size` each")
    volume: Volume | None = Field(
        None, description="join the members into one block device first: LVM stripe or md RAID"
    )
    log_size: Size | None = Field(
        None,
        description="external log/journal device of this size "
        "(xfs logdev, ext3/ext4 journal device)",
    )
    direct_io: bool = Field(True, description="loop device direct I/O (bypass the host cache)")
    sysctls: dict[str, SettingValue] = Field(
        {}, description="applied while the target runs, restored afterwards"
    )
    queue: dict[str, SettingValue] = Field(
        {}, description="block queue settings of the target's device, e.g. scheduler"
    )
    postgres: Postgres = Field(
        Postgres(), description="PostgreSQL for this target: wins over the plan's [postgres]"
    )
    pg_bin: Path | None = Field(None, description="PostgreSQL bin directory for this target")
    throttle: Throttle | None = Field(
        None,
        description="limit the target's device for the processes pgfsbench starts (default: none)",
    )
    memory: Size | None = Field(
        None,
        description="hold the PostgreSQL server and its page "
        'cache to this size (a memory cgroup), e.g. "1G", so a '
        "modest scale reads from the device; wins over the plan's "
        "(default: no limit)",
    )
    zfs: dict[str, SettingValue] = Field(
        {},
        description='fs = "zfs": dataset properties '
        "(recordsize, compression, atime, logbias, ...), "
        "checked against the installed zfs",
    )
    zpool: dict[str, SettingValue] = Field(
        {},
        description='fs = "zfs": pool properties '
        "(ashift, ...), checked against the installed "
        "zpool",
    )

    @model_validator(mode="after")
    def _zfs_properties(self) -> Target:
        from pgfsbench.filesystems.zfs import OWNED

        if not (fs := find(self.fs)) or not fs.pooled:
            if self.zfs or self.zpool:
                raise ValueError('zfs and zpool properties apply to fs = "zfs" only')
            return self
        if self.mkfs:
            raise ValueError(
                "a ZFS pool is made by zpool create, not mkfs: set pool "
                "properties in zpool = { ashift = 12 }"
            )
        if self.mount:
            raise ValueError(
                "ZFS takes no mount options: set dataset properties in "
                'zfs = { atime = "off", recordsize = "8K" }'
            )
        if self.volume is not None:
            raise ValueError(
                "ZFS joins its devices itself (a pool striped over every image "
                "or device): leave volume out"
            )
        if self.throttle is not None:
            raise ValueError(
                "throttle cannot limit ZFS: its I/O is issued by the ZFS "
                "daemon or kernel threads, outside the cgroup pgfsbench limits"
            )
        for tool in ("zfs", "zpool"):
            for key, value in getattr(self, tool).items():
                if not ZFS_PROPERTY.fullmatch(key):
                    raise ValueError(
                        f"{tool}: '{key}' is not a {tool} property name (like "
                        f"{'recordsize' if tool == 'zfs' else 'ashift'})"
                    )
                if why := OWNED[tool].get(key):
                    raise ValueError(f"{tool}: {key} is set by pgfsbench ({why}); remove it")
                if isinstance(value, str) and not ZFS_VALUE.fullmatch(value):
                    raise ValueError(
                        f'{tool}: {key} = "{value}" is not a property value '
                        "(letters, digits and .,_:-)"
                    )
        return self

    @model_validator(mode="after")
    def _kind(self) -> Target:
        if self.dir is not None and (self.device is not None or self.devices):
            raise ValueError("set either dir or device, not both")
        self._check_members()
        if self.dir is None and self.fs is None:
            raise ValueError(
                "set fs (a loop image or device target) or dir (an existing directory)"
            )
        if self.dir is not None and (self.mkfs or self.mount or self.log_size):
            raise ValueError(
                "a dir target is an existing mount: mkfs, mount and log_size cannot apply"
            )
        if self.log_size is not None and (fs := find(self.fs)) and fs.log_device is None:
            raise ValueError(
                f"{self.fs} cannot use an external log device (only "
                f"{', '.join(r.fs for r in recipes() if r.log_device)})"
            )
        if self.queue and self.dir is not None:
            raise ValueError(
                "queue settings apply to the target's own device: not to a dir "
                "target, whose device pgfsbench does not own"
            )
        if self.throttle is not None and self.dir is not None:
            raise ValueError("throttle limits the target's own device: not a dir target")
        if self.log_size is not None and self.device is not None:
            raise ValueError("log_size makes a loop image for the log: not with a device target")
        bad = [k for k in self.sysctls if not SYSCTL_NAME.fullmatch(k)]
        if bad:
            raise ValueError(f"sysctls: '{bad[0]}' is not a sysctl name (like vm.dirty_ratio)")
        # never a path out of the device's queue directory
        if bad := [k for k in self.queue if not QUEUE_KEY.fullmatch(k)]:
            raise ValueError(
                f"queue: '{bad[0]}' is not a block queue setting name (like "
                "read_ahead_kb or scheduler)"
            )
        for table in ("sysctls", "queue"):
            for key, value in getattr(self, table).items():
                if problem := _knob_value_problem(value):
                    raise ValueError(f"{table}: {key} = {value!r}: {problem}")
        if named := device_options([*self.mkfs, *self.mount.split(",")]):
            raise ValueError(
                f"option '{named[0]}' names a device, which mkfs or mount would "
                "use too; a target formats only its own device (for an "
                "external log, set log_size): remove the option"
            )
        return self

    def _check_members(self) -> None:
        """Several members (images, devices): who joins them, and what cannot apply."""
        if self.device is not None and self.devices:
            raise ValueError("set device (one) or devices (several), not both")
        if len(set(map(str, self.devices))) != len(self.devices):
            raise ValueError("devices names the same device twice")
        if self.images > 1 and (self.device is not None or self.devices or self.dir):
            raise ValueError("images makes loop images: not with device, devices or dir")
        if self.dir is not None and self.volume is not None:
            raise ValueError("a dir target is an existing mount: volume cannot apply")
        n = self.member_count
        fs = find(self.fs)
        # mkfs sees one device on a volume, every member otherwise
        if (
            fs is not None
            and fs.mkfs_problems is not None
            and (problems := fs.mkfs_problems(list(self.mkfs), 1 if self.volume else n))
        ):
            raise ValueError(problems[0])
        if self.volume is not None and self.volume.kind == "md-raid10" and n % 2:
            raise ValueError(
                f"volume md-raid10 mirrors pairs of members: give it an even number (it has {n})"
            )
        if self.volume is not None and n < 2:
            raise ValueError(
                f"volume {self.volume.kind} joins several members: set images "
                "= 2 or more (or name several devices)"
            )
        if n < 2:
            return
        spans = fs is not None and fs.spans_devices
        if self.volume is None and not spans:
            raise ValueError(
                f"{self.fs} lives on one block device: to put it on {n} members "
                'add volume = { kind = "lvm-stripe" } (or md-raid0, '
                "md-raid1, md-raid10), or use a filesystem that spans devices "
                f"itself ({', '.join(r.fs for r in recipes() if r.spans_devices)})"
            )
        if self.queue or self.throttle is not None:
            raise ValueError(
                f"queue and throttle settings apply to one device: not to a target on {n} members"
            )

    @property
    def member_count(self) -> int:
        """How many loop images or devices the target is made on."""
        if self.dir is not None:
            return 0
        return len(self.devices) or (1 if self.device is not None else self.images)

    @property
    def member_devices(self) -> list[Path]:
        """The named block devices (device or devices), empty for loop and dir targets."""
        return list(self.devices) or ([self.device] if self.device is not None else [])

    @field_validator("fs")
    @classmethod
    def _fs_has_a_recipe(cls, v: str | None) -> str | None:
        if v is not None:
            recipe(v)  # an unknown one names the known ones and the dir target
        return v

    @field_validator("mount")
    @classmethod
    def _mount_options_known(cls, v: str, info) -> str:
        fs = info.data.get("fs")
        if fs is not None:
            unknown = unknown_mount_options(fs, v)
            if unknown:
                raise ValueError(f"{fs} has no mount option '{unknown[0]}'")
            if problems := mount_option_problems(fs, v):
                raise ValueError(f"{fs} mount option {problems[0]}")
        return v

    @property
    def kind(self) -> str:
        if self.dir is not None:
            return "dir"
        return "device" if self.member_devices else "loop"

    @property
    def size_mb(self) -> int:
        return size_to_mb(self.size)


class Monitors(Strict):
    """What is sampled beside every workload, on the same timeline as its series."""

    system: bool = Field(True, description="CPU, memory, the target's and backing disk's I/O")
    postgres: bool = Field(True, description="checkpoints, buffers written, WAL bytes and syncs")
    interval: float = Field(1.0, ge=0.1, le=60, description="seconds between samples")


class MachineSettings(Strict):
    """How the whole machine is held while the campaign measures, for every target."""

    cpu_latency: Annotated[int, Field(ge=0, le=2_000_000_000)] | None = Field(
        None,
        description="the most microseconds a CPU may take to wake while the campaign "
        "runs, held through the kernel's PM QoS (/dev/cpu_dma_latency, as tuned's "
        "latency-performance profile does) and let go when it ends; 0: CPUs poll instead "
        "of halting when idle, so a commit waiting on an fsync never waits for a halted "
        "CPU to wake, however busy the rest of the machine is. Recorded with the host's "
        "facts; without root the machine is measured as it is, with a warning. Default: "
        "the machine as it is",
    )


class Plan(Strict):
    name: str = Field(
        pattern=NAME_PATTERN,
        description="the plan's name: lower-case letters, digits, _ . - (at most 40)",
    )
    description: str = Field(
        "", description="what the plan compares and why; shown by plans and plan check"
    )
    targets: list[Target] = Field(
        min_length=1, description="the variants to compare ([[targets]]), at least one"
    )
    workloads: list[Workload] = Field(
        min_length=1, description="what is measured on each target ([[workloads]]), in this order"
    )
    postgres: Postgres = Field(
        Postgres(), description="PostgreSQL for every target; a target's own [postgres] wins"
    )
    monitors: Monitors = Field(Monitors(), description="what is sampled beside every workload")
    repetitions: Repetitions = Field(
        Repetitions(), description="how often and in what order each target is measured"
    )
    verdicts: Verdicts = Field(Verdicts(), description="how differences are judged")
    machine: MachineSettings = Field(
        MachineSettings(), description="how the whole machine is held while measuring"
    )
    memory: Size | None = Field(
        None,
        description="a memory size for every target's "
        "PostgreSQL server and page cache; a target's own wins "
        "(default: no limit)",
    )

    @model_validator(mode="after")
    def _unique_targets(self) -> Plan:
        seen: set[str] = set()
        for t in self.targets:
            if t.name in seen:
                raise ValueError(f"two targets are named '{t.name}'")
            seen.add(t.name)
        if self.verdicts.baseline is not None and self.verdicts.baseline not in seen:
            raise ValueError(f"verdicts.baseline '{self.verdicts.baseline}' is not a target")
        return self

    @model_validator(mode="after")
    def _weights_name_measurements(self) -> Plan:
        ms = self.measurements()
        names = {m.type for m in ms} | {f"{m.type} {m.label()}".strip() for m in ms}
        for key in self.verdicts.weights:
            if key not in names:
                known = ", ".join(repr(n) for n in sorted(names))
                raise ValueError(
                    f"verdicts.weights names '{key}', which this plan does not measure "
                    f"(its measurements: {known})"
                )
        return self

    def measurements(self) -> list[WorkloadBase]:
        """The workloads in order, sweeps expanded into one entry per measurement.

        Two different measurements that would share a label (select-only and a
        script, both at clients=2) get the parameters that differ appended to their
        tag: otherwise their numbers would be pooled as repetitions of one cell.
        """
        ms = [one for w in self.workloads for one in w.expand()]
        groups: dict[tuple[str, str], list[int]] = {}
        for i, m in enumerate(ms):
            groups.setdefault((m.type, m.label()), []).append(i)
        for members in groups.values():
            dumps = [ms[i].model_dump(mode="json", exclude={"repetitions", "tag"}) for i in members]
            differing = [k for k in dumps[0] if len({repr(d.get(k)) for d in dumps}) > 1]
            for i, d in zip(members, dumps):
                if extra := " ".join(f"{k}={_short(d[k])}" for k in differing if d[k] is not None):
                    ms[i] = ms[i].model_copy(
                        update={"tag": " ".join(filter(None, [ms[i].tag, extra]))}
                    )
        return ms

    def data_checksums(self, target: Target) -> bool | None:
        """Whether the target's cluster is made with data checksums: the target's own
        wish, else the plan's; None leaves it to the server's default."""
        if target.postgres.data_checksums is not None:
            return target.postgres.data_checksums
        return self.postgres.data_checksums

    def memory_limit(self, target: Target) -> str | None:
        """The memory the target's server and page cache are held to: the target's own,
        else the plan's; None: no limit."""
        return target.memory if target.memory is not None else self.memory

    @model_validator(mode="after")
    def _memory_holds_shared_buffers(self) -> Plan:
        for t in self.targets:
            if (memory := self.memory_limit(t)) is None:
                continue
            if t.fs == "zfs":
                raise ValueError(
                    f"target '{t.name}': memory cannot hold ZFS's cache (the ARC "
                    "is the ZFS daemon's or the kernel's, outside the cgroup): "
                    "remove memory from this target"
                )
            limit = size_to_bytes(memory)
            value = self.server_settings(t).get("shared_buffers", "128MB")
            buffers = pg_memory_bytes(value)
            if buffers is None:  # the server judges the value itself
                continue
            if limit < buffers + MEMORY_MARGIN:
                raise ValueError(
                    f"target '{t.name}': memory = \"{memory}\" leaves no room beside "
                    f"shared_buffers = {value!r}: the limit holds shared_buffers, every "
                    f"backend and the page cache; give it at least "
                    f"{(buffers + MEMORY_MARGIN) // 2**20}M (shared_buffers + "
                    f"{MEMORY_MARGIN // 2**20}M), or lower shared_buffers"
                )
        return self

    def server_settings(self, target: Target | None = None) -> dict[str, object]:
        """The plan's PostgreSQL settings, then the target's over them, raised where a
        workload needs more."""
        settings: dict[str, object] = dict(self.postgres.settings)
        if target is not None:
            settings.update(target.postgres.settings)
        for w in self.workloads:
            for key, needed in w.server_settings().items():
                current = settings.get(key)
                if not isinstance(current, int) or current < needed:
                    settings[key] = needed
        return settings

    @model_validator(mode="after")
    def _workloads_fit_servers(self) -> Plan:
        for t in self.targets:
            settings = self.server_settings(t)
            for w in self.measurements():
                if (problem := w.server_problem(settings)) is not None:
                    raise ValueError(f"target '{t.name}': {problem}")
        return self

    def records_device(self) -> bool:
        """Whether a workload records the writes reaching each target's device (crash):
        the loop images are then made in the recording layer."""
        return any(registry.kind(w.type).records_device for w in self.workloads)

    @model_validator(mode="after")
    def _recordable_targets(self) -> Plan:
        recording = [w.type for w in self.workloads if registry.kind(w.type).records_device]
        if not recording:
            return self
        for t in self.targets:
            if t.kind != "loop":
                raise ValueError(
                    f"target '{t.name}' is a {'directory' if t.kind == 'dir' else 'block device'}"
                    f": the {recording[0]} workload records the writes that reach a loop "
                    "image pgfsbench makes, and cannot intercept this one; measure it on a "
                    "loop target (fs and size)"
                )
            if t.images > 1 or t.log_size is not None or t.volume is not None or t.fs == "zfs":
                what = "a ZFS pool" if t.fs == "zfs" else "more than one image"
                raise ValueError(
                    f"target '{t.name}': the {recording[0]} workload builds crash states of "
                    f"one loop image, and this target is {what}: give it one image, "
                    "no log_size or volume"
                )
        return self

    @model_validator(mode="after")
    def _needed_before(self) -> Plan:
        types = [w.type for w in self.workloads]
        for t in dict.fromkeys(types):
            need = registry.kind(t).needs
            if need is not None and (need not in types or types.index(need) > types.index(t)):
                raise ValueError(f"a {t} workload needs a {need} workload before it")
        return self

    @model_validator(mode="after")
    def _distinct_measurements(self) -> Plan:
        # Two identical measurements would be pooled into one cell (two samples a
        # round) and share a run directory: refuse them rather than guess.
        seen: set[tuple[str, str]] = set()
        for m in self.measurements():
            if (m.type, m.label()) in seen:
                what = f" ({m.label()})" if m.label() else ""
                raise ValueError(
                    f"two {m.type} workloads measure the same thing{what}: "
                    'remove one, or tell them apart with tag = "..."'
                )
            seen.add((m.type, m.label()))
        return self


def _knob_value_problem(value: SettingValue) -> str | None:
    """Why a kernel setting's value can be no setting's (a shell character, an empty or
    non-finite number), or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return "not a finite number"
    text = str(value)
    if KNOB_VALUE.fullmatch(text) and text.strip():
        return None
    if not text.strip():
        return "an empty value"
    odd = ", ".join(map(repr, dict.fromkeys(c for c in text if not KNOB_VALUE.fullmatch(c))))
    return f"no kernel setting takes {odd} in its value (a separator or shell character)"


def _short(value: object) -> str:
    """A parameter as a label shows it: a script by its file name."""
    if isinstance(value, str) and "/" in value:
        return value.rsplit("/", 1)[-1]
    return str(value)


registry.rebuild_on_change(Plan)
