"""Filesystem geometry as the filesystem's own tools report it (read-only).

xfs_info, ``dumpe2fs -h`` and ``btrfs inspect-internal dump-super`` say what
mkfs really built (allocation groups, stripe alignment, journal, node size),
which can differ from what the plan asked. The raw text is kept beside the
parsed facts, and a failing tool gives an error entry, never an exception:
provenance must not fail a run. Which tools to run and how to read them is the
filesystem's recipe's; running them is done here.
"""

from __future__ import annotations

import subprocess

from pgfsbench import proc
from pgfsbench.filesystems.registry import find

TIMEOUT_S = 30


def _run(argv: list[str]) -> tuple[str, str | None]:
    """(stdout, error or None); a missing tool, a timeout or a non-zero exit is an error."""
    tool = proc.which(argv[0])
    if tool is None:
        return "", f"{argv[0]} not found: install its package to record this geometry"
    try:
        result = proc.run([tool, *argv[1:]], check=False, timeout=TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return "", f"{argv[0]} could not run: {exc}"
    if not result.ok:
        lines = [ln.strip() for ln in (result.stderr or result.stdout).splitlines() if ln.strip()]
        raw = result.stdout + (
            ("\n" if result.stdout else "") + result.stderr if result.stderr else ""
        )
        return raw, f"{argv[0]} exited {result.exit_code}: " + " / ".join(lines[-3:])
    return result.stdout, None


def _entry(argv: list[str], parse) -> dict:
    text, error = _run(argv)
    entry: dict = {"tool": argv, "facts": {} if error else parse(text), "raw": text}
    if error:
        entry["error"] = error
    return entry


def filesystem_geometry(fs: str, device: str | None, mount_point: str | None = None) -> dict:
    """``{"tool": argv, "facts": {...}, "raw": text}`` (+ ``"error"``, + ``"extra"``)."""
    try:
        recipe = find(fs)
        readers = recipe.geometry(device, mount_point) if recipe and recipe.geometry else []
        if not readers:
            return {
                "tool": None,
                "facts": {},
                "raw": "",
                "error": f"no geometry tool for {fs}" + ("" if device else " without a device"),
            }
        (argv, parse), *more = readers
        entry = _entry(argv, parse)
        if more:  # further readers add their facts to the main entry's
            extra = [_entry(a, p) for a, p in more]
            for e in extra:
                entry["facts"].update(e.pop("facts"))
            entry["extra"] = extra
        return entry
    except Exception as exc:  # a parser bug must not cost the run its results
        return {"tool": None, "facts": {}, "raw": "", "error": f"geometry failed: {exc!r}"}
