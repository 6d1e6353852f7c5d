"""pgfsbench: PostgreSQL on filesystems, measured side by side."""

__version__ = "0.1.0"
