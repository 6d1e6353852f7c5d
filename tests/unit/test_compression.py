"""compression's parsers and figures: compsize's and zfs get's real outputs
(tests/fixtures/), the mount options that decide what btrfs compresses, and ratio 1.0
said plainly where the filesystem does not compress."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgfsbench.workloads.compression import (
    TRANSPARENT,
    btrfs_compress_option,
    btrfs_space,
    compression_metrics,
    parse_compsize,
    parse_zfs_space,
    tree_sizes,
    uncompressed_space,
    zfs_ratio,
    zfs_space,
)

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _read(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_compsize_totals_and_types_from_its_byte_output():
    c = parse_compsize(_read("compsize_b_mixed_zstd.txt"))
    assert c is not None
    assert (c.disk, c.uncompressed, c.referenced) == (2174981, 7000069, 7000069)
    assert c.by_type == {"none": (2019333, 2019333), "zstd": (155648, 4980736)}


def test_compsize_of_pgbench_data_on_btrfs_zstd():
    c = parse_compsize(_read("compsize_b_pgdata_zstd.txt"))
    assert c is not None and c.uncompressed > 2 * c.disk  # pgbench's blank fillers
    assert "zstd" in c.by_type


@pytest.mark.parametrize(
    "name", ["compsize_b_no_files_exit1.stderr.txt", "compsize_b_not_btrfs_exit1.stderr.txt"]
)
def test_compsize_errors_give_no_figures(name):
    assert parse_compsize(_read(name)) is None


def test_only_a_compress_option_in_effect_compresses():
    assert btrfs_compress_option(["rw", "relatime", "compress=zstd:3", "ssd"]) == "compress=zstd:3"
    assert btrfs_compress_option(["compress-force=lzo"]) == "compress-force=lzo"
    assert btrfs_compress_option(["rw", "compress=no"]) is None
    assert btrfs_compress_option(["rw", "space_cache=v2"]) is None


def test_btrfs_space_says_what_btrfs_did():
    c = parse_compsize(_read("compsize_b_mixed_zstd.txt"))
    assert c is not None
    s = btrfs_space(c, ["rw", "compress=zstd:3"])
    assert s.compressed and s.ratio == pytest.approx(7000069 / 2174981)
    assert (s.logical, s.physical) == (7000069, 2174981)
    assert "compress=zstd:3" in s.note and "128 KiB" in s.note
    off = btrfs_space(c, ["rw", "nodatacow", "compress=zstd:3"])
    assert not off.compressed and "copy-on-write" in off.note
    plain = btrfs_space(c, ["rw"])
    assert not plain.compressed and "without compress=" in plain.note


def test_zfs_fuse_has_no_logicalused_so_the_files_sizes_are_the_logical_bytes():
    props = parse_zfs_space(_read("zfs_get_Hp_all_compressed_gzip.txt"))
    assert "logicalused" not in props and props["compression"] == "gzip"
    files = 120665473  # what the data directory's files held in that run (115 MB)
    s = zfs_space(props, files)
    assert s.physical == int(props["used"]) == 60108800 and s.logical == files
    assert s.ratio == pytest.approx(files / 60108800)
    # zfs-fuse's own compressratio counts data blocks alone: said, not used
    assert zfs_ratio(props["compressratio"]) == 7.27 and "7.27x" in s.method
    assert s.compressed and "no logicalused" in s.method and "gzip" in s.note


def test_zfs_logicalused_where_zfs_has_it():
    s = zfs_space(
        {"used": "1000", "logicalused": "2500", "compressratio": "2.50x", "compression": "lz4"},
        9999,
    )
    assert (s.logical, s.physical, s.ratio) == (2500, 1000, 2.5)
    assert "logicalused against used" in s.method
    assert zfs_ratio("1.85") == 1.85 and zfs_ratio("-") is None


def test_zfs_uncompressed_dataset():
    props = parse_zfs_space(_read("zfs_get_Hp_all_dataset.txt")) | {"compression": "off"}
    s = zfs_space(props, 114688)
    assert not s.compressed and s.ratio == 1.0 and "uncompressed" in s.note


def test_a_filesystem_without_compression_is_ratio_one_said_plainly(tmp_path):
    (tmp_path / "a").write_bytes(b"x" * 10000)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b").write_bytes(b"y" * 5)
    (tmp_path / "link").symlink_to(tmp_path / "a")
    apparent, allocated = tree_sizes(tmp_path)
    assert apparent == 10005 and allocated >= 10005
    s = uncompressed_space(allocated, "ext4")
    assert s.ratio == 1.0 and s.logical == s.physical == allocated and not s.compressed
    assert "ext4 does not compress" in s.note


def test_the_metrics_carry_units_directions_and_the_notes():
    s = uncompressed_space(4 * 2**20, "xfs")
    m = {x.name: x for x in compression_metrics(s, 3 * 2**20)}
    assert m["compression.ratio"].unit == "x" and m["compression.ratio"].higher_is_better
    assert m["compression.physical_mb"].value == 4.0 and m["compression.logical_mb"].value == 4.0
    assert m["compression.files_mb"].value == 3.0
    assert m["compression.compressed"].value == 0.0
    assert TRANSPARENT in m["compression.ratio"].note
    assert "xfs does not compress" in m["compression.ratio"].note
    for name in ("logical_mb", "physical_mb", "files_mb", "compressed"):
        assert m[f"compression.{name}"].higher_is_better is None


def test_the_mount_and_its_options_hold_the_data_directory():
    from pgfsbench.workloads.compression import _mount

    mounts = _read("proc_mounts_btrfs_loop.txt")
    point = "/tmp/snapfix-YZwD/mnt"
    found = _mount(Path(point) / "pgfsbench" / "pgdata", mounts)
    assert found is not None and found[:3] == ("/dev/loop2", point, "btrfs")
    assert "rw" in found[3] and btrfs_compress_option(found[3]) is None
