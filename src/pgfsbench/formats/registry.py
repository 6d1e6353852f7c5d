"""Output formats: what one is, and the one table of them every ``--format`` reads.

Five kinds of output take a ``--format``: ``export`` (one stored campaign with every
run), ``comparison`` (what ``compare`` prints), ``advice`` (``advise``), ``list`` and
``history``. A format is an ``OutputFormat``: a name, a file type, and a writer per kind
it writes. The formats are the entry points of the ``pgfsbench.formats`` group
(extensions.py), each named ``KIND.NAME`` (``export.json``, ``advice.conf``), so the
names a kind offers are known without importing a writer; a test adds a toy with
``registered(fmt)``. The CLI builds its help from this table, so a format module keeps
its top-level imports light (no analysis, no scipy): its writers import what they need.

A format may take options (markdown's ``full``, csv's ``bom``): it names them in
``options`` and its writers take each as a keyword; the CLI refuses an option the
chosen format does not take (``check_options``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TextIO

from pgfsbench import extensions
from pgfsbench.errors import UserError

EXPORT = "export"
COMPARISON = "comparison"
ADVICE = "advice"
LIST = "list"
HISTORY = "history"
KINDS = (EXPORT, COMPARISON, ADVICE, LIST, HISTORY)
# How an error names one output of each kind.
_NOUNS = {
    EXPORT: "an export",
    COMPARISON: "a comparison",
    ADVICE: "advice",
    LIST: "a list",
    HISTORY: "a history",
}

# Writes one output (a store.read.Campaign for EXPORT, a compare.comparison.Comparison for
# COMPARISON, an analysis.advice.recommendation.Advice, a list of
# analysis.verdicts.summary.Summary, a list of compare.series.Series), with the format's
# options as keywords.
Writer = Callable[..., None]


@dataclass(frozen=True)
class OutputFormat:
    """One output format: a name, a file type, and a writer per kind of output it writes.

    Each kind it writes is an entry point ``KIND.NAME`` of the ``pgfsbench.formats``
    group naming this object (``"export.tsv" = "pgfsbench_sleep.tsv:FORMAT"``); the
    command of that kind then offers ``--format NAME`` and lists it in its help.
    """

    name: str
    """What ``--format`` takes."""

    extension: str
    """The extension of a file in this format, without the dot."""

    media_type: str
    """Its media type (``text/csv``)."""

    writers: Mapping[str, Writer]
    """Kind (``EXPORT``, ``COMPARISON``, ``ADVICE``, ``LIST``, ``HISTORY``) → its writer,
    ``(subject, out, **options) -> None``, for each kind it writes: the subject is a
    ``store.read.Campaign`` (export), a ``compare.comparison.Comparison`` (comparison),
    an ``analysis.advice.recommendation.Advice`` (advice), a list of
    ``analysis.verdicts.summary.Summary`` (list) or of ``compare.series.Series``
    (history); ``out`` a text stream."""

    order: int = 1000
    """Where the help lists it: lower first (a third party's after the shipped ones)."""

    description: str = ""
    """Said after the name in the help, in parentheses."""

    series: bool = True
    """Whether its export writer reads the runs' per-second series: a format that does
    not is given the campaign without them (reading them is most of a small export's
    time)."""

    options: tuple[str, ...] = ()
    """The options its writers take as keywords, each a flag that is False by default
    (markdown's ``full``, csv's ``bom``); a command refuses an option the chosen format
    does not take."""

    def __post_init__(self) -> None:
        if unknown := set(self.writers) - set(KINDS):
            raise ValueError(f"format {self.name!r}: no output kind {sorted(unknown)}")

    def writes(self, kind: str) -> bool:
        """Whether it writes outputs of ``kind``."""
        return kind in self.writers

    def write(self, kind: str, subject: Any, out: TextIO, **options: bool) -> None:
        """Write ``subject``; ``options`` that are set must be among ``self.options``."""
        given = {k: v for k, v in options.items() if v}
        if unknown := set(given) - set(self.options):
            raise ValueError(f"format {self.name!r} takes no option {sorted(unknown)}")
        self.writers[kind](subject, out, **given)


def check_options(fmt: OutputFormat, **options: bool) -> None:
    """A UserError (exit 2) naming each option given that ``fmt`` does not take, and the
    formats of its kinds that do."""
    for name, value in options.items():
        if value and name not in fmt.options:
            takers = sorted(
                {f.name for kind in fmt.writers for f in formats(kind) if name in f.options}
            )
            where = f" (it applies to --format {' or '.join(takers)})" if takers else ""
            raise UserError(
                f"--{name.replace('_', '-')} is not an option of the {fmt.name} format{where}"
            )


def contract(name: str, obj: object) -> str | None:
    """What an entry ``KIND.NAME`` of the group must be: an OutputFormat named NAME that
    writes KIND."""
    kind, _, fmt = name.partition(".")
    if kind not in KINDS or not fmt:
        return f"an entry is named KIND.FORMAT, KIND one of {', '.join(KINDS)}"
    if not isinstance(obj, OutputFormat):
        return f"not an OutputFormat but {type(obj).__name__}"
    if obj.name != fmt:
        return f"the format is named '{obj.name}', the entry point '{fmt}'"
    if not obj.writes(kind):
        return f"the {fmt} format has no {kind} writer"
    return None


_added: dict[tuple[str, str], OutputFormat] = {}  # (kind, name), by register(): a test's toy


def formats(kind: str) -> list[OutputFormat]:
    """The formats that write ``kind``, in the order the help lists them."""
    _check_kind(kind)
    found = {
        entry.partition(".")[2]: extensions.load(extensions.FORMATS, entry, contract)
        for entry in extensions.names(extensions.FORMATS)
        if entry.partition(".")[0] == kind
    }
    found.update({name: fmt for (k, name), fmt in _added.items() if k == kind})
    return sorted(found.values(), key=lambda f: (f.order, f.name))


def names(kind: str) -> list[str]:
    """The formats that write ``kind``."""
    return [fmt.name for fmt in formats(kind)]


def help_names(kind: str) -> list[str]:
    """The names as the help lists them: with a description when the format has one."""
    return [f"{f.name} ({f.description})" if f.description else f.name for f in formats(kind)]


def pick(name: str, kind: str) -> OutputFormat:
    """The format ``name`` for ``kind``; a UserError (exit 2) when there is none."""
    offered = formats(kind)
    choices = ", ".join(f.name for f in offered)
    for fmt in offered:
        if fmt.name == name:
            return fmt
    if any(name in names(other) for other in KINDS if other != kind):
        raise UserError(
            f"the {name} format does not write {_NOUNS[kind]} ({kind} formats: {choices})"
        )
    raise UserError(f"unknown {kind} format '{name}' (available: {choices})")


def register(fmt: OutputFormat) -> OutputFormat:
    """Add ``fmt`` for every kind it writes (a test's toy; a package uses an entry point)."""
    for kind in fmt.writers:
        if fmt.name in names(kind):
            raise ValueError(f"output format {fmt.name!r} is registered twice")
    for kind in fmt.writers:
        _added[(kind, fmt.name)] = fmt
    return fmt


def unregister(fmt: OutputFormat) -> None:
    for kind in fmt.writers:
        del _added[(kind, fmt.name)]


@contextlib.contextmanager
def registered(*added: OutputFormat) -> Iterator[None]:
    """The formats ``added`` are offered for the duration (a test's toys)."""
    done = []
    try:
        for fmt in added:
            done.append(register(fmt))
        yield
    finally:
        for fmt in done:
            unregister(fmt)


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"no output kind {kind!r} (kinds: {', '.join(KINDS)})")
