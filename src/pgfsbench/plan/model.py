"""The plan file model: what to compare (targets) and how (workloads).

Validated strictly: an unknown key or a wrong type is an error that names the
key, never a silently ignored setting.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

NAME_PATTERN = r"^[a-z0-9][a-z0-9_.-]{0,39}$"
SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*$", re.IGNORECASE)


def size_to_mb(text: str | int) -> int:
    """'512M', '2G', '1.5GiB' or a number of MB → whole MB."""
    if isinstance(text, int):
        return text
    match = SIZE_RE.match(text)
    if not match:
        raise ValueError(f"'{text}' is not a size (examples: 512M, 2G)")
    number, unit = float(match.group(1)), match.group(2).upper() or "M"
    factor = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}[unit]
    return int(number * factor)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --- workloads ------------------------------------------------------------------

class FsyncWorkload(Strict):
    """pg_test_fsync in the target's filesystem (seed 001)."""

    type: Literal["fsync"]
    seconds: int = Field(2, ge=1, le=600, description="seconds per test (-s)")


class PgbenchInitWorkload(Strict):
    """pgbench -i: load time of the TPC-B tables (seed 000)."""

    type: Literal["pgbench-init"]
    scale: int = Field(10, ge=1, le=100000, description="scaling factor (-s)")


class PgbenchWorkload(Strict):
    """pgbench TPC-B (seeds 000, 002); needs a pgbench-init before it."""

    type: Literal["pgbench"]
    clients: int = Field(4, ge=1, le=1000)
    threads: int | None = Field(None, ge=1, le=1000,
                                description="-j; default: as many as clients, like the seeds")
    duration: int = Field(30, ge=1, le=86400, description="seconds (-T)")
    protocol: Literal["prepared", "simple", "extended"] = "prepared"

    @model_validator(mode="after")
    def _threads_fit(self) -> "PgbenchWorkload":
        if self.threads is not None and self.threads > self.clients:
            raise ValueError(f"threads ({self.threads}) cannot exceed clients ({self.clients})")
        return self

    @property
    def jobs(self) -> int:
        return self.threads or self.clients


Workload = Annotated[
    Union[FsyncWorkload, PgbenchInitWorkload, PgbenchWorkload],
    Field(discriminator="type"),
]


# --- targets --------------------------------------------------------------------

class Target(Strict):
    """One variant to measure: a filesystem on a loop image, or an existing directory."""

    name: str = Field(pattern=NAME_PATTERN)
    fs: Literal["ext2", "ext3", "ext4", "xfs", "btrfs"] | None = None
    size: str = "2G"
    mkfs: list[str] = []
    mount: str = ""
    dir: Path | None = None

    @field_validator("size")
    @classmethod
    def _size_parses(cls, v: str) -> str:
        size_to_mb(v)
        return v

    @model_validator(mode="after")
    def _kind(self) -> "Target":
        if self.dir is None and self.fs is None:
            raise ValueError("set fs (a loop image target) or dir (an existing directory)")
        if self.dir is not None and (self.mkfs or self.mount):
            raise ValueError("a dir target is an existing mount: mkfs/mount cannot apply")
        return self

    @property
    def kind(self) -> str:
        return "dir" if self.dir is not None else "loop"

    @property
    def size_mb(self) -> int:
        return size_to_mb(self.size)


class Postgres(Strict):
    settings: dict[str, str | int | float | bool] = {}


class Plan(Strict):
    name: str = Field(pattern=NAME_PATTERN)
    description: str = ""
    targets: list[Target] = Field(min_length=1)
    workloads: list[Workload] = Field(min_length=1)
    postgres: Postgres = Postgres()

    @model_validator(mode="after")
    def _unique_targets(self) -> "Plan":
        seen: set[str] = set()
        for t in self.targets:
            if t.name in seen:
                raise ValueError(f"two targets are named '{t.name}'")
            seen.add(t.name)
        return self

    @model_validator(mode="after")
    def _init_before_pgbench(self) -> "Plan":
        kinds = [w.type for w in self.workloads]
        if "pgbench" in kinds and ("pgbench-init" not in kinds
                                   or kinds.index("pgbench-init") > kinds.index("pgbench")):
            raise ValueError("a pgbench workload needs a pgbench-init workload before it")
        return self
