"""Campaigns against each other: ``pgfsbench compare`` and ``pgfsbench history``.

- ``pairing.py``: a baseline campaign against contender campaigns, target by target;
- ``comparable.py``: whether two campaigns' runs may be compared (their key provenance);
- ``campaigns.py``: campaigns as one ``Comparison``; ``comparison.py``: what compare shows,
  whatever the format; ``row_texts.py``: which rows, and the texts of their cells;
- ``gate.py``: ``compare --fail-if-worse``, which contenders are decided worse;
- ``series.py``: a metric of a target over campaigns (``pgfsbench history``).

A pair's statistics are ``analysis/`` (``findings.py``, ``stats/``); the formats that
write a comparison are ``formats/``.
"""
