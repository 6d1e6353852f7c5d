"""Facts about the machine and tools, stored with every campaign (pyperf-style)."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

from pgfsbench import __version__, proc
from pgfsbench.postgres.binaries import PgBinaries


def _first_line(argv: list[str]) -> str | None:
    if proc.which(argv[0]) is None and not os.path.isabs(argv[0]):
        return None
    try:
        result = proc.run(argv, check=False, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (result.stdout or result.stderr).strip()
    return text.splitlines()[0] if text else None


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _mem_total_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    return 0


def machine_id() -> str | None:
    """The installation's stable id (systemd's; dbus's on older systems): the key that
    tells two hosts apart when their hostnames match (clones, containers)."""
    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            text = Path(path).read_text().strip()
        except OSError:
            continue
        if text:
            return text
    return None


def os_release() -> str | None:
    """PRETTY_NAME from /etc/os-release ("Debian GNU/Linux 12 (bookworm)")."""
    try:
        return platform.freedesktop_os_release().get("PRETTY_NAME")
    except OSError:
        return None


def git_revision() -> str | None:
    here = Path(__file__).resolve().parent
    try:
        result = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() or None if result.returncode == 0 else None


def tool_versions(bins: PgBinaries | None) -> dict[str, str | None]:
    versions = {
        "fio": _first_line(["fio", "--version"]),
        "mkfs.xfs": _first_line(["mkfs.xfs", "-V"]),
        "mkfs.btrfs": _first_line(["mkfs.btrfs", "--version"]),
        "mke2fs": _first_line(["mke2fs", "-V"]),
    }
    if bins is not None:
        versions["pgbench"] = _first_line([bins.tool("pgbench"), "--version"])
        versions["pg_test_fsync"] = _first_line([bins.tool("pg_test_fsync"), "--version"])
    return versions


def pg_build_options(bindir: str | Path) -> str | None:
    """``pg_config --configure``: how these PostgreSQL binaries were built (None if unknown)."""
    pg_config = Path(bindir) / "pg_config"
    if not pg_config.is_file():
        return None
    try:
        result = proc.run([str(pg_config), "--configure"], check=False, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() or None if result.ok else None


def host_facts(bins: PgBinaries | None) -> dict:
    return {
        "hostname": platform.node(),
        "machine_id": machine_id(),
        "os": os_release(),
        "arch": platform.machine(),
        "kernel": platform.release(),
        "kernel_cmdline": Path("/proc/cmdline").read_text().strip(),
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "memory_mb": _mem_total_mb(),
        "root": os.geteuid() == 0,
        "postgresql": f"{bins.version} ({bins.origin}, {bins.bindir})" if bins else None,
        "postgresql_build_options": pg_build_options(bins.bindir) if bins else None,
        "pgfsbench": __version__ + (f" ({rev})" if (rev := git_revision()) else ""),
        "tools": tool_versions(bins),
    }
