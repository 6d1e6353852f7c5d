"""The one metric per workload that verdicts and 'auto' repetitions are about.

A workload reports dozens of figures; a claim like "xfs is faster" is about
one of them, chosen up front (not after looking at which one differs, which
would be a garden of forking paths). Each workload kind declares its own
(``WorkloadKind.headline``), and its metrics' human names for the sentences a DBA reads
(``WorkloadKind.labels``: "TPC-B tps", not ``pgbench.tps``); a metric without one is
shown by its name.
"""

from __future__ import annotations

from collections.abc import Iterable

from pgfsbench.workloads import registry


def headline_metric(workload: str, params: dict, names: Iterable[str] = ()) -> str | None:
    """The headline metric's name for a run of ``workload`` with (stored) ``params``.

    ``names`` (the metrics the run stored) settles the workloads whose headline
    depends on what was measured; None when there is none, or when the run's
    type or params are not this version's (old results: no verdict, never a crash).
    """
    kind = registry.find(workload)
    if kind is None:
        return None
    if isinstance(kind.headline, str):  # needs no params: old params cannot spoil it
        return kind.headline
    validated = registry.stored_params(kind, params)
    return None if validated is None else kind.headline(validated, list(names))


def metric_label(metric: str, workload: str | None = None) -> str:
    """``metric``'s human name, as its workload kind declares it (``WorkloadKind.labels``;
    every installed kind's when ``workload`` is not given), or the metric's name."""
    kinds = [registry.find(workload)] if workload is not None else registry.kinds()
    for kind in kinds:
        name = kind.label(metric) if kind is not None else None
        if name is not None:
            return name
    return metric
