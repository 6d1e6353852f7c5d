"""Running a plan: round by round, each target: provision → PostgreSQL → workloads → store.

With repetitions, the targets are visited in interleaved rounds (see
``schedule.py``); a visit makes the target afresh or reuses the one kept
from its first visit, as the plan says. Reused targets first get an
uncounted settling round, whose runs are stored as repetition 0.

Failures are data: a target that cannot be provisioned or a workload that
fails is recorded with its reason and the campaign goes on. Whatever
happens (error, Ctrl-C, SIGTERM) the ledger undoes what was acquired.

- ``run.py``: the ``Campaign`` object, which holds the run's context and
  drives the rounds, visits and recording;
- ``machine.py``: the real machine it provisions on (targets, OS settings,
  PostgreSQL), injected so unit tests can pass a fake one;
- ``options.py``: what the command line decides; ``signals.py``: how a
  signal becomes an exception that unwinds every cleanup;
- ``resume.py``: where an interrupted or killed campaign resumes (``run --resume``),
  from what it recorded.
"""
