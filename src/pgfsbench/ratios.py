"""Ratios in words, the same in every output: '−47%', '×3.2', '[−63%, −25%]'.

Light (nothing but ``math``) and at the bottom of the layers: the analysis words its
findings with it, and the formatting layer (``render/``) and the commands' help use it
without loading the statistics.
"""

from __future__ import annotations

import math

MINUS = "\u2212"


def percent(ratio: float, more: int = 0) -> str:
    """'+9.5%', '−47%': a change in percent, two significant digits from 10%; ``more``
    digits where a narrow interval would otherwise read '−20% [−20%, −20%]'."""
    x = (ratio - 1) * 100
    digits = (0 if abs(x) >= 9.95 else 1) + more
    text = f"{x:+.{digits}f}%"
    if float(text[:-1]) == 0:  # '−0.0%' is no change: no sign
        return text[1:]
    return text.replace("-", MINUS)


def ratio_text(ratio: float | None, multiple: bool | None = None, more: int = 0) -> str:
    """A ratio as a DBA reads it, never in scientific notation: a percent change from
    ×0.5 to ×2 ('−47%', '+9.5%'), a multiple beyond ('×3.2', '×146', '×0.031'), the
    same in every output; ``multiple`` forces one form (an interval's ends take their
    figure's)."""
    if ratio is None or not math.isfinite(ratio):
        return "no ratio"
    if ratio <= 0:
        return "×0"
    if multiple is None:
        multiple = not 0.5 <= ratio < 2
    return f"×{_sig(ratio, more)}" if multiple else percent(ratio, more)


def _sig(x: float, more: int = 0) -> str:
    """Two significant digits, as a plain number: 3.2, 15, 146 (three digits from 100:
    a rounded 150 would read as a different figure), 0.031; ``more`` beyond them."""
    if x >= 100:
        return f"{x:,.{more}f}"
    if x >= 10:
        return f"{x:.{more}f}"
    if x >= 1:
        return f"{x:.{1 + more}f}"
    digits = max(2, 1 - math.floor(math.log10(x))) + more
    return f"{x:.{digits}f}"


def change_text(
    ratio: float | None, ci: tuple[float, float] | None = None, what: str = "", label: str = ""
) -> str:
    """'−47% [−63%, −25%]', or all three as multiples where one of them leaves ×0.5..×2
    ('×5.5 [×1.1, ×28]'); ``what`` goes between the figure and its interval ('−47%
    TPC-B tps [...]'), ``label`` inside the brackets ('[99.2% CI −63%, −25%]')."""
    if ratio is None:
        return "no ratio"
    what = f" {what}" if what else ""
    if ci is None:
        return f"{ratio_text(ratio)}{what}"
    multiple = not all(0.5 <= x < 2 for x in (ratio, *ci))
    label = f"{label} " if label else ""
    figure, low, high = _distinct((ratio, *ci), multiple)
    return f"{figure}{what} [{label}{low}, {high}]"


def _distinct(xs: tuple[float, ...], multiple: bool) -> list[str]:
    """The figures in as few digits as tell them apart (up to two more than usual): a
    narrow interval reads '−20.0% [−20.3%, −19.6%]', not '−20% [−20%, −20%]'."""
    for more in range(3):
        texts = [ratio_text(x, multiple, more) for x in xs]
        if len(set(texts)) == len({round(x, 12) for x in xs}):
            break
    return texts


def span_text(ci: tuple[float, float]) -> str:
    """'−17%..+20%', or '×0.085..×3.0' where an end leaves ×0.5..×2."""
    multiple = not all(0.5 <= x < 2 for x in ci)
    return "..".join(_distinct(ci, multiple))
