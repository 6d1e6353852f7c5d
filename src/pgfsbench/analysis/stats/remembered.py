"""Values the analysis computed, remembered by the code and the exact inputs they came from.

Two things make reading a campaign slow when they are redone on every read: the
bootstrap behind every cell's CI (10,000 resamples per cell, ``medians.py``) and importing
``scipy.special`` for the t, noncentral t and normal distributions of the verdicts
(~0.25 s of a read command's start-up: scipy's array-API layer clones numpy, which imports
``numpy.f2py`` and ``numpy.testing``). Each such value is kept here under a digest of the
code that computes it and of its inputs, and ``ci_cache.py`` keeps them beside the
results: a second read of a campaign finds every value and never imports scipy. A hit is
the very value the same computation gives again (JSON floats round-trip exactly), so the
store changes nothing but time.
"""

from __future__ import annotations

from collections.abc import Callable
from hashlib import blake2b
from pathlib import Path

import numpy as np

# A value as JSON keeps it: a float or an int, a tuple of them, or None.
Value = float | int | tuple[float, ...] | None

values: dict[str, Value] = {}
touched: set[str] | None = None  # the digests looked up while ci_cache records
_code: bytes | None = None

# The modules whose values are remembered: a change to any of them is another version.
_SOURCES = ("medians.py", "paired.py", "remembered.py")


def code_version() -> bytes:
    """What the values depend on besides their inputs: the source of the modules that
    compute them (methods, resamples, seed), numpy's version (its random streams) and
    scipy's (its distribution functions), read without importing scipy."""
    global _code
    if _code is None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            scipy_version = version("scipy")
        except PackageNotFoundError:  # pragma: no cover - scipy is a dependency
            scipy_version = ""
        here = Path(__file__).parent
        h = blake2b(digest_size=16)
        for name in _SOURCES:
            h.update((here / name).read_bytes())
        h.update(f"numpy {np.__version__} scipy {scipy_version}".encode())
        _code = h.digest()
    return _code


def normalized(value: object) -> Value:
    """A computed value in the form the JSON file gives back (tuples of floats)."""
    if value is None or isinstance(value, int | float):
        return value if value is None or isinstance(value, int) else float(value)
    if isinstance(value, list | tuple):
        return tuple(float(v) for v in value)
    raise TypeError(f"cannot remember a {type(value).__name__}")


def remembered(kind: str, inputs: tuple[np.ndarray, ...], compute: Callable[[], object]) -> Value:
    """compute(), or what it gave before for the same code, kind and inputs."""
    h = blake2b(code_version() + kind.encode(), digest_size=16)
    for a in inputs:
        h.update(len(a).to_bytes(8, "little"))
        h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    key = h.hexdigest()
    if touched is not None:
        touched.add(key)
    if key not in values:
        values[key] = normalized(compute())
    return values[key]


def special(name: str, *args: float) -> float:
    """``scipy.special.<name>(*args)`` of scalars, imported only when not remembered."""

    def compute() -> float:
        import scipy.special

        return float(getattr(scipy.special, name)(*args))

    value = remembered(f"special.{name}", (np.array(args, dtype=float),), compute)
    assert isinstance(value, float)
    return value
