"""One PostgreSQL cluster on a target: initdb there, start, query, stop.

It runs as an unprivileged user, listens only on a Unix socket in a private
(0700) directory, and trusts only that socket. A started server is in the
ledger; its releaser (``stop_recorded``) stops it, also after a crash.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pgfsbench import proc
from pgfsbench.ledger import Ledger, releaser
from pgfsbench.pgsettings import CLIENT_SOURCES, IO_SETTING_NAMES
from pgfsbench.postgres.binaries import PgBinaries
from pgfsbench.postgres.checksums import initdb_flags
from pgfsbench.postgres.config import conf_text
from pgfsbench.scratch import private_dir

SUPERUSER = "postgres"


def free_port() -> int:
    # Only the socket file name depends on it (no TCP listener), but a free TCP
    # port keeps clusters distinct if a user turns TCP on.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Cluster:
    bins: PgBinaries
    user: proc.RunAs
    pgdata: Path
    socket_dir: Path
    port: int
    commands: list[proc.CommandResult] = field(default_factory=list)

    @property
    def log_path(self) -> Path:
        return self.socket_dir / "postgres.log"

    def conn_args(self) -> list[str]:
        return ["-h", str(self.socket_dir), "-p", str(self.port), "-U", SUPERUSER]

    def libpq_env(self) -> dict[str, str]:
        return {
            "PGHOST": str(self.socket_dir),
            "PGPORT": str(self.port),
            "PGUSER": SUPERUSER,
            "PGDATABASE": "postgres",
        }

    def run(self, argv: list[str], **kwargs) -> proc.CommandResult:
        """Run a PostgreSQL client tool as the cluster's user."""
        return proc.run(argv, as_user=self.user, **kwargs)

    def psql_argv(self, commands: list[str], database: str = "postgres") -> list[str]:
        """One psql session running ``commands`` in order, unaligned and tuples only,
        stopping at the first error."""
        argv = [self.bins.tool("psql"), "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1"]
        argv += [*self.conn_args(), "-d", database]
        for c in commands:
            argv += ["-c", c]
        return argv

    def sql(self, query: str, database: str = "postgres") -> str:
        return self.run(self.psql_argv([query], database)).stdout.strip()

    def log_size(self) -> int:
        try:
            return self.log_path.stat().st_size
        except OSError:
            return 0

    def log_problems_since(self, offset: int, most: int = 3) -> list[str]:
        """The server's last ERROR/FATAL/PANIC lines written after ``offset``.

        A client tool often only says "connection lost"; the cause (disk full,
        out of memory) is in the server log.
        """
        try:
            with open(self.log_path, "rb") as f:
                f.seek(offset)
                text = f.read(4 << 20).decode(errors="replace")
        except OSError:
            return []
        lines = [
            l.strip()
            for l in text.splitlines()
            if any(w in l for w in ("ERROR:", "FATAL:", "PANIC:"))
        ]
        return lines[-most:]

    def version(self) -> str:
        return self.sql("SHOW server_version")

    def data_checksums(self) -> bool:
        # Not among the changed settings: the server sets it from pg_control, as a default.
        return self.sql("SHOW data_checksums") == "on"

    def changed_settings(self) -> dict[str, str]:
        """The server's settings not at their default. Not those the reading client set
        for its own session (psql's application_name): they are not the server's."""
        # current_setting() renders with the unit as a DBA writes it (128MB, not 16384 8kB).
        excluded = ", ".join(f"'{s}'" for s in ("default", "override", *CLIENT_SOURCES))
        out = self.sql(
            "SELECT name || '=' || current_setting(name) FROM pg_settings "
            f"WHERE source NOT IN ({excluded}) ORDER BY name"
        )
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def io_settings(self) -> dict[str, str]:
        """Every durability and I/O setting the server runs with (pgsettings.IO_SETTINGS),
        defaults included, in that list's order; those this version lacks are absent."""
        names = ", ".join(f"'{name}'" for name in IO_SETTING_NAMES)
        out = self.sql(
            f"SELECT name || '=' || current_setting(name) FROM pg_settings WHERE name IN ({names})"
        )
        found = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
        return {name: found[name] for name in IO_SETTING_NAMES if name in found}


@contextlib.contextmanager
def running_cluster(
    bins: PgBinaries,
    user: proc.RunAs,
    workdir: Path,
    ledger: Ledger,
    settings: dict[str, object],
    log_dest: Path,
    data_checksums: bool | None = None,
    cgroup: str | None = None,
) -> Iterator[Cluster]:
    """initdb in ``workdir`` (on the target) unless a cluster is already there, start,
    yield, and always stop. ``data_checksums``: on or off by initdb's flag (None: the
    server's default). ``cgroup``: the ``cgroup.procs`` the server starts in (a memory
    limit: the postmaster and every backend are born there).

    The server log is copied to ``log_dest`` once the server has stopped.
    """
    # In /tmp: short, for the socket path's length limit.
    with private_dir(ledger, "pgfsb-", "/tmp", user) as socket_dir:
        cluster = Cluster(bins, user, workdir / "pgdata", socket_dir, free_port())
        if not (cluster.pgdata / "PG_VERSION").exists():  # a reused target keeps its cluster
            # --no-sync, then one syncfs: as durable when the first measurement
            # starts, but the writes are merged instead of one fsync per file (17 s
            # of a 100-IOPS throttled target's provisioning went to those fsyncs).
            cluster.commands.append(
                cluster.run(
                    [
                        bins.tool("initdb"),
                        "-D",
                        str(cluster.pgdata),
                        "-U",
                        SUPERUSER,
                        "-E",
                        "UTF8",
                        "--locale=C",
                        "--auth-local=trust",
                        "--auth-host=reject",
                        "--no-instructions",
                        "--no-sync",
                        *initdb_flags(bins, data_checksums),
                    ]
                )
            )
            cluster.commands.append(proc.run(["sync", "--file-system", str(cluster.pgdata)]))
            with open(cluster.pgdata / "postgresql.conf", "a") as f:
                f.write(conf_text(settings))
        # Port and socket directory are new on every start: on the command line.
        conn_opts = f"-c port={cluster.port} -c unix_socket_directories='{socket_dir}'"
        res = ledger.add(
            "postgres",
            pgdata=str(cluster.pgdata),
            pg_ctl=bins.tool("pg_ctl"),
            user=user.name,
            log=str(cluster.log_path),
        )
        try:
            cluster.commands.append(
                cluster.run(
                    [
                        bins.tool("pg_ctl"),
                        "start",
                        "-D",
                        str(cluster.pgdata),
                        "-l",
                        str(cluster.log_path),
                        "-o",
                        conn_opts,
                        "-w",
                        "-t",
                        "120",
                    ],
                    timeout=180,
                    cgroup=cgroup,
                )
            )
            yield cluster
        finally:
            ledger.release(res)
            _keep_server_log(cluster, log_dest)


def _keep_server_log(cluster: Cluster, dest: Path) -> None:
    """Copy the server log out of the scratch directory before it is removed."""
    if cluster.log_path.exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(cluster.log_path, dest)


def _read(path: str | None) -> str:
    try:
        return Path(path).read_text(errors="replace") if path else ""
    except OSError:
        return ""


def _postmaster_pid(pgdata: str) -> int | None:
    try:
        return int(Path(pgdata, "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def crashed_since_ready(log_text: str) -> bool:
    """Whether the server log says the server crashed after it last became ready: a
    backend died (a full disk, an OOM kill) and the server is back in crash recovery.
    The cluster is initdb'd with --locale=C, so the messages are PostgreSQL's English."""
    ready = log_text.rfind("database system is ready to accept connections")
    return log_text.rfind("all server processes terminated; reinitializing") > ready


def _is_postmaster(pid: int, uid: int) -> bool:
    """Whether pid is a running postgres program owned by uid (from /proc)."""
    try:
        exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
        owner = os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return False
    # A binary replaced on disk while running reads as "postgres (deleted)".
    return exe.split(" ")[0] == "postgres" and owner == uid


@releaser("postgres")
def stop_recorded(res: dict) -> list[str]:
    """Stop a recorded server: with pg_ctl, else by signal if it is still that server."""
    pgdata = res["pgdata"]
    pid = _postmaster_pid(pgdata)
    if pid is None:
        return []
    user = proc.RunAs.lookup(res["user"]) if res.get("user") else None
    # After a crash there is no clean state a fast stop would save, and PostgreSQL 18
    # in crash recovery on a full disk was seen to wait out pg_ctl's whole minute.
    # Stopped at once, its next start recovers just the same.
    mode = "immediate" if crashed_since_ready(_read(res.get("log"))) else "fast"
    stop = proc.run(
        [res["pg_ctl"], "stop", "-D", pgdata, "-m", mode, "-w", "-t", "60"],
        as_user=user,
        check=False,
    )
    if stop.ok:
        return []
    # pg_ctl could not do it (binaries gone, cluster wedged): end it by signal, but
    # only if the pid is still that postmaster. After a reboot or a long time the
    # file's pid may belong to any process, and we are root.
    if not _is_postmaster(pid, user.uid if user else os.getuid()):
        return []
    try:
        os.kill(pid, signal.SIGQUIT)
        for _ in range(50):
            os.kill(pid, 0)
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return []
    return []
