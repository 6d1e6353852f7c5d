"""The PostgreSQL settings a campaign records in full, defaults included: every one that
decides what a commit costs and how the server reads and writes (durability, WAL,
checkpoints, I/O). The rest of the settings are recorded only where they are not at
their default.

Here, at the bottom of the layers: the server side (postgres/) reads these names from
the running server, and the read side (formats/) names the ones a campaign recorded
before the full set was kept.
"""

from __future__ import annotations

# (name, the first major version that has it): a reader of an older campaign knows
# which of them its server had. In the order a reader looks for them: what makes a
# commit durable first, then WAL and checkpoints, then I/O.
IO_SETTINGS: tuple[tuple[str, int], ...] = (
    ("fsync", 0),
    ("synchronous_commit", 0),
    ("full_page_writes", 0),
    ("wal_sync_method", 0),
    ("wal_level", 0),
    ("data_checksums", 0),
    ("wal_log_hints", 0),
    ("wal_init_zero", 12),
    ("wal_recycle", 12),
    ("commit_delay", 0),
    ("commit_siblings", 0),
    ("synchronous_standby_names", 0),
    ("data_sync_retry", 0),
    ("recovery_init_sync_method", 14),
    ("wal_compression", 0),
    ("wal_buffers", 0),
    ("wal_writer_delay", 0),
    ("wal_writer_flush_after", 0),
    ("wal_segment_size", 0),
    ("wal_block_size", 0),
    ("max_wal_size", 0),
    ("min_wal_size", 0),
    ("checkpoint_timeout", 0),
    ("checkpoint_completion_target", 0),
    ("checkpoint_flush_after", 0),
    ("shared_buffers", 0),
    ("huge_pages", 0),
    ("block_size", 0),
    ("io_method", 18),
    ("io_workers", 18),
    ("io_combine_limit", 17),
    ("io_max_combine_limit", 18),
    ("io_max_concurrency", 18),
    ("effective_io_concurrency", 0),
    ("maintenance_io_concurrency", 13),
    ("backend_flush_after", 0),
    ("bgwriter_delay", 0),
    ("bgwriter_lru_maxpages", 0),
    ("bgwriter_lru_multiplier", 0),
    ("bgwriter_flush_after", 0),
    ("debug_io_direct", 16),
    ("file_copy_method", 18),
)
IO_SETTING_NAMES = tuple(name for name, _ in IO_SETTINGS)

# Where a setting's value came from (pg_settings.source) when the client that read it
# set it, not the server: psql's application_name, a session's SET.
CLIENT_SOURCES = ("client", "session")


def io_settings_of(major: int) -> tuple[str, ...]:
    """The names of IO_SETTINGS a server of this major version has."""
    return tuple(name for name, since in IO_SETTINGS if major >= since)
