"""Statistics over stored results: a pure function of a campaign, no I/O but the cache.

By concept, each imports only those after it (import-linter's ``analysis-concepts``):

- ``advice/``: what to use and how to set it (the recommendation, PostgreSQL settings,
  PostgreSQL 18's asynchronous I/O, what each filesystem offers);
- ``verdicts/``: the answer in words (tiers, the verdict lines, the answer line, the
  decisions the store keeps, a campaign in a few facts);
- the table at the root: ``table.py`` (the side-by-side table every output shows),
  ``cells.py`` (samples per cell), ``findings.py`` (one Finding per pair: the comparison
  every output renders), ``family.py`` (every headline pair decided once),
  ``headline.py`` (each workload's headline metric and its human name);
- ``caveats/``: what a reader must know before believing a figure (what bound each run,
  cost per unit of work, crash safety, what differs between targets);
- ``stats/``: the methods, numbers in and numbers out (medians and their intervals,
  paired and independent comparisons, the three outcomes, the sequential decisions, the
  remembered values).

Comparing campaigns with each other is ``compare/``; showing any of this is ``render/``,
``report/`` and ``formats/``.
"""
