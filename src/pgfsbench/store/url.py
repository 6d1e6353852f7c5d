"""Naming the PostgreSQL results store: any connection string libpq accepts.

- a URL: ``postgresql://[user[:password]@][host][:port]/dbname[?param=value&...]``
  (``postgres://`` too);
- keyword/value words: ``host=db.example dbname=pgfsbench user=bench``;
- a service: ``service=bench`` (its entry in ``~/.pg_service.conf`` or
  ``$PGSERVICEFILE``), with more words beside it if wanted.

What the string leaves out comes from libpq's environment as for psql (``PGHOST``,
``PGPORT``, ``PGUSER``, ``PGDATABASE``, ``PGPASSWORD``, ``~/.pgpass``, ``PGSERVICE``...).
``PGFSBENCH_STORE`` gives the default store. The string is checked by libpq's own
parser (through psycopg): what libpq refuses is refused, in one line with its reason,
and nothing else is. Messages never show a password.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from pgfsbench.errors import UserError

STORE_ENV = "PGFSBENCH_STORE"
SCHEMES = ("postgresql", "postgres")
FORMS = (
    "a URL (postgresql://user@host:5432/pgfsbench), keyword/value words "
    "('host=db.example dbname=pgfsbench user=bench') or a service (service=NAME)"
)
_URL = re.compile(r"^(postgresql|postgres)://")
_ANY_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
# A password among keyword/value words (password=secret, password = 'it\\'s a b'), and
# among a URL's query parameters (?password=secret&...).
_PASSWORD_WORD = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)")
_PASSWORD_PARAM = re.compile(r"([?&]password=)([^&#]*)")


def parse_conninfo(text: str) -> dict[str, str]:
    """The parameters ``text`` gives, as libpq parses it (ValueError with libpq's
    reason if libpq refuses it)."""
    import psycopg

    try:
        return psycopg.conninfo.conninfo_to_dict(text)  # type: ignore[return-value]
    except psycopg.ProgrammingError as exc:
        lines = str(exc).strip().splitlines()
        raise ValueError(lines[0] if lines else "not a connection string") from None


def is_store_url(text: str) -> bool:
    """Whether ``text`` names a store (a connection string libpq accepts, with at least
    one parameter) rather than a path: a path has neither a scheme nor ``=``."""
    if _URL.match(text):
        return True
    if "=" not in text:
        return False
    try:
        return bool(parse_conninfo(text))
    except ValueError:
        return False


def check_store_url(text: str) -> str:
    """``text`` if libpq accepts it as a connection string, else UserError with libpq's
    reason and the forms one takes."""
    try:
        parse_conninfo(text)
    except ValueError as exc:
        raise UserError(
            f"--store {shown(text)!r} is not a PostgreSQL connection string "
            f"({_hidden(str(exc), text)}): give {FORMS}, or set {STORE_ENV}"
        ) from None
    if not text.strip():
        raise UserError(f"--store is empty: give {FORMS}, or set {STORE_ENV}")
    return text


def shown(url: str) -> str:
    """The connection string with its password hidden, for messages."""
    if not _ANY_URL.match(url):
        return _PASSWORD_WORD.sub(r"\1***", url)
    text = _PASSWORD_PARAM.sub(r"\1***", url)
    try:
        parts = urlsplit(text)
        password = parts.password
    except ValueError:
        return text.split("://", 1)[0] + "://<unreadable>"
    if password is None:
        return text
    netloc = parts.netloc.replace(f":{password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _secrets(text: str) -> list[str]:
    """The passwords ``text`` holds: a URL's (any scheme: a mistyped one too), and a
    password word's or query parameter's value."""
    found = [m.group(2) for m in _PASSWORD_WORD.finditer(text)]
    if _ANY_URL.match(text):
        found = [m.group(2) for m in _PASSWORD_PARAM.finditer(text)]
        try:
            found.append(urlsplit(text).password or "")
        except ValueError:
            found.append(text.split("://", 1)[1])  # unreadable: show none of it
    return sorted({s for s in found if s}, key=len, reverse=True)


def _hidden(message: str, text: str) -> str:
    """``message`` (libpq's, quoting part of ``text``) with every password ``text``
    holds replaced by ***."""
    for secret in _secrets(text):
        message = message.replace(secret, "***")
    return message
