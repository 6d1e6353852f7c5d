"""A throwaway PostgreSQL server for the results store tests: the embedded binaries,
initdb in a fresh directory, run as the unprivileged ``pgfsbench`` user (PostgreSQL
refuses root), listening only on a private Unix socket; stopped and removed after."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from pgfsbench import proc
from pgfsbench.postgres.binaries import find_binaries
from pgfsbench.postgres.cluster import free_port
from pgfsbench.postgres.user import ensure_pg_user


@contextlib.contextmanager
def pg_server(database: str = "results") -> Iterator[str]:
    """Yield the URL of a new database on a new server."""
    bins = find_binaries()
    user = ensure_pg_user()
    root = Path(tempfile.mkdtemp(prefix="store-pg-", dir="/var/tmp"))
    sock = Path(tempfile.mkdtemp(prefix="store-sock-", dir="/tmp"))  # short: socket path limit
    for d in (root, sock):
        d.chmod(0o700)
        proc.run(["chown", f"{user.uid}:{user.gid}", str(d)])
    data, port = root / "data", free_port()
    started = False
    try:
        proc.run(
            [
                bins.tool("initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--locale=C",
                "--auth-local=trust",
                "--auth-host=reject",
                "--no-instructions",
            ],
            as_user=user,
        )
        proc.run(
            [
                bins.tool("pg_ctl"),
                "start",
                "-D",
                str(data),
                "-l",
                str(root / "log"),
                "-w",
                "-t",
                "60",
                "-o",
                f"-c listen_addresses='' -c port={port} -c unix_socket_directories='{sock}' "
                "-c fsync=off",
            ],
            as_user=user,
            timeout=90,
        )
        started = True
        proc.run(
            [bins.tool("createdb"), "-h", str(sock), "-p", str(port), "-U", "postgres", database],
            as_user=user,
        )
        yield f"postgresql://postgres@/{database}?host={sock}&port={port}"
    finally:
        if started:
            proc.run(
                [bins.tool("pg_ctl"), "stop", "-D", str(data), "-m", "fast", "-w", "-t", "60"],
                as_user=user,
                check=False,
                timeout=90,
            )
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(sock, ignore_errors=True)


if __name__ == "__main__":  # a manual check: start, print the URL, wait for Enter
    with pg_server() as url:
        print(url, flush=True)
        subprocess.run(["sleep", "3600"])
