"""Small numpy helpers that keep the read commands light.

``np.unique`` asks ``np.ma.is_masked`` of its argument, which imports numpy.ma
(~30 ms, a tenth of a read command) the first time; the sort-and-mask below is
the one np.unique does, the same values.
"""

from __future__ import annotations

import numpy as np


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of a 1-D array, sorted: np.unique without numpy.ma."""
    ordered = np.sort(values)
    if ordered.size == 0:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
