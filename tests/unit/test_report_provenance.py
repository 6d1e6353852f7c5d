"""The report's provenance: the diff view, per-target facts, and mount option warnings.

Two XFS targets written through the Store API the way a campaign writes them:
they differ in their mount options (logbsize, and an ``ikeep`` the kernel
ignores) and in one sysctl; everything else is alike except for what names
the run's plumbing (loop numbers, ports, paths).
"""

from __future__ import annotations

import re
from pathlib import Path

from markupsafe import escape
from rich.console import Console

from pgfsbench.filesystems.mountcheck import mount_option_changes
from pgfsbench.filesystems.xfs import parse_xfs_info
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.plan.model import Target
from pgfsbench.report.html import write_report
from pgfsbench.report.terminal import notices, render_table
from pgfsbench.store.db import Store
from pgfsbench.store.read import load_campaign

FIXTURES = Path(__file__).parent.parent / "fixtures"
XFS_INFO = (FIXTURES / "xfs_info_su_sw.txt").read_text()
BUILD = "'--prefix=/usr' '--with-lz4' 'CFLAGS=-O2 <march>'"
# name → (asked mount options, what the kernel listed, vm.dirty_ratio)
TARGETS = {
    "xfs-a": ("noatime,logbsize=262144", "rw,noatime,inode64,logbufs=8,logbsize=256k,noquota", 20),
    "xfs-b": ("noatime,logbsize=64k,ikeep", "rw,noatime,inode64,logbufs=8,logbsize=64k,noquota", 5),
}


def _provenance(name: str, loop: int) -> dict:
    asked, effective, dirty_ratio = TARGETS[name]
    mnt = f"/var/tmp/pgfsbench/{name}/mnt"
    return {
        "kind": "loop",
        "fs": "xfs",
        "device": f"/dev/loop{loop}",
        "workdir": f"{mnt}/pgfsbench",
        "mounted_fs_type": "xfs",
        "mount_point": mnt,
        "effective_mount_options": effective.split(","),
        "commands": [
            {
                "argv": ["mount", "-t", "xfs", "-o", asked, f"/dev/loop{loop}", mnt],
                "exit_code": 0,
                "stdout": "",
                "stderr": "",
            }
        ],
        "notes": [],
        "mount_option_changes": mount_option_changes(asked, effective.split(","), fs="xfs"),
        "geometry": {
            "tool": ["xfs_info", mnt],
            "facts": parse_xfs_info(XFS_INFO),
            "raw": XFS_INFO.replace("/dev/loop4", f"/dev/loop{loop}"),
        },
        "device_facts": {
            "device": f"/dev/loop{loop}",
            "name": f"loop{loop}",
            "dev": f"7:{loop}",
            "size_bytes": 2 * 2**30,
            "rotational": True,
            "scheduler": "none",
            "write_cache": "write back",
            "loop_backing_file": f"/var/tmp/pgfsbench/{name}/image.img",
            "loop_dio": True,
        },
        "backing_device": {
            "path": f"/var/tmp/pgfsbench/{name}/image.img",
            "filesystem": "ext4",
            "device": "/dev/vda",
            "name": "vda",
            "scheduler": "mq-deadline",
            "write_cache": "write back",
            "vendor": "0x1af4",
        },
        "sysctls": {
            "vm.dirty_ratio": dirty_ratio,
            "vm.dirty_background_ratio": 10,
            "vm.swappiness": 60,
        },
        "postgres_version": "18.6",
        "data_checksums": True,
        "postgres_bindir": "/var/lib/pgfsbench/pg/18.6/bin",
        "postgres_settings": {
            "port": str(54000 + loop),
            "unix_socket_directories": f"/tmp/pgfsb-{loop}",
            "max_connections": "14",
            "shared_buffers": "16384 8kB",
        },
        "postgres_io_settings": {
            "fsync": "on",
            "wal_sync_method": "fdatasync",
            "io_method": "worker",
        },
    }


def build_results(results: Path) -> Path:
    store = Store.create(results)
    store.start_campaign(
        "20250101T120000-cd34",
        "xfs-logbsize",
        {"name": "xfs-logbsize"},
        {"kernel": "6.18.44", "postgresql_build_options": BUILD},
        "0.1.0",
    )
    for pos, (name, loop) in enumerate((("xfs-a", 3), ("xfs-b", 7))):
        asked, _, dirty_ratio = TARGETS[name]
        spec = Target(
            name=name,
            fs="xfs",
            mount=asked,
            sysctls={"vm.dirty_ratio": dirty_ratio} if dirty_ratio != 20 else {},
        )
        tid = store.add_target(name, pos, "loop", "xfs", spec.model_dump(mode="json"))
        store.set_target(tid, "ok", provenance=_provenance(name, loop))
        run = store.start_run(tid, "pgbench", {"clients": 4})
        store.add_result(
            run, tid, WorkloadResult([Metric("pgbench.tps", 900.0 + pos, "tx/s", True)])
        )
        store.finish_run(run, "ok")
    store.end_campaign("ok")
    store.close()
    return results


def _section(page: str, section_id: str) -> str:
    m = re.search(rf'<section id="{section_id}">(.*?)</section>', page, re.S)
    assert m, f"no section {section_id}"
    return m.group(1)


def _article(page: str, name: str) -> str:
    m = re.search(rf'<article class="target" id="target-{name}">(.*?)</article>', page, re.S)
    assert m, f"no target {name}"
    return m.group(1)


def test_diff_section_shows_exactly_what_differs(tmp_path: Path) -> None:
    page = write_report(build_results(tmp_path / "res")).read_text()
    where = [page.index(f'id="{s}"') for s in ("charts", "comparison", "differences")]
    assert where == sorted(where)  # right after the comparison table
    diff = _section(page, "differences")
    assert "What differs between these targets" in diff
    assert re.findall(r'<tr data-key="([^"]+)">', diff) == [
        "plan.mount",
        "plan.sysctls.vm.dirty_ratio",
        "mount.logbsize",
        "sysctl.vm.dirty_ratio",
    ]
    row = re.search(r'<tr data-key="mount.logbsize">(.*?)</tr>', diff, re.S).group(1)
    assert re.findall(r"<td>(.*?)</td>", row) == ["<code>mount.logbsize</code>", "256k", "64k"]
    row = re.search(r'<tr data-key="plan.sysctls.vm.dirty_ratio">(.*?)</tr>', diff, re.S).group(1)
    assert "—" in row and "<td>5</td>" in row


def test_ignored_option_is_warned_about_in_its_target_and_the_notices(tmp_path: Path) -> None:
    page = write_report(build_results(tmp_path / "res")).read_text()
    b = _article(page, "xfs-b")
    warnings = re.findall(
        r'<div class="notice option-warning" data-option="([^"]+)">(.*?)</div>', b, re.S
    )
    assert [opt for opt, _ in warnings] == ["ikeep"]
    assert "the kernel ignored ikeep" in warnings[0][1]
    assert "the kernel ignored ikeep" in _section(page, "notices")
    # logbsize=262144 shown as 256k is the same value: no warning on xfs-a
    a = _article(page, "xfs-a")
    assert "option-warning" not in a
    assert re.search(r'<tr data-option="logbsize=262144">.*?equivalent.*?logbsize=256k', a, re.S)


def test_each_target_shows_geometry_device_sysctls_and_postgres(tmp_path: Path) -> None:
    page = write_report(build_results(tmp_path / "res")).read_text()
    a = _article(page, "xfs-a")
    assert "<dt>meta-data.agcount</dt><dd>4</dd>" in a
    assert "<dt>data.swidth</dt><dd>24 KiB</dd>" in a  # bytes as a person writes them
    # no raw unit suffix left for a reader, and no glyph a stock chromium draws as a box
    assert not re.search(r"<dt>[^<]*_(bytes|mb|kb)</dt>", page) and "ⓘ" not in page
    m = re.search(
        r"<details>\s*<summary>output of <code>xfs_info /var/tmp/pgfsbench/xfs-a/mnt"
        r"</code></summary>\s*<pre[^>]*>(.*?)</pre>",
        a,
        re.S,
    )
    assert m and "agcount=4, agsize=25600 blks" in m.group(1)
    assert "<dt>scheduler</dt><dd>none</dd>" in a and "<dt>loop dio</dt><dd>yes</dd>" in a
    assert "Disk under the loop image" in a and "<dt>scheduler</dt><dd>mq-deadline</dd>" in a
    assert "<dt><code>vm.dirty_ratio</code></dt><dd>20</dd>" in a
    assert "<dt>version</dt><dd>18.6</dd>" in a
    assert a.count("<dt>data checksums</dt><dd>yes</dd>") == 1  # in the PostgreSQL part only
    assert "<td><code>shared_buffers</code></td><td>16384 8kB</td>" in a
    # every durability and I/O setting, defaults included, in their own folded table
    io = a.split("Durability and I/O settings (defaults included)</summary>")[1]
    assert "<td><code>wal_sync_method</code></td><td>fdatasync</td>" in io.split("</details>")[0]
    assert "<dt>postgres io settings</dt>" not in a.lower()  # not dumped as an unknown fact
    # Not dumped as raw JSON (the inlined plotly.js and chart specs are scripts of their own).
    text = re.sub(r"<script\b[^>]*>.*?</script>", "", page, flags=re.S)
    assert '"geometry"' not in text and "tool&#34;" not in text


def test_host_shows_postgres_build_options_escaped(tmp_path: Path) -> None:
    host = _section(write_report(build_results(tmp_path / "res")).read_text(), "host")
    assert "PostgreSQL build options" in host and str(escape(BUILD)) in host
    assert "<march>" not in host


def test_terminal_says_it_too(tmp_path: Path) -> None:
    campaign = load_campaign(build_results(tmp_path / "res"))
    subjects = {n.subject: n.message for n in notices(campaign)}
    assert subjects == {
        "target xfs-b: mount options": "the kernel ignored ikeep: it is not among the effective mount options"
    }
    console = Console(record=True, width=200)
    render_table(campaign, console)
    assert "xfs-b: mount options: the kernel ignored ikeep" in console.export_text()


def test_report_without_the_new_provenance_keys_still_renders(tmp_path: Path) -> None:
    """Results stored before these keys existed: the check is computed from plan + kernel."""
    store = Store.create(tmp_path / "res")
    store.start_campaign("c1", "old", {}, {"kernel": "6.1"}, "0.1.0")
    for pos, (name, loop) in enumerate((("xfs-a", 3), ("xfs-b", 7))):
        prov = _provenance(name, loop)
        for key in (
            "mount_option_changes",
            "geometry",
            "device_facts",
            "backing_device",
            "sysctls",
        ):
            del prov[key]
        tid = store.add_target(
            name,
            pos,
            "loop",
            "xfs",
            Target(name=name, fs="xfs", mount=TARGETS[name][0]).model_dump(mode="json"),
        )
        store.set_target(tid, "ok", provenance=prov)
    store.end_campaign("ok")
    store.close()
    page = write_report(tmp_path / "res").read_text()
    assert "the kernel ignored ikeep" in _article(page, "xfs-b")
    assert re.findall(r'<tr data-key="([^"]+)">', _section(page, "differences")) == [
        "plan.mount",
        "mount.logbsize",
    ]
    assert "PostgreSQL build options" not in page
