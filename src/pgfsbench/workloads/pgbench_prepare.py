"""What a pgbench run does before its timed part (``prepare``), outside the numbers.

``pgbench -n`` skips pgbench's own preparation, so on a reused target each visit
inherits the last one's dead rows and history table; ``prepare`` puts back what the
visit should start from, each step timed on its own (never in tps):

- ``vacuum``: what pgbench does without -n: VACUUM pgbench_branches and
  pgbench_tellers, TRUNCATE pgbench_history (built-in scripts only: a custom
  script's tables are its own);
- ``checkpoint``: CHECKPOINT, so that nothing the visit did before (the vacuum,
  other workloads) is flushed during the measured run;
- ``sync``: sync the target's file system, and for a loop target the file system
  holding its image, so no writeback of earlier work lands in the run.

They run in that order, whatever order the plan lists them in.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

Step = Literal["vacuum", "checkpoint", "sync"]
ORDER: tuple[str, ...] = ("vacuum", "checkpoint", "sync")

# What pgbench runs before a built-in script unless -n (pgbench.c: initial vacuum).
VACUUM_SQL = ("VACUUM pgbench_branches", "VACUUM pgbench_tellers", "TRUNCATE pgbench_history")


def ordered(steps: Iterable[str], custom_script: bool) -> list[str]:
    """The steps to run, in their fixed order; vacuum only for a built-in script."""
    wanted = set(steps)
    if custom_script:
        wanted.discard("vacuum")
    return [s for s in ORDER if s in wanted]


def sync_paths(workdir: Path, backing_file: str | None) -> list[str]:
    """File systems to sync: the target's, then the one holding a loop image."""
    return [str(workdir)] + ([backing_file] if backing_file else [])


def loop_backing_file(device: str | None) -> str | None:
    """The image file behind a loop device (from sysfs), or None."""
    if not device or not Path(device).name.startswith("loop"):
        return None
    try:
        text = Path(f"/sys/block/{Path(device).name}/loop/backing_file").read_text().strip()
    except OSError:
        return None
    return text or None
