"""`audit.store.kept`: the one rule of the per-process caches of what a run stored once (keyed by the database's file,
least recently used out first, a database in memory never kept)."""

from __future__ import annotations

import threading
from pathlib import Path

from cachetools import LRUCache

from audit.store.database import db_file, open_db
from audit.store.kept import kept


def _counting(value: object) -> tuple[list[int], object]:
    calls: list[int] = []

    def build() -> object:
        calls.append(1)
        return value

    return calls, build


def test_a_file_database_is_read_once_and_two_files_never_share(tmp_path: Path) -> None:
    cache: LRUCache = LRUCache(4)
    a, b = open_db(tmp_path / "a.db"), open_db(tmp_path / "b.db")
    assert db_file(a) == str(tmp_path / "a.db")
    calls_a, build_a = _counting("a")
    calls_b, build_b = _counting("b")
    assert [kept(cache, a, (1, "t"), build_a) for _ in range(3)] == ["a"] * 3
    assert kept(cache, b, (1, "t"), build_b) == "b"  # the same key in another file is another entry
    assert (len(calls_a), len(calls_b)) == (1, 1)


def test_a_database_in_memory_is_never_kept() -> None:
    cache: LRUCache = LRUCache(4)
    db = open_db(":memory:")
    assert db_file(db) == ""
    calls, build = _counting("m")
    assert [kept(cache, db, (1,), build) for _ in range(3)] == ["m"] * 3
    assert len(calls) == 3 and len(cache) == 0


def test_the_least_recently_used_entry_goes_first(tmp_path: Path) -> None:
    cache: LRUCache = LRUCache(2)
    db = open_db(tmp_path / "a.db")
    builds: list[int] = []

    def read(n: int) -> int:
        return kept(cache, db, (n,), lambda: builds.append(n) or n)

    read(1), read(2), read(1), read(3)  # 2 is the least recently used when 3 comes in
    read(1), read(3), read(2)
    assert builds == [1, 2, 3, 2]


def test_threads_reading_at_once_all_get_the_value(tmp_path: Path) -> None:
    cache: LRUCache = LRUCache(8)
    path = tmp_path / "a.db"
    open_db(path).close()
    errors: list[BaseException] = []
    got: list[int] = []

    def work(i: int) -> None:
        db = open_db(path)  # a connection per thread, as pages have
        try:
            for n in range(200):
                got.append(kept(cache, db, ((i + n) % 12,), lambda n=n, i=i: (i + n) % 12))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            db.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(got) == 800 and len(cache) <= 8
