"""Showing one campaign: the HTML report and the terminal.

- ``html.py``: the self-contained HTML report (``templates/``, ``plotly_js.py`` and the
  vendored plotly.js in ``vendor/``), with its history section (``history_section.py``);
- ``figures.py``: the charts each chart module declares (``chart_*.py``, ``charts.py``:
  plotly figure specs as plain dicts);
- ``terminal.py`` and ``text_table.py``: ``pgfsbench show`` (the answer first; the full
  table with ``--full``).

Every ``--format`` output is ``formats/``; comparing campaigns is ``compare/``.
"""
