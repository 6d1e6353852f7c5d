"""Values as both reports write them: human units, no false precision, the marks.

The one formatting layer the report (``report/``) and the output formats
(``formats/``) share, so neither imports the other; light (no jinja2, plotly or
scipy), so the CLI and the progress lines can use it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from pgfsbench.ratios import change_text, ratio_text

if TYPE_CHECKING:
    from pgfsbench.analysis.table import Cell, Row

BEST_MARK = "★"
CELL_TEXT = {"unsupported": "n/a", "failed": "failed", "missing": "—"}


# Units shown in a larger or smaller unit when the row's largest value asks for it:
# unit -> [(threshold, shown unit, factor)], largest first; the stored unit is the last
# resort. Bytes in binary units, as the plans write sizes; durations in µs/ms/s.
_BYTES: list[tuple[float, str, float]] = [
    (2**40, "TiB", 2**40),
    (2**30, "GiB", 2**30),
    (2**20, "MiB", 2**20),
    (2**10, "KiB", 2**10),
]
_HUMAN_UNITS: dict[str, list[tuple[float, str, float]]] = {
    "B": _BYTES,
    "B/tx": [(t, f"{u}/tx", f) for t, u, f in _BYTES],
    "B/s": [(t, f"{u}/s", f) for t, u, f in _BYTES],
    "MB": [(1024, "GB", 1024)],
    "s": [(1, "s", 1), (0.001, "ms", 0.001), (0, "µs", 1e-6)],
    "ms": [(1000, "s", 1000), (1, "ms", 1), (0, "µs", 0.001)],
    "µs": [(1e6, "s", 1e6), (1000, "ms", 1000)],
    "us": [(1e6, "s", 1e6), (1000, "ms", 1000)],
    "fraction": [(-1, "%", 0.01)],  # -1: whatever the scale
}


# Units of things counted: a whole number of them is shown without decimals (a median
# of an even number of runs may still be a half).
COUNT_UNITS = {
    "count",
    "tx",
    "buffers",
    "stalls",
    "workers",
    "runs",
    "files",
    "pages",
    "blocks",
    "checkpoints",
    "syncs",
    "errors",
    "rows",
    "statements",
}


def human_unit(unit: str, scale: float | None = None) -> tuple[str, float]:
    """(unit to show, factor to divide by) for a row of ``unit`` whose largest magnitude
    is ``scale``: 3.2e9 B → GiB, 0.44 s → ms, a fraction → %. Without a scale, or for
    a row of zeros, only the conversions that do not depend on it (fraction → %)."""
    steps = _HUMAN_UNITS.get(unit, [])
    if scale is None or not math.isfinite(scale) or scale == 0:
        steps = [s for s in steps if s[0] < 0]
    for threshold, shown, factor in steps:
        if abs(scale or 0) >= threshold:
            return shown, factor
    return unit, 1.0


def format_value(value: float | None, scale: float | None = None, unit: str | None = None) -> str:
    """Enough digits to compare, not more: 12,345 / 123.4 / 12.35 / 0.0123; zero as
    "0", and a whole count (``unit`` in COUNT_UNITS) without decimals.

    ``scale`` (the row's largest value) picks the precision, so one row reads
    1,620 / 700 rather than 1,620 / 700.0. With ``unit``, the value is shown in
    ``human_unit(unit, scale)`` (the unit itself is not appended: see
    ``format_quantity``).
    """
    if value is None or not math.isfinite(value):
        return "n/a"
    shown, factor = None, 1.0
    if unit is not None:
        shown, factor = human_unit(unit, scale)
        value = value / factor
        scale = None if scale is None else scale / factor
    value = float(f"{value:.12g}")  # 0.44 s / 0.001 is 440 ms, not 439.99999999999994
    if value == 0:
        return "0"
    a = abs(value if scale is None or not math.isfinite(scale) else scale)
    if unit in COUNT_UNITS and value.is_integer():
        return f"{value:,.0f}"
    if shown == "%":  # a share: 83%, 4.5%, 0.12%; not 83.00%
        text = f"{value:.0f}" if a >= 10 else f"{value:.1f}" if a >= 1 else f"{value:.2g}"
    elif a >= 1000 or (a >= 10 and factor < 1):  # 0.44 s is 440 ms, not 440.0 ms
        text = f"{value:,.0f}"
    elif a >= 100:
        text = f"{value:.1f}"
    elif a >= 1 or a == 0:
        text = f"{value:.2f}"
    else:
        text = f"{value:.3g}"
    if text.strip("-0.,") == "":  # not zero, but below the row's precision: not "0.00"
        # 1.5 MiB in a row of GiB: 0.0015; 56 B in a row of GiB: ≈0
        return f"{value:.2g}" if abs(value) >= 1e-4 else "≈0"
    return text


def format_quantity(value: float | None, unit: str, scale: float | None = None) -> str:
    """A value with its unit, in the unit a person would use: '2.9 GiB', '440 ms', '83%'.
    ``scale``: the row's largest value, to show a row's values alike (default: its own)."""
    if value is None or not math.isfinite(value):
        return "n/a"
    scale = abs(value) if scale is None else scale
    shown, _ = human_unit(unit, scale)
    text = format_value(value, scale, unit)
    text = text[:-2] if text.endswith(".0") else text  # alone, 440 ms reads better than 440.0
    return f"{text}%" if shown == "%" else f"{text} {shown}".rstrip()


def format_ratio(ratio: float | None) -> str:
    """A ratio as every output words it ('−47%', '3.2×'; analysis/wording.py)."""
    return "" if ratio is None or not math.isfinite(ratio) else ratio_text(ratio)


def finding_text(cell: Cell, interval: bool = True) -> str:
    """A contender cell's finding against the baseline: '−47% [−63%, −25%]' (the
    interval at the level of its decision), '' for the baseline or nothing compared."""
    f = cell.finding
    if f is None or f.ratio is None:
        return ""
    return change_text(f.ratio, f.interval if interval else None)


NO_DIRECTION_MARK = "·"


def direction_arrow(higher_is_better: bool | None) -> str:
    """↑ higher is better, ↓ lower is better, · no direction (a count, a size)."""
    if higher_is_better is None:
        return NO_DIRECTION_MARK
    return "↑" if higher_is_better else "↓"


def direction_title(higher_is_better: bool | None) -> str:
    """The arrow's meaning in words, for a tooltip."""
    if higher_is_better is None:
        return "no direction: informational"
    return "higher is better" if higher_is_better else "lower is better"


def row_scale(row: Row) -> float | None:
    """The largest magnitude of the row's metric in its table (of the row alone where
    the table did not say), for ``format_value`` and ``human_unit``: every row of a
    metric in one unit."""
    if row.scale is not None:
        return row.scale
    return max(
        (
            abs(c.value)
            for c in row.cells.values()
            if c.value is not None and math.isfinite(c.value)
        ),
        default=None,
    )


def centre_name(row: Row) -> str:
    """What a row's cells show: 'geo. mean' (the centre whose ratios the comparisons
    are) or 'median' (a row with a value at or below zero)."""
    geometric = all(c.centre == "geometric mean" for c in row.cells.values() if c.value is not None)
    return "geo. mean" if geometric else "median"


def row_unit(row: Row) -> str:
    """The unit a row's cells are shown in (``cell_text(cell, scale, row.unit)``)."""
    return human_unit(row.unit, row_scale(row))[0]


def cell_text(cell: Cell, scale: float | None = None, unit: str | None = None) -> str:
    """A cell's median, in ``human_unit(unit, scale)`` when a unit is given."""
    if cell.status == "ok":
        return format_value(cell.value, scale, unit)
    return CELL_TEXT.get(cell.status, cell.status)


def spread_text(cell: Cell) -> str:
    """'±3% n=5' for a repeated cell: the 95% CI half-width of its median; '' for n=1."""
    if cell.half_width is None or not math.isfinite(cell.half_width):
        return ""
    width = "<1%" if cell.half_width < 0.005 else f"{cell.half_width:.0%}"
    return f"±{width} n={cell.n}"


# How the text output and the history colour compare's marks.
MARK_STYLE = {"+": "green", "−": "red", "≠": "yellow", "~": "dim", "?": "yellow"}


def verdict_mark(cell: Cell) -> str:
    return cell.finding.mark if cell.finding is not None else ""


def verdict_kind(cell: Cell) -> str:
    """'worse', 'not told apart', 'equivalent within ±10%' ('' where nothing was tested)."""
    f = cell.finding
    return "" if f is None or f.outcome == "na" else f.outcome_words()


def csv_cell(value: Any) -> str:
    """A value as a CSV cell: lossless numbers, yes/no, empty for nothing."""
    if hasattr(value, "item"):  # a numpy scalar: its repr would be np.float64(...)
        value = value.item()
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ""
    if isinstance(value, (list, tuple)):
        return " ".join(csv_cell(v) for v in value)
    return str(value)
