"""The comparison a plan's variants make: variants that differ only in options, traced to what made them."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgfsbench.analysis.caveats.diff import provenance_diff
from pgfsbench.store.read import load_campaign
from tests.integration.conftest import export, ledgers, run_plan

SYSCTLS = ("vm.dirty_background_bytes", "vm.dirty_ratio", "vm.dirty_background_ratio")
PLAN = """
name = "variants"

[mixins.small]
size = "512M"

[[targets]]
name = "xfs-a"
extends = "small"
fs = "xfs"
mount = "logbsize=64k"

[[targets]]
name = "xfs-b"
extends = "xfs-a"
mount = "logbsize=256k"
log_size = "64M"

[[targets]]
name = "ext4-a"
extends = "small"
fs = "ext4"
mount = "noatime"
sysctls = { "vm.dirty_background_bytes" = 50000000 }

[[targets]]
name = "ext4-b"
extends = "ext4-a"
mount = "noatime,nodelalloc"
sysctls = { "vm.dirty_ratio" = 33 }

[[workloads]]
type = "pgbench-init"
scale = 1
"""


def _sysctl(name: str) -> str:
    return Path("/proc/sys", *name.split(".")).read_text().strip()


@pytest.fixture(scope="module")
def variants(tmp_path_factory, state_dir):
    before = {n: _sysctl(n) for n in SYSCTLS}
    results, _ = run_plan(tmp_path_factory.mktemp("variants"), PLAN)
    return results, before


def test_effective_options_are_read_back_from_the_kernel(variants):
    results, _ = variants
    targets = {t["name"]: t for t in export(results)["targets"]}
    assert all(t["status"] == "ok" for t in targets.values())
    assert "logbsize=64k" in targets["xfs-a"]["effective_mount_options"]
    b = targets["xfs-b"]["effective_mount_options"]
    assert "logbsize=256k" in b
    assert any(o.startswith("logdev=/dev/loop") for o in b)  # the external log
    assert "nodelalloc" in targets["ext4-b"]["effective_mount_options"]
    assert "nodelalloc" not in targets["ext4-a"]["effective_mount_options"]


def test_sysctls_applied_during_and_restored_after(variants):
    results, before = variants
    assert {n: _sysctl(n) for n in SYSCTLS} == before
    campaign = load_campaign(results)
    knobs = {t.name: t.provenance["os_settings"]["sysctls"] for t in campaign.targets}
    assert knobs["ext4-a"]["vm.dirty_background_bytes"]["during"] == "50000000"
    # ext4-b inherits ext4-a's setting and adds its own
    assert knobs["ext4-b"]["vm.dirty_background_bytes"]["during"] == "50000000"
    assert knobs["ext4-b"]["vm.dirty_ratio"]["during"] == "33"
    assert knobs["xfs-a"] == {}


def test_geometry_and_the_diff_view_show_exactly_what_differs(variants):
    results, _ = variants
    campaign = load_campaign(results)
    prov = {t.name: t.provenance for t in campaign.targets}
    assert prov["xfs-b"]["log_device"].startswith("/dev/loop")
    assert "=/dev/loop" in prov["xfs-b"]["geometry"]["raw"]  # xfs_info: external log
    assert prov["ext4-a"]["geometry"]["facts"]
    rows = {r.key: r.values for r in provenance_diff(campaign.targets)}
    assert rows["plan.mount"] == {
        "xfs-a": "logbsize=64k",
        "xfs-b": "logbsize=256k",
        "ext4-a": "noatime",
        "ext4-b": "noatime,nodelalloc",
    }
    assert rows["plan.log_size"]["xfs-b"] == "64M"
    assert "plan.size" not in rows and "plan.workloads" not in rows  # the same everywhere
    assert any(
        k.startswith("sysctl.vm.dirty_ratio") or k == "plan.sysctls.vm.dirty_ratio" for k in rows
    )
    html = (results / "report.html").read_text()
    assert "What differs" in html


def test_nothing_left_behind(variants, state_dir):
    results, _ = variants
    assert ledgers(state_dir) == []
    assert not list((results / "images").glob("*.img"))
