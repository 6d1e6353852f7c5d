"""Verdicts: the answer a campaign gives, in plain words.

- ``tiers.py``: targets ranked into tiers, every pair across tiers decided;
- ``verdict_lines.py``: one verdict line per measurement;
- ``answer.py``: the answer line (tiers, every target against the reference, what is
  still open) and its glossary;
- ``decisions.py``: the findings as rows of the PostgreSQL store's ``decisions`` table;
- ``summary.py``: a campaign in a few facts (``pgfsbench list``).
"""
