"""pgfsbench: PostgreSQL on filesystems, measured side by side."""

__version__ = "0.2.0"
