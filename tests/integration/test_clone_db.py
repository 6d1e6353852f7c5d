"""clone-db for real: CREATE DATABASE ... STRATEGY = FILE_COPY with
file_copy_method clone and copy on XFS with reflink=1 (blocks shared) and on ext4
(PostgreSQL 18 accepts clone, the kernel copies: not offered)."""

from __future__ import annotations

from tests.integration.conftest import export, run_plan

PLAN = """
name = "clone-db"
[postgres.settings]
shared_buffers = "64MB"

[[targets]]
name = "xfs"
fs = "xfs"
size = "1G"
mkfs = ["-m", "reflink=1"]

[[targets]]
name = "ext4"
fs = "ext4"
size = "1G"

[[workloads]]
type = "clone-db"
scale = 3
"""


def test_clone_shares_blocks_on_xfs_and_is_not_offered_on_ext4(tmp_path, state_dir):
    results, _ = run_plan(tmp_path, PLAN, "--wait")
    metrics = {}
    for r in export(results)["runs"]:
        assert r["status"] == "ok", r
        metrics[r["target"]] = {m["name"]: m for m in r["metrics"]}
    for target in ("xfs", "ext4"):
        m = metrics[target]
        template = m["clone_db.template_mb"]["value"]
        assert template > 30  # scale 3: about 50 MB
        # a copy takes the template's space on both
        assert m["clone_db.copy_mb_used"]["value"] > 0.8 * template
        assert m["clone_db.copy_s"]["value"] > 0 and m["clone_db.clone_s"]["value"] > 0
    xfs, ext4 = metrics["xfs"], metrics["ext4"]
    assert xfs["clone_db.reflink"]["value"] == 1.0
    assert xfs["clone_db.clone_mb_used"]["value"] < 0.1 * xfs["clone_db.template_mb"]["value"]
    assert ext4["clone_db.reflink"]["value"] == 0.0
    assert ext4["clone_db.clone_mb_used"]["value"] > 0.8 * ext4["clone_db.template_mb"]["value"]
