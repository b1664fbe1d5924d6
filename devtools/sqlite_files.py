"""SQLite files for tests and benchmarks."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from audit.store.database import open_db


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


def twin_orders(db, twin: Path, serve, review, steps: int = 5) -> tuple[list[str], list[str]]:
    """The documents a queue serves over `steps` picks in `db` and in a copy of it at `twin`, reviewing each pick
    with `review(db, pick, step, adjudicate)` where `adjudicate` is False in `db` and True in the copy: a label-blind
    queue serves both in the same order, whatever was said of a document (the twin-database check of the queues'
    design). `serve(db)` gives the next pick, a dict with its `"doc"`."""
    with sqlite3.connect(twin) as copy:
        db.conn.backup(copy)
    copy.close()
    orders = []
    for d, adjudicate in ((db, False), (open_db(twin), True)):
        order = []
        for step in range(steps):
            pick = serve(d)
            order.append(pick["doc"])
            review(d, pick, step, adjudicate)
        orders.append(order)
    return orders[0], orders[1]
