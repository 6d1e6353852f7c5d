"""The unprivileged OS user PostgreSQL runs as."""

from __future__ import annotations

import os
import pwd

from pgfsbench import proc
from pgfsbench.errors import UserError

PG_USER = "pgfsbench"


def ensure_pg_user() -> proc.RunAs:
    """As root: the ``pgfsbench`` system user, created if needed. Otherwise: us."""
    if os.geteuid() != 0:
        return proc.RunAs.current()
    try:
        pwd.getpwnam(PG_USER)
    except KeyError:
        useradd = proc.which("useradd")
        if useradd is None:
            raise UserError(
                "cannot create the PostgreSQL user: useradd is missing (apt-get install passwd)"
            ) from None
        proc.run(
            [
                useradd,
                "--system",
                "--no-create-home",
                "--home-dir",
                "/nonexistent",
                "--shell",
                "/usr/sbin/nologin",
                "--user-group",
                PG_USER,
            ]
        )
    return proc.RunAs.lookup(PG_USER)
