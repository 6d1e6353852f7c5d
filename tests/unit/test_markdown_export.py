"""`export --format markdown`: the whole campaign as a readable document, no Python reprs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pgfsbench.analysis.table import Table
from pgfsbench.analysis.verdicts.verdict_lines import VerdictLine
from pgfsbench.cli import app
from pgfsbench.formats.markdown import _number, _plain, comparison_markdown
from pgfsbench.render.verdict_text import shared_caveats
from pgfsbench.store.read import load_campaign
from tests.unit.test_export import RUN_ERROR, SKIP_REASON, build_results
from tests.unit.test_fail_if_worse import ROUNDS, _store

REPRS = re.compile(r"\b(None|True|False|nan|inf)\b|\{\}|\[\]|\[['\"]|np\.")


def _markdown(path: Path, *options: str) -> str:
    result = CliRunner().invoke(app, ["export", str(path), "--format", "markdown", *options])
    assert result.exit_code == 0, result.output
    assert not REPRS.search(result.stdout), REPRS.search(result.stdout)
    return result.stdout


def test_a_campaign_with_failures_reads_as_a_document(tmp_path) -> None:
    md = _markdown(build_results(tmp_path / "r"))
    assert md.startswith("# pgfsbench: filesystems (campaign c-42)\n")
    assert "| status | ok |" in md and "| host kernel | 6.8.0 |" in md
    for section in ("## Verdicts and headline comparison", "## Targets", "## Measurements"):
        assert section in md
    assert f"| zfs | dir | zfs | skipped |  |  | {SKIP_REASON} |" in md
    assert "| xfs | loop | xfs | ok | rw, noatime | safe |  |" in md
    assert f"- btrfs round 1: failed: {RUN_ERROR}" in md
    # each metric: its median per target, as compare shows it (btrfs failed)
    assert "| `pgbench.tps` | tx/s | higher | 900.0 (n=1) | 901.0 (n=1) | failed |" in md
    assert "| `pgbench.transactions` | tx |  | 4,500 (n=1) | 4,501 (n=1) | failed |" in md
    # unsupported and infinite: n/a, never a number or a repr
    assert "| `fsync.fsync_writethrough_8k.ops_per_s` | ops/s | higher | n/a | n/a | n/a |" in md
    assert "| `pgbench_init.vacuum_s` | s | lower | n/a | n/a | n/a |" in md
    assert "Parameters: clients=8, rate=n/a" in md
    _tables_are_square(md)


def _tables_are_square(md: str) -> None:
    """Every table row has as many cells as its header."""
    for block in md.split("\n\n"):
        lines = [ln for ln in block.splitlines() if ln.startswith("|")]
        if lines:
            assert len({ln.count(" | ") for ln in lines if not ln.startswith("|--")}) == 1, block


def test_every_round_of_every_target_is_there_with_full(tmp_path) -> None:
    """--full: a row per metric and round, each target's value in its own column; by
    default only the medians (a list of every round's values made 900-character lines)."""
    path = _store(tmp_path / "rep", "c-rep", {"base": 1.0, "slow": 0.85}, ROUNDS)
    md = _markdown(path, "--full")
    rounds = md.split("<details><summary>Each round's values</summary>")[1]
    rounds = rounds.split("</details>")[0]
    tps = rounds.split("| `pgbench.tps` |")[1].split("\n| `")[0]
    rows = [ln[2:-2].split(" | ") for ln in ("| `pgbench.tps` |" + tps).splitlines() if ln]
    assert [r[1] for r in rows] == [f"r{n}" for n in range(1, ROUNDS + 1)]
    assert rows[0][3] == "852.55"  # slow, round 1
    assert all(len(r) == 4 for r in rows)
    _tables_are_square(md)
    default = _markdown(path)
    assert "<summary>Each round's values" not in default and "| r1 |" not in default
    assert "`export --format markdown --full`" in default
    assert "slow" in default.split("## Verdicts")[1].split("## Targets")[0]


def test_the_default_demo_fits_a_github_comment(tmp_path) -> None:
    """The default demo's export was 62,894 characters (67,009 bytes) with
    lines up to 883 (every round's value in one cell, the ratio twice) and published the
    host's identifiers. GitHub takes 65,536 characters in a comment."""
    from tests.unit.demo_campaign import unpack_demo

    results = unpack_demo(tmp_path / "demo")
    md = _markdown(results)
    assert len(md) < 65_536, len(md)  # about 26,000 when written
    assert max(map(len, md.splitlines())) < 900
    host = load_campaign(results, series=False).host
    for key in ("hostname", "machine_id", "kernel_cmdline"):
        assert str(host[key]) not in md, key
        assert str(host[key]) in _markdown(results, "--host-ids"), key
    assert "| host identifiers | left out (hostname, machine_id, kernel_cmdline)" in md
    assert md.count("<details>") == md.count("</details>") > 0
    # a contender's cell says its ratio once; the legend (a thousand characters on one
    # line) folds, a sentence a line
    [table] = [b for b in md.split("\n\n") if b.startswith("| measurement |")]
    ratios = [
        c.split()[0] for ln in table.splitlines()[2:] for c in ln.split(" | ") if c[:1] == "×"
    ]
    assert ratios and all(table.count(f"{r} ") == 1 for r in ratios), ratios
    assert "<details><summary>How to read the figures</summary>" in md
    # the PostgreSQL settings it ran with, defaults included
    assert "| `data_checksums` | on | on | on |" in md
    assert "| `fsync` | on | on | on |" in md
    assert "/usr/sbin/mkfs.ext4 -F -E lazy_itable_init=0,lazy_journal_init=0 /dev/loop" in md
    full = _markdown(results, "--full")
    assert max(map(len, full.splitlines())) < 900 and len(full) > len(md)


def test_settings_and_commands_of_a_recorded_campaign(tmp_path) -> None:
    """The settings read from the server, defaults included, each target in its column
    (n/a: not in its version); each measurement's commands of its first counted round."""
    from tests.unit.test_json_schema import recorded_campaign

    md = _markdown(recorded_campaign(tmp_path / "r"))
    assert "| version | 18.6 | 15.14 |" in md
    assert "| `fsync` | on | off |" in md
    assert "| `io_method` | worker | n/a |" in md
    assert "| `debug_io_direct` | '' | n/a |" in md
    assert "recorded before pgfsbench kept them all" not in md
    commands = md.split("<details><summary>The commands a round ran</summary>")[1]
    commands = commands.split("</details>")[0]
    assert "**pg18**, round 1" in commands and "**pg15**, round 1" in commands
    assert "pgbench -n -M prepared -c 4 -j 4 -T 8 -P 1 -l" in commands
    assert "round 0" not in commands  # the settling round's paths are not the ones shown
    _tables_are_square(md)


@pytest.mark.parametrize(
    "value,text",
    [
        (None, "n/a"),
        (float("nan"), "n/a"),
        (3.0, "3"),
        (1234567.0, "1,234,567"),
        (0.000123456789, "0.000123457"),
        (12345.678, "12,345.7"),
    ],
)
def test_numbers(value, text) -> None:
    assert _number(value) == text


def test_free_form_values() -> None:
    assert _plain({"fio": "fio-3.33", "x": None, "on": True}) == "fio: fio-3.33, on: yes"
    assert _plain(["dd", 2.5]) == "dd, 2.5" and _plain(None) == ""


def test_a_campaign_without_runs(tmp_path) -> None:
    from pgfsbench.store.db import Store

    store = Store.create(tmp_path / "r")
    store.start_campaign("c-0", "p", {"name": "p"}, {}, "0.1.0")
    store.add_target("x", 0, "loop", "ext4", {})
    store.end_campaign("interrupted")
    store.close()
    md = _markdown(tmp_path / "r")
    assert "| status | interrupted |" in md and "| x | loop | ext4 | pending |" in md
    assert "No measurement has a value: nothing to compare." in md
    assert "No run was recorded." in md


def test_what_each_filesystem_offers_as_advise_says_it(tmp_path) -> None:
    from tests.unit.test_capabilities import _alike
    from tests.unit.test_capabilities import build as fs_features

    md = _markdown(_alike(tmp_path / "alike"))
    section = md.split("## What each filesystem offers PostgreSQL\n")[1].split("\n## ")[0]
    assert section.strip().splitlines()[:5] == [
        "From each filesystem's facts (its mount options and geometry); not measured.",
        "",
        "- **ext4 (a, b, c)**: no reflink clone, no snapshot, no compression",
        "- **btrfs (z)**: reflink clone, snapshot, compression (mounted compress=zstd:3)",
        "",
    ]
    assert "_The clone-db, fs-snapshot and compression workloads measure them;" in section
    assert sum(ln.startswith("- snapshot: crash-consistent") for ln in section.splitlines()) == 1
    assert md.index("## Targets") < md.index("## What each") < md.index("## Measurements")
    # measured: a line per capability of the group, in one bullet
    md = _markdown(fs_features(tmp_path / "measured"))
    assert "Measured where the campaign ran it, else from each filesystem's facts." in md
    assert "- **ext4**: reflink clone: no (measured): fell back to copy" in md
    assert "- **xfs, not measured**: reflink clone, no snapshot, no compression" in md


def test_a_caveat_every_verdict_shares_is_said_once(tmp_path) -> None:
    """The loop device's and the virtual disk's caveats stand under every verdict of a
    campaign on loop images: the document says each once, after the verdicts, as show
    and compare do (a caveat of one verdict alone stays under it)."""

    def line(title: str, caveats: list[str]) -> VerdictLine:
        v = VerdictLine(title, "", "pgbench.tps", "tx/s", "winner", "a", f"{title}: a", {})
        v.caveats = caveats
        return v

    verdicts = [line("pgbench", ["loop", "virtio", "cpu"]), line("fsync", ["loop", "virtio"])]
    assert shared_caveats(verdicts) == ["loop", "virtio"]
    assert shared_caveats(verdicts[:1]) == []  # one verdict: its caveats stay under it
    md = comparison_markdown(Table(["a"], "a", []), [], verdicts)
    assert md.count("loop") == 1 and md.count("virtio") == 1
    assert "- ⓘ every measurement: loop" in md and "  - ⓘ cpu" in md
