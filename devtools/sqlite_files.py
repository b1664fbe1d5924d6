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


def vm_steps(db, read, every: int = 100) -> int:
    """SQLite virtual-machine steps (in units of `every`) that `read()` makes on `db`'s connection: a count of work
    done that load on the machine does not change, for tests that compare reads."""
    steps = [0]

    def tick() -> int:
        steps[0] += 1
        return 0

    db.conn.set_progress_handler(tick, every)
    try:
        read()
    finally:
        db.conn.set_progress_handler(None, every)
    return steps[0]
