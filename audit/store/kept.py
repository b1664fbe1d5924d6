"""Per-process caches of what a run stored once and never changes (its documents' counts, vectors built from them),
keyed by the database's file: one rule for every such cache.

A database in memory is never kept (its handle's id can be reused by another database once it is freed). The key's
other parts must tell a run deleted and scored again apart (run id and creation time at least).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping
from typing import TypeVar

from cachetools import LRUCache

from audit.store.database import Database, db_file

T = TypeVar("T")

_LOCK = threading.Lock()  # pages render in threads: a cache's recency list is not safe to change from two at once


def run_key(row: Mapping) -> tuple:
    """What identifies a run's documents and decisions in a key (with the database file, `kept`): the run (id, name
    and creation time: a deleted run's id may be taken again) and its decision count (a family that adds decisions
    when reviewed, LitXBench, counts them into the run's row; decisions are never taken away from a run)."""
    return row["id"], row["name"], row["created"], row["n_decisions"]


def kept(cache: LRUCache, db: Database, key: tuple[Hashable, ...], build: Callable[[], T]) -> T:
    """`build()`, kept in `cache` (least recently used out first) under (`db`'s file, *`key`); built afresh for a
    database in memory. Two threads missing at once may both build; the values are equal, either is kept."""
    file = db_file(db)
    if not file:
        return build()
    full = (file, *key)
    with _LOCK:
        found = cache.get(full, _MISSING)
    if found is not _MISSING:
        return found
    value = build()
    with _LOCK:
        cache[full] = value
    return value


_MISSING = object()
