"""Whether two campaigns' runs may be compared: their key provenance, side by side.

A cross-campaign comparison is only a comparison of what changed if nothing else
did. Key facts, which refuse the comparison unless the user allows it: the
PostgreSQL version each paired target ran, the plan's workloads (their parameters
decide what a number means), and each paired target's recipe (filesystem, kind,
size, mkfs and mount options, volume, sysctls, queue settings, throttling, the
memory limit its server and page cache were held to), and the CPUs' wake-up latency
the campaign held (an fsync-bound TPC-B ran 40-47% faster with CPUs held awake).
Other differences are noted, never hidden: PostgreSQL settings (often the very
thing compared), and the host.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pgfsbench.analysis.caveats.notes import memory_limit
from pgfsbench.store.read import Campaign, StoredTarget

# The plan entry fields that make a target what it is (not its name, nor where it lives).
RECIPE = (
    "kind",
    "fs",
    "size",
    "mkfs",
    "mount",
    "images",
    "volume",
    "log_size",
    "direct_io",
    "sysctls",
    "queue",
    "zfs",
    "zpool",
    "throttle",
)
HOST = ("hostname", "machine_id", "kernel", "cpu", "memory_bytes")


@dataclass(frozen=True)
class Difference:
    what: str  # "ext4: mount", "PostgreSQL version", "workloads", ...
    baseline: str
    contender: str
    key: bool  # refuses the comparison unless allowed

    def text(self) -> str:
        return f"{self.what}: {self.baseline} (baseline) vs {self.contender} (contender)"


def _shown(value: object) -> str:
    if value in (None, "", [], {}):
        return "(none)"
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _target(campaign: Campaign, name: str) -> StoredTarget:
    return next(t for t in campaign.targets if t.name == name)


def differences(base: Campaign, cont: Campaign, pairs: list[tuple[str, str]]) -> list[Difference]:
    """Every difference that matters between the paired targets' campaigns."""
    out: list[Difference] = []

    def differ(what: str, a: object, b: object, key: bool) -> None:
        if _shown(a) != _shown(b):
            out.append(Difference(what, _shown(a), _shown(b), key))

    bw, cw = base.plan.get("workloads") or [], cont.plan.get("workloads") or []
    if bw != cw:
        for i in range(max(len(bw), len(cw))):
            a = bw[i] if i < len(bw) else None
            b = cw[i] if i < len(cw) else None
            differ(f"workload #{i + 1} of the plan", _plain(a), _plain(b), True)
    for b_name, c_name in pairs:
        bt, ct = _target(base, b_name), _target(cont, c_name)
        who = b_name if b_name == c_name else f"{b_name}→{c_name}"
        b_version, c_version = ((t.provenance or {}).get("postgres_version") for t in (bt, ct))
        # a target that failed before its server started: no data
        if b_version is not None and c_version is not None:
            differ(f"{who}: PostgreSQL version", b_version, c_version, True)
        b_sums, c_sums = ((t.provenance or {}).get("data_checksums") for t in (bt, ct))
        # recorded since data checksums are (on by default in 18)
        if b_sums is not None and c_sums is not None:
            b_shown, c_shown = ("on" if c else "off" for c in (b_sums, c_sums))
            differ(f"{who}: data checksums", b_shown, c_shown, True)
        for field in RECIPE:
            differ(f"{who}: {field}", bt.spec.get(field), ct.spec.get(field), True)
        # the target's own or the plan's: the page cache its server had
        differ(f"{who}: memory", memory_limit(base, bt), memory_limit(cont, ct), True)
        differ(
            f"{who}: PostgreSQL settings",
            _settings(base.plan, bt.spec),
            _settings(cont.plan, ct.spec),
            False,
        )
    differ("the CPUs' wake-up latency", _cpu_latency(base), _cpu_latency(cont), True)
    for fact in HOST:
        differ(f"host {fact}", base.host.get(fact), cont.host.get(fact), False)
    return out


def _cpu_latency(campaign: Campaign) -> str:
    """The CPUs' wake-up latency the campaign held (provision/cpu_latency.py)."""
    held = campaign.host.get("cpu_latency") or {}
    return f"held at {held['asked_us']} µs" if held.get("held") else "as the machine had it"


def _plain(workload: dict | None) -> dict | None:
    """A workload entry without how often it runs (not what it measures)."""
    if workload is None:
        return None
    return {k: v for k, v in workload.items() if k != "repetitions"}


def _settings(plan: dict, spec: dict) -> dict:
    """The PostgreSQL settings a target ran with: the plan's, then its own."""
    return {
        **((plan.get("postgres") or {}).get("settings") or {}),
        **((spec.get("postgres") or {}).get("settings") or {}),
    }
