"""Exit codes: what a script or a CI job can tell from pgfsbench's exit status alone.

Every command follows them (docs/ci.md, "Exit codes").
"""

from __future__ import annotations

import signal

OK = 0  # done: every run of the campaign completed; report, export, compare written
INCOMPLETE = 1  # it ran, but not everything completed: a run failed; a target was
#                 refused, skipped or failed; the results or the report could not all be
#                 written; cleanup could not undo something; doctor found a need missing
USAGE = 2  # nothing was done: a bad plan or option, a missing tool, not root, another
#            campaign running, a results directory that cannot take results
INTERNAL = 3  # a bug in pgfsbench: one line, the traceback saved to a file
WORSE = 4  # compare --fail-if-worse: a contender is significantly worse than the baseline
#            by more than the threshold (the comparison itself was written in full)
INTERRUPTED: dict[int, int] = {
    signal.SIGINT: 130,
    signal.SIGTERM: 143,
}  # 128 + the signal, as shells do


def for_signal(signum: int) -> int:
    return INTERRUPTED.get(signum, 128 + signum)
