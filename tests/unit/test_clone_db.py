"""clone-db's metrics: whether a clone shared blocks, from the space it took.

The figures are those an XFS (reflink=1) and an ext4 loop target gave for a scale-3
template (52.3 MB): on XFS the clone took 0.16 MB and the copy 52.4 MB; on ext4
PostgreSQL 18 accepted file_copy_method=clone and the kernel copied (52.3 MB each).
"""

from __future__ import annotations

from pgfsbench.workloads.clone_db import clone_metrics, reflink_offered

MB = 2**20
TEMPLATE = int(52.28 * MB)


def _by_name(metrics):
    return {m.name: m for m in metrics}


def test_a_clone_that_took_almost_no_space_shared_blocks():
    assert reflink_offered(0.164 * MB, TEMPLATE)
    assert not reflink_offered(52.3 * MB, TEMPLATE)
    assert not reflink_offered(0, 0)  # an empty template tells nothing


def test_xfs_metrics_say_reflink():
    m = _by_name(
        clone_metrics(
            TEMPLATE, {"copy": 0.108, "clone": 0.110}, {"copy": 52.43 * MB, "clone": 0.164 * MB}
        )
    )
    assert m["clone_db.reflink"].value == 1.0
    assert "shared" in m["clone_db.reflink"].note
    assert round(m["clone_db.clone_mb_used"].value, 3) == 0.164
    assert m["clone_db.clone_s"].higher_is_better is False


def test_ext4_clone_is_not_offered_rather_than_failed():
    m = _by_name(
        clone_metrics(
            TEMPLATE, {"copy": 0.108, "clone": 0.243}, {"copy": 52.3 * MB, "clone": 52.3 * MB}
        )
    )
    assert m["clone_db.reflink"].value == 0.0
    assert "not offered" in m["clone_db.reflink"].note


def test_a_refused_clone_has_no_time_and_says_why():
    why = 'not offered: ERROR:  invalid value for parameter "file_copy_method"'
    m = _by_name(
        clone_metrics(
            TEMPLATE, {"copy": 0.1, "clone": None}, {"copy": 52.3 * MB, "clone": None}, why
        )
    )
    assert m["clone_db.clone_s"].value is None and why in m["clone_db.clone_s"].note
    assert m["clone_db.reflink"].value is None
