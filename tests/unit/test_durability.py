import pytest

from pgfsbench.analysis.caveats.durability import MAY_LOSE_COMMITS, SAFE, UNSAFE, classify


@pytest.mark.parametrize(
    "fs, opts, settings, level, words",
    [
        ("ext4", ["rw", "relatime"], {}, SAFE, ""),
        ("ext4", ["rw", "nobarrier", "data=writeback"], {}, UNSAFE, "nobarrier"),
        ("ext4", ["rw", "barrier=0"], {}, UNSAFE, "barrier=0"),
        ("xfs", ["rw"], {"fsync": "off"}, UNSAFE, "fsync=off"),
        ("xfs", ["rw"], {"synchronous_commit": "off"}, MAY_LOSE_COMMITS, "synchronous_commit"),
        ("ext4", ["rw"], {"full_page_writes": "off"}, UNSAFE, "torn page"),
        ("btrfs", ["rw", "space_cache=v2"], {"full_page_writes": "off"}, SAFE, "copy-on-write"),
        ("btrfs", ["rw", "nodatacow"], {"full_page_writes": "off"}, UNSAFE, "nodatacow"),
        ("btrfs", ["rw", "nodatacow"], {}, SAFE, "checksums"),
        ("ext4", ["rw", "nobarrier"], {"synchronous_commit": "off"}, UNSAFE, "synchronous_commit"),
    ],
)
def test_classification(fs, opts, settings, level, words):
    d = classify(fs, opts, settings)
    assert d.level == level
    assert words in " ".join(d.reasons)
    assert bool(d.reasons) == bool(words)
