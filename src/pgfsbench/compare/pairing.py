"""Baseline campaign against contender campaign, Rally-style: each target paired.

The same target name in both campaigns is a pair (``ext4`` before vs ``ext4``
after), unless the command line maps it (``--pair ext4=ext4-new``). The table has
two columns, the baseline campaign and the contender campaign; each row is one
pair × measurement × metric (its label starts with the pair). Statistics are the
table's unpaired route (Mann-Whitney U, bootstrap CI of the ratio of medians):
round 3 of one campaign and round 3 of another are different blocks, so there is
no pairing by round across campaigns. Before any of that, the campaigns' key
provenance is checked (``comparable.py``): a difference refuses the
comparison unless it is explicitly allowed, and then it is carried as a warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from pgfsbench.analysis.cells import CellKey, collect, failed_measurements
from pgfsbench.analysis.stats.medians import DEFAULT
from pgfsbench.analysis.table import Source, Table, build_table
from pgfsbench.compare.comparable import Difference, differences
from pgfsbench.errors import UserError
from pgfsbench.store.read import Campaign


@dataclass
class Pairing:
    """What a cross-campaign table compares, and what differs between the two sides."""

    baseline: Campaign
    contender: Campaign
    names: tuple[str, ...]  # the two columns (baseline, contender)
    pairs: list[tuple[str, str]]  # (baseline target, contender target)
    differences: list[Difference] = field(default_factory=list)
    allowed: bool = False  # key differences were allowed (--allow-different)

    @property
    def warnings(self) -> list[str]:
        """Key differences (only there when allowed): every output shows them."""
        return [f"compared despite a different {d.text()}" for d in self.differences if d.key]

    @property
    def notes(self) -> list[str]:
        return [f"differs: {d.text()}" for d in self.differences if not d.key]


def parse_pairs(texts: list[str]) -> dict[str, str]:
    """``--pair BASE=CONTENDER`` options as a mapping (UserError for a malformed one)."""
    out: dict[str, str] = {}
    for text in texts:
        base, sep, cont = text.partition("=")
        if not sep or not base.strip() or not cont.strip():
            raise UserError(
                f"--pair takes BASELINE_TARGET=CONTENDER_TARGET, e.g. "
                f"'ext4=ext4-new' (not '{text}')"
            )
        if base.strip() in out:
            raise UserError(f"--pair: target '{base.strip()}' is paired twice")
        out[base.strip()] = cont.strip()
    return out


def pair_label(pair: tuple[str, str]) -> str:
    return pair[0] if pair[0] == pair[1] else f"{pair[0]}→{pair[1]}"


def _ran(campaign: Campaign) -> list[str]:
    return [t.name for t in campaign.targets if t.status != "skipped"]


def pair_targets(
    base: Campaign, cont: Campaign, mapping: dict[str, str], by_name: bool = True
) -> list[tuple[str, str]]:
    """The mapping's pairs, then (``by_name``) every other target of the same name in both."""
    b_names, c_names = _ran(base), _ran(cont)
    for b, c in mapping.items():
        if b not in b_names:
            raise UserError(
                f"--pair {b}={c}: the baseline has no target '{b}' (it has: "
                f"{', '.join(b_names) or 'none'})"
            )
        if c not in c_names:
            raise UserError(
                f"--pair {b}={c}: the contender has no target '{c}' (it has: "
                f"{', '.join(c_names) or 'none'})"
            )
    pairs = list(mapping.items())
    pairs += [
        (t, t)
        for t in b_names
        if by_name and t not in mapping and t in c_names and t not in mapping.values()
    ]
    if not pairs:
        raise UserError(
            f"the two campaigns have no target in common (baseline: "
            f"{', '.join(b_names)}; contender: {', '.join(c_names)}): pair them "
            "with --pair BASELINE_TARGET=CONTENDER_TARGET"
        )
    return pairs


def column_names(*campaigns: Campaign) -> tuple[str, ...]:
    """One column per campaign: its directory name, told apart when two are alike (by
    UUID prefix; the same campaign given twice, by position)."""
    dirs = [c.results_dir.name or c.id for c in campaigns]
    names = [
        n if dirs.count(n) == 1 else f"{n}@{c.uuid[:8] or c.id}" for n, c in zip(dirs, campaigns)
    ]
    # Still alike: the same campaign given twice; its directory name and position.
    return tuple(
        n if names.count(n) == 1 else f"{d}#{i}"
        for i, (n, d) in enumerate(zip(names, dirs), start=1)
    )


def pairing(
    base: Campaign,
    cont: Campaign,
    mapping: dict[str, str] | None = None,
    allow_different: bool = False,
    by_name: bool = True,
) -> Pairing:
    """The pairs and the provenance check: UserError listing every key difference
    unless ``allow_different``. ``by_name=False``: the mapping's pairs only."""
    pairs = pair_targets(base, cont, mapping or {}, by_name)
    found = differences(base, cont, pairs)
    if (key := [d for d in found if d.key]) and not allow_different:
        raise UserError(
            "refusing to compare campaigns whose key provenance differs: "
            + "; ".join(d.text() for d in key)
            + " (compare like with like, or pass --allow-different to compare "
            "them anyway with a warning)"
        )
    return Pairing(base, cont, column_names(base, cont), pairs, found, allow_different)


def pairings(
    base: Campaign,
    contenders: list[Campaign],
    mapping: dict[str, str] | None = None,
    allow_different: bool = False,
) -> list[Pairing]:
    """The baseline against each contender (a fleet: one campaign per host), every
    campaign its own column; each contender checked against the baseline."""
    names = column_names(base, *contenders)
    out = []
    for cont, name in zip(contenders, names[1:]):
        try:
            p = pairing(base, cont, mapping, allow_different)
        except UserError as exc:
            if len(contenders) == 1:
                raise
            raise UserError(f"{name}: {exc}") from None
        p.names = (names[0], name)
        out.append(p)
    return out


def paired_source(p: Pairing | list[Pairing]) -> Source:
    """The campaigns as a source, one column each (the baseline's first), one row per
    pair × measurement; several pairings share the baseline's column."""
    group = p if isinstance(p, list) else [p]
    cells = {}
    failed = set()
    for one in group:
        for side, campaign in enumerate((one.baseline, one.contender)):
            column = one.names[side]
            # Each side its own block: rounds never pair across campaigns (nor across the
            # same campaign given twice, whose two sides are compared as samples).
            block = f"{campaign.uuid or campaign.id}/{column}"
            collected = collect(campaign)
            for pair in one.pairs:
                target, label = pair[side], pair_label(pair)
                for key, samples in collected.items():
                    if key.target == target:
                        cells[
                            CellKey(
                                column, key.workload, f"{label} {key.label}".strip(), key.metric
                            )
                        ] = replace(samples, block=block)
                failed |= {
                    (column, w, f"{label} {lbl}".strip())
                    for t, w, lbl in failed_measurements(campaign)
                    if t == target
                }
    columns = [group[0].names[0]] + [one.names[1] for one in group]
    # The intervals of the comparison are kept beside the first contender's results
    # (analysis/stats/ci_cache.py: keyed by the values, so any directory serves): `history` and
    # `compare` of stored campaigns need not bootstrap them again on every read.
    return Source(columns, cells, failed, None, group[0].contender.results_dir)


def paired_table(
    p: Pairing | list[Pairing],
    alpha: float | None = None,
    noise: float | None = None,
    headline_only: bool = False,
) -> Table:
    """Baseline column first; each contender cell judged against it (unpaired route).
    The baseline campaign's [verdicts] (alpha, noise, equivalence margin) unless
    ``alpha`` or ``noise`` override them: ``compare`` and ``history`` read two campaigns
    alike. ``headline_only``: the headline rows alone, as the whole table has them."""
    group = p if isinstance(p, list) else [p]
    settings = group[0].baseline.plan.get("verdicts") or {}
    source = paired_source(p)
    return build_table(
        source,
        source.columns[0],
        alpha if alpha is not None else settings.get("alpha", DEFAULT.alpha),
        noise if noise is not None else settings.get("noise", DEFAULT.noise),
        settings.get("equivalence"),
        headline_only=headline_only,
    )
