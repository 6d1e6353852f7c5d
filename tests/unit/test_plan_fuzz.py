"""Fuzzing the plan loader through the CLI: `plan check` on any file exits 0 or 2 with
one line, never a traceback.

Plans are generated two ways: plan-shaped TOML with hostile values (every key the
model knows, unknown ones, odd types, control characters, deep or huge values),
and raw text (random, or a good plan with bytes changed). The sizes keep the test
to a few seconds; raise ``PGFSBENCH_FUZZ_EXAMPLES`` to search longer.
"""

from __future__ import annotations

import copy
import os
import signal
import tomllib
from pathlib import Path

import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from pgfsbench.cli import app

EXAMPLES = int(os.environ.get("PGFSBENCH_FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)

ROOT = Path(__file__).parents[2]
GOOD = ROOT / "src/pgfsbench/plan/builtin/smoke.toml"
# Every plan we ship: mutated a little, they get past the first checks to the deep ones.
BASES = [
    tomllib.loads(p.read_text())
    for p in sorted(
        [*ROOT.glob("src/pgfsbench/plan/builtin/*.toml"), *ROOT.glob("examples/*.toml")]
    )
]

text = st.one_of(
    st.sampled_from(
        [
            "",
            "ext4",
            "xfs",
            "btrfs",
            "zfs",
            "2G",
            "64k",
            "0",
            "-1",
            "auto",
            "noatime,nobarrier",
            "data=bogus",
            "/dev/sda",
            "../../x",
            "a.b.c",
            "shared_buffers",
            "include",
            "[/bold]",
            "%s{0}",
            "1e309",
            "∞",
        ]
    ),
    st.text(max_size=12),
    st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=30),
)
number = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.integers(-3, 2000),
    st.floats(allow_nan=True, allow_infinity=True),
)
scalar = st.one_of(text, number, st.booleans())
value = st.recursive(
    scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(text, inner, max_size=4)),
    max_leaves=12,
)


def fields(known: dict) -> st.SearchStrategy[dict]:
    """Some of the known keys with plausible or hostile values, and maybe a stray key."""
    return st.fixed_dictionaries(
        {}, optional={**{k: st.one_of(v, value) for k, v in known.items()}, "stray": value}
    )


TARGET = fields(
    {
        "name": st.sampled_from(["a", "b", "ext4", "Bad Name", ""]),
        "fs": st.sampled_from(["ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "zfs"]),
        "size": st.sampled_from(["1G", "100M", "300M", "0", "8T", "lots"]),
        "mkfs": st.lists(text, max_size=4),
        "mount": text,
        "dir": text,
        "device": text,
        "log_size": text,
        "direct_io": st.booleans(),
        "sysctls": st.dictionaries(text, scalar, max_size=3),
        "queue": st.dictionaries(text, scalar, max_size=3),
        "postgres": st.fixed_dictionaries({"settings": st.dictionaries(text, scalar, max_size=3)}),
        "throttle": st.dictionaries(
            st.sampled_from(["read_iops", "write_iops", "read_bps", "write_bps"]),
            scalar,
            max_size=3,
        ),
        "extends": st.one_of(text, st.lists(text, max_size=3)),
    }
)
WORKLOAD = fields(
    {
        "type": st.sampled_from(
            [
                "fsync",
                "fsync-latency",
                "pgbench-init",
                "pgbench",
                "parallel-scan",
                "basebackup",
                "seqwrite",
                "fileio",
                "nope",
            ]
        ),
        "clients": st.one_of(st.integers(-1, 2000), st.lists(st.integers(-1, 2000), max_size=5)),
        "duration": number,
        "warmup": st.one_of(number, text),
        "scale": number,
        "workers": st.lists(st.integers(-2, 2000), max_size=5),
        "seconds": number,
        "block_sizes": st.lists(text, max_size=3),
        "patterns": st.lists(text, max_size=3),
        "tools": st.lists(text, max_size=3),
        "repetitions": number,
        "tag": text,
    }
)
AXES = st.dictionaries(text, st.lists(scalar, max_size=4), max_size=3)
PLAN = fields(
    {
        "name": st.sampled_from(["p", "Bad", ""]),
        "description": text,
        "targets": st.lists(TARGET, max_size=3),
        "workloads": st.lists(WORKLOAD, max_size=3),
        "mixins": st.dictionaries(text, TARGET, max_size=2),
        "matrix": st.lists(fields({"axes": AXES, "name": text, "extends": text}), max_size=2),
        "postgres": st.fixed_dictionaries({"settings": st.dictionaries(text, scalar, max_size=3)}),
        "repetitions": st.dictionaries(
            st.sampled_from(
                ["count", "order", "seed", "fresh", "ci_width", "min", "max", "max_minutes"]
            ),
            scalar,
            max_size=4,
        ),
        "verdicts": st.dictionaries(
            st.sampled_from(["baseline", "alpha", "noise"]), scalar, max_size=3
        ),
        "monitors": st.dictionaries(
            st.sampled_from(["system", "postgres", "interval"]), scalar, max_size=3
        ),
    }
)


def _slots(node: object) -> list[tuple[object, object]]:
    """Every (container, key or index) in a plan's data, depth first."""
    found: list[tuple[object, object]] = []
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else []
    )
    for key, child in items:
        found.append((node, key))
        found += _slots(child)
    return found


def _alike(old: object) -> st.SearchStrategy:
    if isinstance(old, bool):
        return st.booleans()
    if isinstance(old, int):
        return st.one_of(st.integers(-2, 3 * max(abs(old), 1)), st.integers(-(2**63), 2**63 - 1))
    if isinstance(old, float):
        return st.floats(-1, 10 * max(abs(old), 1))
    if isinstance(old, str):
        return st.one_of(text, st.just(old + "x"), st.just(old[:-1]))
    if isinstance(old, list) and old:
        return st.lists(_alike(old[0]), max_size=5)
    return value


@st.composite
def mutated_plan(draw) -> dict:
    """A shipped plan with one to three values replaced, removed or added."""
    plan = copy.deepcopy(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(1, 3))):
        container, key = draw(st.sampled_from(_slots(plan)))
        action = draw(st.sampled_from(["alike", "alike", "replace", "delete", "add"]))
        if action == "delete":
            del container[key]
        elif action == "add" and isinstance(container, dict):
            container[draw(text)] = draw(value)
        elif action == "alike":  # a value of the same kind: likely to pass the first checks
            container[key] = draw(_alike(container[key]))
        else:
            container[key] = draw(st.one_of(scalar, value))
    return plan


class TooSlow(Exception):
    pass


def _too_slow(signum, frame):
    raise TooSlow("plan check took over 20 s: a plan whose size makes it hang")


def check(tmp_path: Path, content: str) -> None:
    plan = tmp_path / "fuzzed.toml"
    plan.write_text(content, errors="surrogatepass")
    previous = signal.signal(signal.SIGALRM, _too_slow)
    signal.alarm(20)  # a hang (repetitions.count = 10**8 made one) is a failure, not a stall
    try:
        result = CliRunner().invoke(app, ["plan", "check", str(plan)])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    shown = f"exit {result.exit_code} for:\n{content[:2000]!r}\n{result.output}"
    assert result.exit_code in (0, 2), shown
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        shown,
        result.exception,
    )
    assert "Traceback" not in result.output, shown
    if result.exit_code == 2:
        assert len(result.stderr.strip().splitlines()) == 1, shown


@FUZZ
@given(data=st.one_of(mutated_plan(), PLAN))
def test_plan_shaped_toml_exits_0_or_2(tmp_path, data):
    try:
        content = tomli_w.dumps(data)
    except (TypeError, ValueError):  # a value TOML cannot hold at all
        return
    check(tmp_path, content)


@FUZZ
@given(
    raw=st.one_of(
        st.text(max_size=300),
        st.builds(
            lambda at, junk: GOOD.read_text()[:at] + junk + GOOD.read_text()[at:],
            st.integers(0, 1200),
            st.text(max_size=20),
        ),
        st.builds(
            lambda depth, open_, close: f"a = {open_ * depth}1{close * depth}",
            st.integers(1, 5000),
            st.sampled_from(["[", "{x = "]),
            st.sampled_from(["]", "}"]),
        ),
    )
)
def test_any_text_exits_0_or_2(tmp_path, raw):
    check(tmp_path, raw)
