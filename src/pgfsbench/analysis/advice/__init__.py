"""Advice: the target to use, how to build it, the settings the measurements support.

- ``advise.py``: the recommendation (``advise(campaign)``), never an unsafe target;
- ``recommendation.py``: what it is made of (settings, each with its figures);
- ``pg_settings.py``: PostgreSQL settings derived from measurements;
- ``aio.py``: PostgreSQL 18's asynchronous I/O settings;
- ``capabilities.py``: what each filesystem offers PostgreSQL (reflink clone, snapshot,
  compression).
"""
