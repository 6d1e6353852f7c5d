"""Showing a running campaign: the campaign emits events (``campaign/events.py``); these
observers show them.

- ``forecast.py``: how much is done and what is left (the bar's total, the ETA);
- ``live.py``: a rich.progress bar on a terminal, each run's headline above it;
- ``plain.py``: sparse plain lines for logs and CI (stdout not a terminal);
- ``lines.py``: the words both use.
"""
