"""One rule for every string in a plan: a single line of printable text.

A plan's strings end up in files (postgresql.conf, sysfs, the ledger) and in
argument lists (mkfs, mount), and are printed to the terminal. A newline can
smuggle a second line into a config file, a NUL cuts an argument short (or
crashes the call), and an escape sequence rewrites the user's terminal. So no
string anywhere in a plan, key or value, may hold a control character; only
``description`` may span lines.
"""

from __future__ import annotations

import unicodedata

from pgfsbench.errors import UserError

MULTILINE_KEYS = frozenset({"description"})  # free text, printed escaped


def control_character(text: str, multiline: bool = False) -> str | None:
    """The first control character in ``text``, described (e.g. "a newline (U+000A)"),
    or None when there is none. ``multiline`` allows newlines and tabs."""
    for ch in text:
        category = unicodedata.category(ch)
        if multiline and (ch in "\n\t" or category == "Cf"):  # Cf: emoji joiners, marks
            continue
        if category in ("Cc", "Cf", "Zl", "Zp"):
            name = {
                "\n": "a newline",
                "\r": "a carriage return",
                "\t": "a tab",
                "\0": "a NUL",
                "\x1b": "an escape",
            }.get(ch, "a control character")
            return f"{name} (U+{ord(ch):04X})"
    return None


def _name_of(item: object, index: int) -> str:
    """A list entry by its name (a target after extends/matrix), else its index."""
    if (
        isinstance(item, dict)
        and isinstance(item.get("name"), str)
        and control_character(item["name"]) is None
    ):
        return item["name"]
    return str(index)


def check_strings(data: object, source: str, where: tuple[str, ...] = ()) -> None:
    """Raise UserError naming the first key or value of ``data`` (plan data as TOML
    gives it) that holds a control character."""
    path = ".".join(where) or "plan"
    if isinstance(data, str):
        if problem := control_character(
            data, multiline=bool(where) and where[-1] in MULTILINE_KEYS
        ):
            raise UserError(
                f"plan {source}: {path}: contains {problem}; plan values are "
                "printable text on one line (only a description may span lines)"
            )
    elif isinstance(data, dict):
        for key, value in data.items():
            if problem := control_character(str(key)):
                raise UserError(f"plan {source}: {path}: a key contains {problem}: {str(key)!r}")
            check_strings(value, source, (*where, str(key)))
    elif isinstance(data, list):
        for i, item in enumerate(data):
            check_strings(item, source, (*where, _name_of(item, i)))
