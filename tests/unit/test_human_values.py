"""How the reports write values (human units, no false precision) and where ★ goes
(only where a decided verdict makes a target the best)."""

from __future__ import annotations

import numpy as np
import pytest

from pgfsbench.analysis.cells import CellKey, Samples
from pgfsbench.analysis.table import Cell, Source, build_table
from pgfsbench.render.values import (
    cell_text,
    format_quantity,
    format_ratio,
    format_value,
    human_unit,
    spread_text,
)
from pgfsbench.report.html import _fact, _params


@pytest.mark.parametrize(
    "value, scale, unit, text",
    [
        (3_221_225_472.0, 3_221_225_472.0, "B", "3.00"),  # GiB
        (1_572_864.0, 3_221_225_472.0, "B", "0.0015"),  # a small value in a GiB row
        (56.0, 3_000_000_000.0, "B", "≈0"),  # not zero, below the row's precision
        (0.44, 0.44, "s", "440"),  # ms, not 439.99999999999994
        (0.0, 0.44, "s", "0"),
        (0.0596, 0.1018, "s", "60"),  # ms: whole ones from 10 ms
        (0.0035, 0.0042, "s", "3.50"),
        (0.002, 0.002, "ms", "2.00"),  # µs
        (2_500.0, 2_500.0, "ms", "2.50"),  # s
        (0.8265, 0.96, "fraction", "83"),  # %
        (20.0, 3751.0, "count", "20"),  # a count: no decimals
        (2.5, 3.0, "count", "2.50"),  # a median of counts can be a half
        (8.0, 8.0, "ms", "8.00"),  # a duration keeps the row's precision
        (1340.6, 1340.6, "tx/s", "1,341"),
    ],
)
def test_format_value_in_human_units(value, scale, unit, text) -> None:
    assert format_value(value, scale, unit) == text


def test_human_unit_picks_the_unit_from_the_rows_largest_value() -> None:
    assert human_unit("B", 3e9) == ("GiB", 2**30)
    assert human_unit("B", 900) == ("B", 1.0)
    assert human_unit("B/tx", 18953.0) == ("KiB/tx", 2**10)
    assert human_unit("s", 0.44) == ("ms", 0.001)
    assert human_unit("s", 12.0) == ("s", 1)
    assert human_unit("s", 0.0) == ("s", 1.0)  # a row of zeros keeps its unit
    assert human_unit("fraction", None) == ("%", 0.01)
    assert human_unit("ops/s", 5e6) == ("ops/s", 1.0)  # a rate is not rescaled


def test_quantities_ratios_and_spreads_read_as_people_write_them() -> None:
    assert format_quantity(2_792_207_872.0, "B") == "2.60 GiB"
    assert format_quantity(0.44, "s") == "440 ms"
    assert format_quantity(0.83, "fraction") == "83%"
    assert format_quantity(None, "s") == "n/a"
    assert format_ratio(None) == "" and format_ratio(float("nan")) == ""
    assert format_ratio(1.19) == "+19%" and format_ratio(2.5) == "×2.5"
    cell = Cell(1.0, False, "ok", n=5, half_width=0.001)
    assert spread_text(cell) == "±<1% n=5"
    assert cell_text(Cell(None, False, "unsupported")) == "n/a"
    assert cell_text(Cell(0.0, False, "ok"), 0.5, "s") == "0"


def test_provenance_facts_and_params_never_show_reprs() -> None:
    assert (
        _fact({"device": "/dev/loop7", "queue": {}, "restore_problems": [], "sysctls": {}})
        == "device: /dev/loop7; queue: none; restore problems: none; sysctls: none"
    )
    assert _fact(None) == "—" and _fact(True) == "yes" and _fact([]) == "none"
    # the CPUs' wake-up latency a campaign held: microseconds, said as such
    assert (
        _fact({"asked_us": 0, "held": True, "effective_us": 2000})
        == "asked: 0 µs; held: yes; effective: 2,000 µs"
    )
    assert (
        _params({"tools": ["dd"], "direct": True, "size": "8k", "x": None})
        == "tools=dd direct=true size=8k"
    )  # an unset parameter is left out


def _table(
    values: dict[str, list[float]],
    metric: str = "pgbench.tps",
    unit: str = "tx/s",
    higher: bool | None = True,
    paired: bool = True,
):
    """One measurement; value i of each target measured in round i + 1."""
    cells = {
        CellKey(t, "pgbench", "", metric): Samples(
            unit,
            higher,
            values=list(v),
            rounds=list(range(1, len(v) + 1)) if paired else [],
            block="c1" if paired else "",
            params={"clients": 8},
        )
        for t, v in values.items()
    }
    return build_table(Source(list(values), cells), None, 0.05, 0.02)


def _noise(mean: float, n: int, seed: int) -> list[float]:
    return list(np.random.default_rng(seed).normal(mean, mean * 0.01, n))


def _best(table) -> list[str]:
    return [t for t, c in table.rows[0].cells.items() if c.best]


def test_the_star_goes_to_a_decided_winner_only() -> None:
    table = _table({"a": _noise(1000, 8, 1), "b": _noise(1300, 8, 2), "c": _noise(900, 8, 3)})
    assert table.rows[0].headline and _best(table) == ["b"]


def test_no_star_for_a_single_run_a_tie_or_an_undecided_lead() -> None:
    assert _best(_table({"a": [1000.0], "b": [1300.0]})) == []  # one run each
    assert _best(_table({"a": [1000.0] * 6, "b": [1000.0] * 6})) == []  # a tie
    # b leads a by 0.5%, inside the noise margin: undecided (or equivalent), no ★
    assert _best(_table({"a": _noise(1000, 8, 4), "b": _noise(1005, 8, 5)})) == []


def test_no_star_for_zeros_or_rows_without_direction() -> None:
    zeros = _table(
        {"a": [0.0, 0.0, 0.0, 0.0], "b": [2.0, 3.0, 2.0, 3.0]},
        metric="pgbench.failed",
        unit="tx",
        higher=False,
    )
    assert _best(zeros) == []
    sizes = _table(
        {"a": _noise(100, 8, 6), "b": _noise(200, 8, 7)},
        metric="pgbench_init.db_size_mb",
        unit="MB",
        higher=None,
    )
    assert _best(sizes) == []
