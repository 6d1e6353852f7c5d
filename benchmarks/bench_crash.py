"""The crash workload's two figures (issue 37): what the recording layer costs a loop
image's writes, and how many crash states a configuration gets checked in 5 minutes.

    .venv/bin/python benchmarks/bench_crash.py overhead          # root: fio and dd, plain vs recorded
    .venv/bin/python benchmarks/bench_crash.py states            # root: one ext4 target, 100 states
    .venv/bin/python benchmarks/bench_crash.py states --states 200 --fs btrfs

``overhead`` makes an ext4 on a loop image twice, once over a plain sparse file and once
over the same file inside the recording layer (recording on), and runs on each: fio 8 kB
sequential writes each followed by fdatasync (WAL-like: the syncs per second) and dd of
256 MB with conv=fdatasync (MB/s). The images and mounts are its own, in a temporary
directory, taken apart afterwards.

``states`` runs ``pgfsbench run`` on a one-target plan with a crash workload of
``--states`` states and reads back the states per minute, each step's mean seconds
(from ``crash-states.jsonl``) and what was found.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pgfsbench.crash.recording import control, start_recorder, stop_recorder

FIO = [
    "fio",
    "--name=wal",
    "--rw=write",
    "--bs=8k",
    "--size=32M",
    "--fdatasync=1",
    "--ioengine=psync",
    "--output-format=json",
]


def _run(argv: list[str]) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def _measure(image: Path, where: Path) -> dict[str, float]:
    device = _run(["losetup", "--find", "--show", "--direct-io=on", str(image)]).strip()
    point = where / "mnt"
    point.mkdir(exist_ok=True)
    try:
        _run(["mkfs.ext4", "-q", "-F", device])
        _run(["mount", device, str(point)])
        try:
            job = json.loads(_run([*FIO, f"--directory={point}"]))["jobs"][0]["write"]
            syncs = job["iops"]
            started = time.monotonic()
            _run(
                [
                    "dd",
                    "if=/dev/zero",
                    f"of={point}/dd",
                    "bs=1M",
                    "count=256",
                    "conv=fdatasync",
                    "status=none",
                ]
            )
            mb_s = 256 / (time.monotonic() - started)
        finally:
            _run(["umount", str(point)])
    finally:
        subprocess.run(["losetup", "-d", device], check=False)
    return {"fdatasync_8k_per_s": syncs, "dd_mb_per_s": mb_s}


def overhead(rounds: int) -> None:
    results: dict[str, list[dict[str, float]]] = collections.defaultdict(list)
    for _ in range(rounds):
        for mode in ("plain", "recorded"):
            with tempfile.TemporaryDirectory(prefix="bench-crash-", dir="/var/tmp") as tmp:
                base = Path(tmp)
                res = {
                    "backing": str(base / "backing"),
                    "mountpoint": str(base / "recorded"),
                    "log": str(base / "recorder.log"),
                }
                images = base
                if mode == "recorded":
                    start_recorder(res)
                    images = Path(res["mountpoint"])
                try:
                    image = images / "t.img"
                    with open(image, "wb") as f:
                        f.truncate(1 << 30)
                    if mode == "recorded":
                        control(images, f"start {base / 'recording'}")
                    results[mode].append(_measure(image, base))
                    if mode == "recorded":
                        control(images, "stop")
                    image.unlink()
                finally:
                    if mode == "recorded":
                        stop_recorder(res)
    print(f"{'':10} {'fdatasync 8k/s':>16} {'dd MB/s':>10}   (median of {rounds})")
    med = {}
    for mode, runs in results.items():
        med[mode] = {k: sorted(r[k] for r in runs)[len(runs) // 2] for k in runs[0]}
        print(
            f"{mode:10} {med[mode]['fdatasync_8k_per_s']:>16,.0f} {med[mode]['dd_mb_per_s']:>10,.0f}"
        )
    ratio = {k: med["recorded"][k] / med["plain"][k] for k in med["plain"]}
    print(
        f"{'recorded/plain':10} ×{ratio['fdatasync_8k_per_s']:.2f}{'':>10} ×{ratio['dd_mb_per_s']:.2f}"
    )


PLAN = """
name = "bench-crash"
[repetitions]
count = 1
[postgres.settings]
shared_buffers = "32MB"
[[targets]]
name = "{fs}"
fs = "{fs}"
size = "{size}"
{extra}
[[workloads]]
type = "crash"
seconds = {seconds}
states = {states}
"""


def states(fs: str, count: int, seconds: int, extra: str) -> None:
    size = "320M" if fs == "xfs" else "256M"
    with tempfile.TemporaryDirectory(prefix="bench-crash-") as tmp:
        plan = Path(tmp) / "plan.toml"
        plan.write_text(PLAN.format(fs=fs, size=size, extra=extra, seconds=seconds, states=count))
        results = Path(tmp) / "r"
        started = time.monotonic()
        cli = [sys.executable, "-m", "pgfsbench", "run", str(plan), "--results", str(results)]
        subprocess.run([*cli, "--wait"], check=True, capture_output=True)
        wall = time.monotonic() - started
        doc = json.loads(
            _run([sys.executable, "-m", "pgfsbench", "export", str(results), "--format", "json"])
        )
        [run] = [r for r in doc["runs"] if r["workload"] == "crash"]
        m = {x["name"]: x["value"] for x in run["metrics"]}
        lines = (results / "artifacts" / fs / "01-crash" / "crash-states.jsonl").read_text()
        rows = [json.loads(line) for line in lines.splitlines()]
    steps: collections.Counter[str] = collections.Counter()
    for row in rows:
        steps.update(row["phases"])
    per_state = sum(r["seconds"] for r in rows) / len(rows)
    print(
        f"{fs}: {len(rows)} states in {sum(r['seconds'] for r in rows):.0f} s of checks "
        f"({wall:.0f} s the whole campaign)"
    )
    print(
        f"  {m['crash.states_per_minute']:.0f} states/min: {5 * m['crash.states_per_minute']:.0f} "
        f"per 5 minutes; {per_state:.2f} s a state"
    )
    print("  mean s per step: " + ", ".join(f"{k} {v / len(rows):.3f}" for k, v in steps.items()))
    print(
        f"  recorded {m['crash.recorded_writes']:.0f} writes, {m['crash.recorded_flushes']:.0f} "
        f"flushes, {m['crash.recorded_mb']:.0f} MB; {m['crash.commits_acked']:.0f} commits "
        f"acknowledged"
    )
    print(
        f"  bad: {m['crash.lost_commit_states']:.0f} lost commits, "
        f"{m['crash.corrupt_states']:.0f} corrupt of {m['crash.states']:.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    o = sub.add_parser("overhead")
    o.add_argument("--rounds", type=int, default=3)
    s = sub.add_parser("states")
    s.add_argument("--fs", default="ext4")
    s.add_argument("--states", type=int, default=100)
    s.add_argument("--seconds", type=int, default=10)
    s.add_argument("--mount", default="", help="mount options of the target")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root: loop devices, mkfs, mount")
    if args.what == "overhead":
        overhead(args.rounds)
    else:
        extra = f'mount = "{args.mount}"' if args.mount else ""
        states(args.fs, args.states, args.seconds, extra)


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
