"""The statistical methods: numbers in, numbers out; no target, no campaign.

- ``medians.py``: a cell's median or geometric mean with its bootstrap interval, the
  unpaired comparisons, multiplicity corrections;
- ``paired.py``: two targets in the same rounds, compared within rounds on the log scale;
- ``independent.py``: two targets of different campaigns (Welch's t on the logs);
- ``outcome.py``: the three honest outcomes (better or worse, equivalent, inconclusive);
- ``sequential.py``: every headline comparison decided at a few planned looks;
- ``stored_design.py``: the design (count, looks) a stored plan declared;
- ``remembered.py`` and ``ci_cache.py``: computed values remembered by their inputs, and
  kept beside the results so a read command need not redo them.
"""
