"""SQLite files for tests and benchmarks."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def copy_db(src: Path, dst: Path) -> None:
    """Copy a SQLite database with the backup API (consistent even in WAL mode)."""
    for suffix in ("", "-wal", "-shm"):
        Path(str(dst) + suffix).unlink(missing_ok=True)
    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        a.backup(b)
    a.close()
    b.close()
