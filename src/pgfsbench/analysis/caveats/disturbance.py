"""Disturbed visits: someone else's load on the machine while a run measured, seen by the
per-second monitors beside it (others' CPU, steal, the backing disk's other traffic).

A run on a 2-core machine caught by a neighbour's burst loses 60-80% of its
throughput while the burst lasts: that visit measured the neighbour, not the
filesystem. The rule marks such a run *disturbed*, with its evidence; the campaign
runs it again later in the same round or, with its allowance spent, keeps it and
leaves it out of the statistics, and every output shows it (docs/statistics.md).

**On the machine's evidence only, never on the run's own result.** A monitor interval
(a second) of a run is *busy* when others used at least ``BUSY_OTHER_CPU`` percent of
all CPUs in user time outside pgfsbench's processes (``mon.cpu.other_user_pct``;
kernel threads doing our own I/O run as system time and never count), the
hypervisor stole at least ``BUSY_STEAL`` percent (``mon.cpu.steal_pct``), or the disk
under a loop target's image moved at least ``BUSY_OTHER_DISK_MB_S`` beyond what the
loop device did. A run is disturbed when it had a busy second **and** the machine was
clearly busier during it than during the quietest run of the same measurement in its
round (by ``MARGIN`` of that cause, averaged over each run): a neighbour's burst hits
one visit and spares the others, while a load that stays the same through the round
is a level every target's visit shares, which the paired comparison within the round
already cancels (and the "other load" caveat reports). The runs' tps, latency or
whatever they measured play no part: a rule that also looked at a low result would
run a slow target's unlucky visits again more often than a fast one's, and bias every
comparison it touches.

The thresholds sit far above what a quiet machine shows: in the quiet default-plan
campaign kept as the docs' fixture (105 runs, 617 intervals) others' CPU was at most
12% in any interval (99th percentile 2.1%), steal at most 1.5%, the backing disk at
most 12 MB/s beyond the loop device (the allocation under a fresh fio file); a
neighbour's burst shows 40-90% of the CPUs and hundreds of MB/s
(``tests/fixtures/disturbance/``).

Pure, in two halves as in ``bound.py``:

- ``disturbance_metrics(series)`` when a run is recorded: the inputs, as
  ``disturb.*`` metrics (busy seconds and levels by cause, the run's mean of each), so
  nothing later needs the series;
- ``judge_round(runs)`` on both sides: the campaign, to run a visit again; the
  statistics, the report and the exports, to leave a kept one out and show it
  (``disturbed_runs`` over stored runs).

**Its seconds left out, where a burst was shorter than the visit.** A run whose headline
has a per-second curve of its own (TPC-B's tps) records, beside its inputs, what its
figure is over the seconds no busy interval touched: ``disturb.clean_s`` (those whole
seconds, after the warm-up) and ``disturb.clean_ratio`` (their mean over the mean of
every whole second measured). A disturbed run with at least ``MIN_CLEAN_S`` of them is
*trimmed*: counted, its headline times that ratio (the same definition as every other
run's, over the seconds the burst spared), its other figures left out; it is not run
again, which leaves the allowance to the visits a burst covered whole. A second is
touched when a busy interval may overlap it (the curve's whole seconds start up to one
second before the monitors' timeline: every second within one of a busy interval).

``quiet_for(series)`` reads the same per-interval thresholds for the seconds sampled
before a run (the campaign's wait for quiet) and for ``pgfsbench doctor``'s sample.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol, TypeVar

from pgfsbench.metrics import Metric, Series

# Others' user CPU in one interval, percent of all CPUs: a fifth of the machine (0.4 of
# a core on 2 cores). A quiet machine shows 0-3%.
BUSY_OTHER_CPU = 20.0
# Steal in one interval, percent of all CPUs: the hypervisor ran someone else.
BUSY_STEAL = 10.0
# The backing disk's traffic beyond our loop device in one interval, MB/s: a quiet
# campaign shows at most 12; a neighbour's fsync'd writes, hundreds.
BUSY_OTHER_DISK_MB_S = 50.0
# How much busier than the quietest run of its round (means over each run) a run must
# have been, by cause: a tenth of the CPUs, 5% steal, 25 MB/s on the backing disk.
MARGIN = {"other_cpu": 10.0, "steal": 5.0, "other_disk": 25.0}
CAUSES = ("other_cpu", "steal", "other_disk")
# A run the monitors sampled for less than this is never judged, nor sets its round's
# quietest: one partial sample cannot tell someone else's burst from the writeback of
# what ran before it (compression's 0.1 s run caught 650 MB/s of it).
MIN_JUDGED_S = 1.0
UNITS = {"other_cpu": "%", "steal": "%", "other_disk": "MB/s"}
# A disturbed run keeps a figure from the seconds no burst touched when it has at least
# this many whole ones after its warm-up: fewer, and it is run again or left out.
MIN_CLEAN_S = 3.0

OTHER_CPU = "mon.cpu.other_user_pct"
STEAL = "mon.cpu.steal_pct"
DISK = {
    role: tuple(f"mon.disk.{role}.{kind}_mb_per_s" for kind in ("read", "write"))
    for role in ("backing", "target")
}


@dataclass(frozen=True)
class Busy:
    """One cause in a run: its busy seconds, how busy they were, and the run's mean."""

    seconds: float
    level: float  # the mean over the busy intervals: percent of the CPUs, or MB/s
    mean: float  # the mean over the whole run
    quietest: float  # the mean of the quietest run of its round


@dataclass(frozen=True)
class Disturbance:
    """Why a run is disturbed: its busy seconds by cause, out of the seconds monitored."""

    busy_s: float  # seconds with any cause
    monitored_s: float
    causes: dict[str, Busy]  # the causes that make it disturbed, in CAUSES order
    clean_s: float = 0.0  # whole seconds of its headline's curve no busy interval touched
    clean_ratio: float | None = None  # their mean over every whole second's (None: no curve)
    measured_s: float = 0.0  # the whole seconds of that curve after the warm-up

    @property
    def trimmed(self) -> bool:
        """Counted from the seconds the burst spared (``MIN_CLEAN_S`` of them or more)."""
        return self.clean_ratio is not None and self.clean_s >= MIN_CLEAN_S

    def trim_text(self) -> str:
        """'its figure from the 3 of its 5 s after the warm-up no burst touched' (its
        monitored seconds, which ``text`` counts, include the warm-up)."""
        return (
            f"its figure from the {_secs(self.clean_s)} of its {_secs(self.measured_s)} s "
            "after the warm-up no burst touched"
        )

    def reasons(self) -> list[str]:
        """One clause per cause, with its numbers."""
        n = _secs(self.monitored_s)
        out = []
        for cause, b in self.causes.items():
            during = f"during {_secs(b.seconds)} of its {n} s"
            if cause == "other_cpu":
                out.append(f"{b.level:.0f}% of the CPUs busy outside pgfsbench {during}")
            elif cause == "steal":
                out.append(f"{b.level:.0f}% of the CPU stolen by the hypervisor {during}")
            else:
                out.append(f"the backing disk did {b.level:,.0f} MB/s beyond pgfsbench's {during}")
        return out

    def text(self) -> str:
        """'40% of the CPUs busy outside pgfsbench during 4 of its 10 s; ...'."""
        return "; ".join(self.reasons())

    def record(self) -> dict:
        """As the schedule and the exports keep it."""
        trim = (
            {"clean_s": self.clean_s, "measured_s": self.measured_s, "ratio": self.clean_ratio}
            if self.trimmed
            else {}
        )
        return {
            **trim,
            "busy_s": round(self.busy_s, 2),
            "monitored_s": round(self.monitored_s, 2),
            "causes": {
                c: {
                    "seconds": round(b.seconds, 2),
                    "level": round(b.level, 2),
                    "mean": round(b.mean, 2),
                    "quietest_in_round": round(b.quietest, 2),
                    "unit": UNITS[c],
                }
                for c, b in self.causes.items()
            },
            "text": self.text(),
        }


def _secs(s: float) -> str:
    if 0 < s < 0.05:  # a cause this short is still there: not "during 0 of its 2 s"
        return "under 0.1"
    return f"{s:.0f}" if abs(s - round(s)) < 0.05 or s >= 10 else f"{s:.1f}"


# ---------------------------------------------------------------- per interval


def intervals(
    series: Mapping[str, Series], loop: bool = True
) -> list[tuple[float, float, dict[str, float]]]:
    """(end, length, each cause's value) of every monitor interval, in order; a cause is
    left out of an interval that has no value for it. ``loop=False``: no loop device of
    ours sits on the backing disk (``doctor``'s sample), so all its traffic is others'."""
    values = {
        "other_cpu": _points(series, OTHER_CPU),
        "steal": _points(series, STEAL),
        "other_disk": _other_disk(series) if loop else _disk(series),
    }
    out = []
    previous = 0.0
    for t in sorted(set().union(*values.values())):
        out.append((t, max(0.0, t - previous), {c: v[t] for c, v in values.items() if t in v}))
        previous = t
    return out


LIMITS = {"other_cpu": BUSY_OTHER_CPU, "steal": BUSY_STEAL, "other_disk": BUSY_OTHER_DISK_MB_S}


def busy(values: Mapping[str, float], floor: Mapping[str, float] | None = None) -> dict[str, float]:
    """The causes that make one interval busy, with their values. ``floor``: the load
    the machine has anyway (each cause's mean over recent runs): busy then means at
    least ``MARGIN`` above it too, as the rule asks of a run against its round."""
    floor = floor or {}
    return {
        c: v for c, v in values.items() if v >= max(LIMITS[c], floor.get(c, -math.inf) + MARGIN[c])
    }


def quiet_for(series: Mapping[str, Series], floor: Mapping[str, float] | None = None) -> float:
    """Seconds since the last busy interval (all of them when none was busy): how long
    the machine has been quiet at the end of the sampling (``floor``: as ``busy``)."""
    quiet = 0.0
    for _, length, values in reversed(intervals(series)):
        if busy(values, floor):
            break
        quiet += length
    return quiet


def floor_of(runs: Iterable[Iterable[Metric] | Mapping[str, float | None]]) -> dict[str, float]:
    """Each cause's lowest mean over ``runs`` (recent counted runs): the load the machine
    has anyway, which a wait for quiet does not wait out."""
    out: dict[str, float] = {}
    for metrics in runs:
        v = inputs(metrics)
        for c in CAUSES:
            if (mean := v.get(f"disturb.{c}_mean")) is not None:
                out[c] = min(out.get(c, math.inf), mean)
    return out


# ---------------------------------------------------------------- record time


def disturbance_metrics(
    series: Mapping[str, Series], headline: str | None = None, warmup_s: float = 0.0
) -> list[Metric]:
    """``disturb.*``: the judgement's inputs; none when the system monitor was off.
    ``headline``: the run's headline metric, whose per-second curve (a series of the
    same name, its first ``warmup_s`` seconds the warm-up) gives ``disturb.clean_*``
    when some second was busy."""
    spans = intervals(series)
    monitored = sum(length for _, length, _ in spans)
    if not spans or monitored <= 0:
        return []
    curve = series.get(headline) if headline else None
    out = clean_metrics(spans, curve, warmup_s) if curve is not None else []
    out += [
        Metric("disturb.monitored_s", monitored, "s", None, "seconds the system monitor covered"),
        Metric(
            "disturb.busy_s",
            sum(length for _, length, v in spans if busy(v)),
            "s",
            None,
            f"seconds in which others used ≥ {BUSY_OTHER_CPU:g}% of the CPUs, steal was ≥ "
            f"{BUSY_STEAL:g}% or the backing disk did ≥ {BUSY_OTHER_DISK_MB_S:g} MB/s beyond "
            "our loop device",
        ),
    ]
    for cause, what in (
        ("other_cpu", "others' user CPU, % of all CPUs"),
        ("steal", "steal, % of all CPUs"),
        ("other_disk", "the backing disk's MB/s beyond our loop device"),
    ):
        have = [(length, v[cause]) for _, length, v in spans if cause in v]
        covered = sum(length for length, _ in have)
        if covered <= 0:
            continue
        out.append(
            Metric(
                f"disturb.{cause}_mean",
                sum(length * x for length, x in have) / covered,
                UNITS[cause],
                None,
                f"{what}, mean over the run",
            )
        )
        hit = [(length, busy({cause: x}).get(cause)) for length, x in have]
        hit_s = sum(length for length, x in hit if x is not None)
        if hit_s > 0:
            out.append(Metric(f"disturb.{cause}_s", hit_s, "s", None, f"busy seconds: {what}"))
            out.append(
                Metric(
                    f"disturb.{cause}_level",
                    sum(length * x for length, x in hit if x is not None) / hit_s,
                    UNITS[cause],
                    None,
                    f"{what}, mean over its busy seconds",
                )
            )
    return out


def clean_metrics(
    spans: list[tuple[float, float, dict[str, float]]], curve: Series, warmup_s: float = 0.0
) -> list[Metric]:
    """``disturb.clean_s``, ``disturb.measured_s`` and ``disturb.clean_ratio`` of a curve
    with a busy interval among ``spans`` (none otherwise). The curve's point ``k`` covers
    its second [k, k+1); its first and last seconds are partial (the run started and
    ended in them) and, like the warm-up's, not counted. A busy interval [a, b] of the
    monitors touches the curve's seconds k with a - 1 < k < b + 1: the curve's seconds
    start up to one second before the monitors' timeline, so those are every second
    that may overlap it."""
    busy_spans = [(end - length, end) for end, length, v in spans if busy(v)]
    if not busy_spans:
        return []
    points = sorted((t, v) for t, v in curve.points if v is not None and math.isfinite(v))
    whole = [(t, v) for t, v in points[1:-1] if t >= warmup_s]
    if not whole:
        return []
    clean = [v for t, v in whole if not any(a - 1 < t < b + 1 for a, b in busy_spans)]
    overall = sum(v for _, v in whole) / len(whole)
    out = [
        Metric(
            "disturb.clean_s",
            float(len(clean)),
            "s",
            None,
            f"whole seconds of {curve.name} after the warm-up that no busy interval touched, "
            f"of {len(whole)}",
        ),
        Metric(
            "disturb.measured_s",
            float(len(whole)),
            "s",
            None,
            f"whole seconds of {curve.name} after the warm-up",
        ),
    ]
    if clean and overall > 0:
        out.append(
            Metric(
                "disturb.clean_ratio",
                (sum(clean) / len(clean)) / overall,
                "×",
                None,
                f"{curve.name} over the untouched seconds, over its mean over every one",
            )
        )
    return out


# ---------------------------------------------------------------- both sides

K = TypeVar("K", bound=Hashable)


def inputs(metrics: Iterable[Metric] | Mapping[str, float | None]) -> dict[str, float]:
    """A run's finite ``disturb.*`` values by name."""
    raw = metrics if isinstance(metrics, Mapping) else {m.name: m.value for m in metrics}
    return {
        k: float(x)
        for k, x in raw.items()
        if k.startswith("disturb.")
        and isinstance(x, (int, float))
        and not isinstance(x, bool)
        and math.isfinite(x)
    }


def judge_round(
    runs: Mapping[K, Iterable[Metric] | Mapping[str, float | None]],
) -> dict[K, Disturbance]:
    """The disturbed runs among ``runs``: one measurement's counted runs of one round
    (one per target), each given by its metrics. A run is disturbed when it had a busy
    second and, for a cause it was busy with, its mean over the run exceeds the
    quietest run's by that cause's ``MARGIN``. Runs without ``disturb.*`` metrics
    (recorded before pgfsbench looked, or without the system monitor) or monitored
    for less than ``MIN_JUDGED_S`` are never disturbed and set no baseline."""
    values = {k: inputs(m) for k, m in runs.items()}
    values = {k: v for k, v in values.items() if v.get("disturb.monitored_s", 0) >= MIN_JUDGED_S}
    quietest = {
        c: min(
            (v[f"disturb.{c}_mean"] for v in values.values() if f"disturb.{c}_mean" in v),
            default=None,
        )
        for c in CAUSES
    }
    out: dict[K, Disturbance] = {}
    for k, v in values.items():
        if v.get("disturb.busy_s", 0.0) <= 0:
            continue
        causes = {}
        for c in CAUSES:
            seconds, mean, floor = (
                v.get(f"disturb.{c}_s", 0.0),
                v.get(f"disturb.{c}_mean"),
                quietest[c],
            )
            if seconds > 0 and mean is not None and floor is not None and mean - floor >= MARGIN[c]:
                causes[c] = Busy(seconds, v.get(f"disturb.{c}_level", mean), mean, floor)
        if causes:
            out[k] = Disturbance(
                v["disturb.busy_s"],
                v["disturb.monitored_s"],
                causes,
                v.get("disturb.clean_s", 0.0),
                v.get("disturb.clean_ratio"),
                v.get("disturb.measured_s", 0.0),
            )
    return out


class RunLike(Protocol):
    """What ``disturbed_runs`` reads of a stored run (``store.read.StoredRun``)."""

    id: int
    target: str
    workload: str
    label: str
    repetition: int
    status: str
    metrics: list[Metric]


def disturbed_runs(runs: Iterable[RunLike]) -> dict[int, Disturbance]:
    """Run id → its disturbance, over a campaign's stored runs: each measurement's
    counted runs (status 'ok', round ≥ 1) judged within their round, as the campaign
    judged them at the round's end (runs it ran again are 'redone', not among them)."""
    rounds: dict[tuple[int, str, str], dict[int, list[Metric]]] = {}
    for r in runs:
        if r.status == "ok" and r.repetition >= 1:
            rounds.setdefault((r.repetition, r.workload, r.label), {})[r.id] = r.metrics
    out: dict[int, Disturbance] = {}
    for group in rounds.values():
        out |= judge_round(group)
    return out


def legend() -> str:
    """The rule in one sentence, for the report and the docs."""
    return (
        f"a visit is disturbed when, in some second of it, others used ≥ {BUSY_OTHER_CPU:g}% "
        f"of the CPUs outside pgfsbench, the hypervisor stole ≥ {BUSY_STEAL:g}% or the disk "
        f"under a loop image did ≥ {BUSY_OTHER_DISK_MB_S:g} MB/s beyond the loop device, and "
        f"over the whole run that cause was higher than in the quietest visit of its round "
        f"by ≥ {MARGIN['other_cpu']:g} points of CPU, {MARGIN['steal']:g} of steal or "
        f"{MARGIN['other_disk']:g} MB/s: the machine's evidence, never the run's own result"
    )


# ---------------------------------------------------------------- helpers


def _points(series: Mapping[str, Series], name: str) -> dict[float, float]:
    s = series.get(name)
    return {t: v for t, v in s.points if v is not None and math.isfinite(v)} if s else {}


def _disk(series: Mapping[str, Series]) -> dict[float, float]:
    """Per interval: the backing disk's MB/s, read and written."""
    br, bw = (_points(series, n) for n in DISK["backing"])
    return {t: br[t] + bw[t] for t in br if t in bw}


def _other_disk(series: Mapping[str, Series]) -> dict[float, float]:
    """Per interval: the backing disk's MB/s beyond the target's (both needed)."""
    br, bw, tr, tw = (_points(series, n) for role in ("backing", "target") for n in DISK[role])
    if not (br and bw and tr and tw):
        return {}
    return {
        t: max(0.0, br[t] + bw[t] - tr[t] - tw[t]) for t in br if t in bw and t in tr and t in tw
    }
