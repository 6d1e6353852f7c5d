"""Results store URLs: ``postgresql://[user[:password]@][host][:port]/dbname[?...]``.

A URL names the PostgreSQL store; ``PGFSBENCH_STORE`` gives the default one.
Messages never show the password.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from pgfsbench.errors import UserError

STORE_ENV = "PGFSBENCH_STORE"
SCHEMES = ("postgresql", "postgres")


def is_store_url(text: str) -> bool:
    return re.match(r"^(postgresql|postgres)://", text) is not None


def check_store_url(text: str) -> str:
    """``text`` if it is a store URL, else UserError naming the form one takes."""
    if not is_store_url(text):
        raise UserError(
            f"--store {shown(text)!r} is not a PostgreSQL URL: give one like "
            "postgresql://user@host:5432/pgfsbench (or set "
            f"{STORE_ENV})"
        )
    return text


def shown(url: str) -> str:
    """The URL with its password hidden, for messages."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<an unreadable URL>"
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))
