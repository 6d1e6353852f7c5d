"""Did the kernel mount with the options the plan asked for?

The kernel lists a mount's options in its own words (``logbsize=256k`` for
``logbsize=262144``), leaves out the ones that are its defaults, and drops some
it accepts but no longer honours (ext4 ``nobh``, xfs ``ikeep``). This compares
what was asked with what ``/proc/self/mountinfo`` says, option by option, so the
report can tell "the kernel ignored nobh" apart from "written differently".

Pure: the caller reads mountinfo (provision) or the stored provenance (report);
each filesystem's defaults come from its recipe.
"""

from __future__ import annotations

from pgfsbench.filesystems.mountoptions import GENERIC_DEFAULTS, USERSPACE
from pgfsbench.filesystems.recipe import Recipe
from pgfsbench.filesystems.registry import find, recipes
from pgfsbench.units import option_size_to_bytes

KEPT = "kept"  # listed exactly as asked
EQUIVALENT = "equivalent"  # listed in another spelling or unit, same meaning
DEFAULT = "default"  # not listed because it is the kernel's default (the kernel hides those)
IMPLIED = "implied"  # not listed, but an option that includes it is
CHANGED = "changed"  # listed with another value, or its opposite is in effect
IGNORED = "ignored"  # not listed and not a known default: the kernel dropped it
PROBLEMS = (CHANGED, IGNORED)

# Listed under another name: asked → what the kernel shows.
SYNONYMS = {
    "barrier=0": "nobarrier",
    "barrier=1": "barrier",
    "discard=sync": "discard",
    "bsdgroups": "grpid",
    "sysvgroups": "nogrpid",
    "quota": "usrquota",
    "uquota": "usrquota",
    "gquota": "grpquota",
    "pquota": "prjquota",
}
_OPPOSITE = {"ro": "rw", "rw": "ro", "sync": "async", "async": "sync"}

# Not listed, but implied by an option that is (a filesystem's own are in its recipe).
IMPLIED_BY = {"nodiratime": ("noatime",)}

ATIME = ("noatime", "relatime", "strictatime")  # one holds; strictatime is the unlisted one


def _recipes_for(fs: str | None) -> list[Recipe]:
    """The recipe whose defaults apply; every recipe when fs is not given or not known."""
    found = find(fs)
    if found is not None and found.kernel_defaults is not None:
        return [found]
    return recipes()


def _split(option: str) -> tuple[str, str | None]:
    name, sep, value = option.strip().partition("=")
    return name, (value if sep else None)


def _norm_value(value: str | None) -> str | None:
    """Sizes in bytes, so logbsize=262144 and logbsize=256k compare equal."""
    if value is None:
        return None
    size = option_size_to_bytes(value.strip())
    return value.strip() if size is None else str(size)


def _canon(option: str) -> str:
    name, value = _split(option)
    return name if value is None else f"{name}={_norm_value(value)}"


def _same(asked: str | None, shown: str | None) -> bool:
    if _norm_value(asked) == _norm_value(shown):
        return True
    # btrfs lists the level it chose: compress=zstd → compress=zstd:3
    return asked is not None and shown is not None and shown.startswith(asked + ":")


def _is_default(option: str, fs: str | None) -> bool:
    if option in GENERIC_DEFAULTS:
        return True
    return any(
        _canon(option) in {_canon(d) for d in r.kernel_defaults or ()} for r in _recipes_for(fs)
    )


def _impliers(name: str, fs: str | None) -> list[str]:
    found = find(fs)
    pool = [found] if found is not None else recipes()
    return [*IMPLIED_BY.get(name, ()), *(i for r in pool for i in r.implied_by.get(name, ()))]


def _opposite(name: str) -> str:
    if name in _OPPOSITE:
        return _OPPOSITE[name]
    return name[2:] if name.startswith("no") else "no" + name


def _row(option: str, status: str, effective: str | None, note: str = "") -> dict:
    return {"option": option, "status": status, "effective": effective, "note": note}


def _check_atime(option: str, shown: dict[str, str | None]) -> dict:
    in_effect = next((a for a in ATIME if a in shown), "strictatime")
    if in_effect == option:
        return _row(
            option,
            KEPT,
            option if option in shown else None,
            "" if option in shown else "listing no atime option means strictatime",
        )
    return _row(option, CHANGED, in_effect, f"{in_effect} is in effect")


def _check_one(option: str, shown: dict[str, str | None], fs: str | None) -> dict:
    if option in USERSPACE:
        return _row(option, DEFAULT, None, "handled by mount(8), not passed to the kernel")
    if option in ATIME:
        return _check_atime(option, shown)
    canonical = SYNONYMS.get(option, option)
    name, value = _split(canonical)
    if name in shown:
        got = shown[name]
        text = name if got is None else f"{name}={got}"
        if canonical != option and (value is None or _same(value, got)):
            return _row(option, EQUIVALENT, text, f"the kernel writes it {text}")
        if value == got:
            return _row(option, KEPT, text)
        if value is None:
            return _row(option, KEPT, text, f"the kernel lists the value it chose ({got})")
        if _norm_value(value) == _norm_value(got):
            return _row(option, EQUIVALENT, text, f"same value, written {got} by the kernel")
        if _same(value, got):
            return _row(option, EQUIVALENT, text, f"the kernel adds the level it chose ({got})")
        return _row(option, CHANGED, text, f"asked {value}, in effect {got}")
    if value is None and (opposite := _opposite(name)) in shown:
        got = shown[opposite]
        text = opposite if got is None else f"{opposite}={got}"
        return _row(option, CHANGED, text, f"{text} is in effect")
    if _is_default(option, fs) or _is_default(canonical, fs):
        return _row(
            option, DEFAULT, None, f"{option} is the default, which the kernel does not list"
        )
    for implier in _impliers(name, fs):
        if implier in shown:
            return _row(option, IMPLIED, implier, f"included in {implier}")
    return _row(option, IGNORED, None, "accepted by mount but not among the effective options")


def mount_option_changes(asked: str, effective: list[str], *, fs: str | None = None) -> list[dict]:
    """One row per option asked: ``option``, ``status``, ``effective``, ``note``.

    ``asked`` is the plan's comma list; ``effective`` the options the kernel
    lists (``MountEntry.options``). With ``fs`` the known defaults are that
    filesystem's; without it, any filesystem's (a listed option is never
    mistaken for a default, so the looser check only matters for absent ones).
    """
    shown: dict[str, str | None] = {}
    for opt in effective:
        name, value = _split(opt)
        if name:
            shown.setdefault(name, value)
    seen: set[str] = set()
    rows = []
    for option in (o.strip() for o in (asked or "").split(",")):
        if option and option not in seen:
            seen.add(option)
            rows.append(_check_one(option, shown, fs))
    return rows


def problems(changes: list[dict]) -> list[dict]:
    return [c for c in changes if c.get("status") in PROBLEMS]


def describe(change: dict) -> str:
    """One sentence for a reader: 'the kernel ignored nobh: ...'."""
    option, status = change.get("option", "?"), change.get("status")
    if status == IGNORED:
        return f"the kernel ignored {option}: it is not among the effective mount options"
    if status == CHANGED:
        return f"the kernel changed {option}: in effect {change.get('effective') or '?'}"
    note = change.get("note")
    return f"{option}: {status}" + (f" ({note})" if note else "")


def changes_for(provenance: dict, spec: dict, fs: str | None = None) -> list[dict]:
    """The stored check, or one computed from the plan and the effective options."""
    stored = provenance.get("mount_option_changes")
    if isinstance(stored, list):
        return stored
    effective = provenance.get("effective_mount_options")
    asked = spec.get("mount") if isinstance(spec, dict) else None
    if not asked or not isinstance(effective, list):
        return []
    return mount_option_changes(asked, effective, fs=provenance.get("mounted_fs_type") or fs)
