"""The SQLite store (sqlite-utils, WAL): opening, and converting rows to plain values in one place."""

from __future__ import annotations

import json
import marshal
import os
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from cachetools import LRUCache
from sqlite_utils import Database

from audit.errors import DatabaseRefused, UnknownRun
from audit.store import check_record
from audit.store.limits import BUSY_TIMEOUT_MS, default_db_path, disk_full, disk_full_message  # noqa: F401 (re-exported)
from audit.store.migrations import SCHEMA_VERSION, migrations
from audit.store.schema_check import schema_problem
from audit.store.shared_reviews import SAME_QUESTION, SETTLES_OWN
from scoring.judges.answer import Answer

SQLITE_MAGIC = b"SQLite format 3\x00"
MIGRATIONS_TABLE = "_sqlite_migrations"
NEW_DB_HINT = "give --db (or $REJUDGE_DB) a file name that does not exist yet to start a new database"


MADE_BY = "score, import, demo and judge-batch"
"""The CLI commands that may start a new database (every other one refuses a path where none exists)."""


def open_db(path: str | Path | None = None, *, create: bool = True) -> Database:
    """Open (creating if needed, unless `create` is false) a Rejudge database, in WAL mode, with every migration
    applied.

    A file that is not a Rejudge database is refused and left exactly as it was: an empty (0-byte) file, a damaged
    or truncated one, another application's SQLite file, one written by a newer Rejudge. A database the user
    cannot write (file or folder) opens read-only (`db.read_only` is True): browsing and export work, writes fail.

    Raises:
        DatabaseRefused: saying what the file is and what to do.
    """
    path = str(path or default_db_path())
    if path == ":memory:":
        return _connect(path, uri=False, read_only=False)
    p = Path(path)
    if not p.exists() and not create:  # a mistyped --db left an empty database behind a command that only reads
        raise DatabaseRefused(f"{p}: no database there (a new one is started by {MADE_BY}); check the path")
    if not p.exists():
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise DatabaseRefused(f"{p}: cannot create the database's folder ({e.strerror})") from None
        if not os.access(p.parent, os.W_OK):
            raise DatabaseRefused(f"{p}: no database there, and its folder is not writable")
        db = _connect(path, uri=False, read_only=False)
        _CHECKED[str(p.resolve())] = False
        return db
    key = str(p.resolve())
    if _CHECKED.get(key) is False and _writable(p):
        return _connect(path, uri=False, read_only=False, refuse_newer=p)
    _check_file(p)
    read_only = not _writable(p)
    found = _inspect(p, read_only)
    version, applied, tables = found.version, found.applied, found.tables
    if found.application_id not in (0, APPLICATION_ID):
        raise DatabaseRefused(f"{p}: is an SQLite database of another application (application_id "
                              f"{found.application_id:#x}); it was not changed; {NEW_DB_HINT}")
    if not applied and (tables or version):
        raise DatabaseRefused(f"{p}: is an SQLite database of another application (tables "
                              f"{', '.join(sorted(tables)[:5]) or 'none'}, user_version {version}, no Rejudge "
                              f"schema); it was not changed; {NEW_DB_HINT}")
    _refuse_newer(p, version, applied)
    if found.schema_problem:
        raise DatabaseRefused(f"{p}: the database is damaged or was changed by hand: {found.schema_problem}; it was "
                              "not changed; restore it from a backup")
    if read_only:
        if len(applied) < len(migrations._migrations):
            raise DatabaseRefused(f"{p}: the database is read-only and needs upgrading to schema {SCHEMA_VERSION}; "
                                  "open it once with write access")
        return _connect_read_only(p)
    # a file in rollback-journal mode is migrated before it is switched to WAL: a migration that fails leaves it
    # exactly as it was
    db = _connect(path, uri=False, read_only=False, wal_first=False)
    _CHECKED[key] = False
    return db


APPLICATION_ID = 0x524A4447
"""`PRAGMA application_id` of a Rejudge database ("RJDG"), stamped with the schema version when a migration runs;
0 in files written before it. Another non-zero value is another application's file."""


def _refuse_newer(p: Path, version: int, applied: list[str]) -> None:
    """Refuse a schema this code is older than: a higher `user_version` stamp or a migration it does not know.

    Raises:
        DatabaseRefused: saying to upgrade.
    """
    known = {m.name for m in migrations._migrations}
    unknown = [n for n in applied if n not in known]
    if version > SCHEMA_VERSION or unknown:
        raise DatabaseRefused(f"{p}: written by a newer Rejudge (schema version {version}"
                              f"{'; migrations ' + ', '.join(unknown[:3]) if unknown else ''}); this version knows "
                              f"schema {SCHEMA_VERSION}: upgrade Rejudge to open it (nothing was changed)")


_CHECKED: dict[str, bool] = {}
"""Writable databases this process has checked and opened. Their files are never opened by Python again: closing
any descriptor of a file drops every POSIX lock this process holds on it, including the locks of the SQLite
connections other sessions (threads) have open, which showed as "disk I/O error" under concurrent sessions."""


def _connect(path: str, *, uri: bool, read_only: bool, wal_first: bool = True,
             refuse_newer: Path | None = None) -> Database:
    """A connection with the store's settings, migrated. `refuse_newer`: this process checked the file before, but
    a newer Rejudge may have migrated it since (a dashboard keeps running while the CLI is upgraded): its stamp is
    read again, before anything is written."""
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False,
                           uri=uri)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    db = Database(conn, execute_plugins=False)  # no sqlite-utils plugin runs code on the store's connections (nor
    # is the installed packages' list scanned for them: 0.1-1 s of every command's start-up, #38)
    db.read_only = read_only  # type: ignore[attr-defined]
    if read_only:
        conn.execute("PRAGMA query_only = ON")
        return db
    if refuse_newer is not None:
        try:
            _refuse_newer(refuse_newer, conn.execute("PRAGMA user_version").fetchone()[0],
                          [m.name for m in migrations.applied(db)])
        except DatabaseRefused:
            conn.close()
            raise
    if path != ":memory:" and wal_first:
        _wal(db)
    conn.execute("PRAGMA foreign_keys = ON")
    if migrations.pending(db):
        with _WriteLock(conn):
            if migrations.pending(db):
                migrations.apply(db)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    if path != ":memory:" and not wal_first:
        _wal(db)
    return db


def _wal(db: Database) -> None:
    db.enable_wal()
    # In WAL mode NORMAL cannot corrupt the database; only an OS crash may lose the last commits. FULL flushes on
    # every one-row review commit and made concurrent reviewing 3x slower (bench/README.md).
    db.conn.execute("PRAGMA synchronous = NORMAL")


def _uri(p: Path, *extra: str) -> str:
    return "file:" + urllib.parse.quote(str(p.resolve())) + "?" + "&".join(("mode=ro", *extra))


def _connect_read_only(p: Path) -> Database:
    """A read-only connection that creates no file.

    Without WAL files beside it nobody has the database open for writing (a writer in WAL mode keeps them), so it
    is opened `immutable` (no locks, no WAL index: a plain `mode=ro` connection would leave -wal and -shm files
    behind). Otherwise `mode=ro` reads through the existing WAL index.
    """
    if not _sidecars(p):
        return _connect(_uri(p, "immutable=1"), uri=True, read_only=True)
    try:
        db = _connect(_uri(p), uri=True, read_only=True)
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.OperationalError:
        raise DatabaseRefused(f"{p}: the database is read-only and its WAL files cannot be read; open it once "
                              "with write access") from None


def _sidecars(p: Path) -> bool:
    """Whether the database has WAL files beside it (a connection is open, or one was killed)."""
    return any(Path(f"{p}{s}").exists() for s in ("-wal", "-shm"))


def _writable(p: Path) -> bool:
    """Whether this user may write the database file and create its journal files beside it.

    The permission bits are honoured for root too, so `chmod a-w` makes a database read-only for everybody.
    """
    for target in (p, p.parent):
        if not os.access(target, os.W_OK) or not target.stat().st_mode & 0o222:
            return False
    return True


def _check_file(p: Path) -> None:
    """Refuse, from its first bytes and size, a file that cannot be a usable SQLite database."""
    if p.is_dir():
        raise DatabaseRefused(f"{p}: is a folder, not a database file; {NEW_DB_HINT}")
    if not p.is_file():
        raise DatabaseRefused(f"{p}: is not a regular file")
    try:
        with p.open("rb") as f:
            head = f.read(100)
            if not head:  # SQLite creates the file empty and writes its header at once: let a creator finish
                for _ in range(5):
                    time.sleep(0.05)
                    f.seek(0)
                    head = f.read(100)
                    if head:
                        break
    except OSError as e:
        raise DatabaseRefused(f"{p}: cannot read the database ({e.strerror})") from None
    if not head:
        raise DatabaseRefused(f"{p}: is an empty file (0 bytes), not a Rejudge database; delete it, or {NEW_DB_HINT}")
    if len(head) < 100 or not head.startswith(SQLITE_MAGIC):
        raise DatabaseRefused(f"{p}: is not an SQLite database (damaged, or another kind of file); {NEW_DB_HINT}")
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(head[28:32], "big")
    header_size_valid = head[24:28] == head[92:96] and pages > 0  # SQLite's own validity rule for this field
    size = p.stat().st_size
    wal = Path(f"{p}-wal")
    if header_size_valid and size < pages * page_size and not (wal.exists() and wal.stat().st_size):
        raise DatabaseRefused(f"{p}: the database is truncated ({size:,} of {pages * page_size:,} bytes); "
                              "restore it from a backup")


class _Inspection(NamedTuple):
    version: int
    applied: list[str]
    tables: set[str]
    application_id: int
    schema_problem: str | None


def _inspect(p: Path, read_only: bool) -> _Inspection:
    """The file's stamps, Rejudge migrations applied, table names and schema problem, read without changing it.

    A read-only connection never rolls back a journal, checkpoints or converts anything, but beside a database
    in WAL mode it creates WAL files and leaves them behind. So a WAL database (closed cleanly, or in use by other
    connections) is read through an ordinary connection, which removes the WAL files again on closing when it is
    the last, or `immutable` / `mode=ro` when the file is read-only; anything else through a `mode=ro` connection.
    """
    if read_only:
        target, uri = (_uri(p), True) if _sidecars(p) else (_uri(p, "immutable=1"), True)
    elif _sidecars(p) or _header(p)[18:20] == b"\x02\x02":
        # WAL mode, maybe in use by other connections: an ordinary connection reads it like any reader (a `mode=ro`
        # probe beside busy WAL files gave "disk I/O error" to concurrent sessions) and, when it is the last one,
        # removes the WAL files it created on closing.
        target, uri = str(p), False
    else:
        target, uri = _uri(p), True
    conn = sqlite3.connect(target, uri=uri, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        applied = ([r[0] for r in conn.execute(f"SELECT name FROM {MIGRATIONS_TABLE} WHERE migration_set = ? "
                                               "ORDER BY rowid", [migrations.name])]
                   if MIGRATIONS_TABLE in tables else [])
        _quick_check(conn, p)
        return _Inspection(version, applied, tables, app_id, schema_problem(conn, applied) if applied else None)
    except sqlite3.OperationalError as e:
        if disk_full(e, p):  # opening a WAL database writes its index (-shm) and WAL files
            raise DatabaseRefused(disk_full_message(p)) from None
        raise DatabaseRefused(f"{p}: cannot read the database (SQLite: {e})") from None
    except sqlite3.DatabaseError as e:
        raise DatabaseRefused(f"{p}: the database is damaged or not a database (SQLite: {e}); restore it from a "
                              "backup") from None
    finally:
        conn.close()


def _quick_check(conn: sqlite3.Connection, p: Path) -> None:
    """Refuse a file whose pages are damaged behind an intact header, before anything reads or writes it.

    `quick_check` reads every page once (about 0.1 s per 40 MB here) but skips the index-content comparison of a full
    `integrity_check`; five problems are enough to refuse. It is skipped when the file is in the very state a
    check passed on (`audit.store.check_record`: any change since, by anyone, and it runs again).
    """
    before = check_record.state(p, settled=True)
    if check_record.is_recorded(p, before):
        return
    problems = [r[0] for r in conn.execute("PRAGMA quick_check(5)")]
    if problems != ["ok"]:
        check_record.forget(p)
        raise DatabaseRefused(f"{p}: the database is damaged ({problems[0][:120]}); it was not changed; restore it "
                              "from a backup")
    if before is not None and check_record.state(p) == before:
        check_record.record(p, before)


def integrity_check(db: Database, path: str | Path) -> dict:
    """SQLite's full `PRAGMA integrity_check` of an open database (every page, and every index against its table:
    what opening skips when the file is unchanged since its last check, and more): `{"database", "ok",
    "problems"}` (at most 20). A sound file is recorded as checked (`audit.store.check_record`)."""
    p = Path(path)
    before = check_record.state(p, settled=True)
    problems = [r[0] for r in db.execute("PRAGMA integrity_check(20)")]
    ok = problems == ["ok"]
    if not ok:
        check_record.forget(p)
    elif before is not None and check_record.state(p) == before:
        check_record.record(p, before)
    return {"database": str(p), "ok": ok, "problems": [] if ok else problems}


_TO_SEAL: list[Database] = []


def seal_on_success(db: Database) -> Database:
    """Have `seal_all` seal this database (a command's: the CLI opens through it)."""
    _TO_SEAL.append(db)
    return db


def seal_all(*, succeeded: bool = True) -> None:
    """`seal` every database given to `seal_on_success`, once (the CLI, after a command succeeded); after a
    command that failed, only close them (as the interpreter's exit would).

    Raises:
        DatabaseRefused: one of them is damaged now.
    """
    while _TO_SEAL:
        db = _TO_SEAL.pop()
        if succeeded:
            seal(db)
        else:
            db.close()


def db_file(db: Database) -> str:
    """The database's main file ("" for a database in memory)."""
    return next((f for _, name, f in db.conn.execute("PRAGMA database_list") if name == "main"), "")


def seal(db: Database) -> None:
    """Close a database this process opened and, if the file changed since its check (this command wrote, or
    another process did), check it as it is left, so the next command that opens it does not read every page
    again (`_quick_check`; the CLI calls this after a command succeeded). A read-only one is just closed.

    Raises:
        DatabaseRefused: the check failed (the file was damaged while the command ran).
    """
    try:
        path = db_file(db)
    except sqlite3.ProgrammingError:  # closed by the command already
        return
    db.close()  # the last connection's close moves the WAL into the file: the state the next command opens
    if not path or getattr(db, "read_only", False):
        return
    p = Path(path)
    if check_record.is_recorded(p, check_record.state(p)):
        return
    conn = sqlite3.connect(str(p), timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        _quick_check(conn, p)
    except DatabaseRefused:
        raise DatabaseRefused(f"{p}: the database is damaged after this command (a check of every page failed); "
                              "restore it from a backup") from None
    finally:
        conn.close()


def _header(p: Path) -> bytes:
    with p.open("rb") as f:
        return f.read(100)


class _WriteLock:
    """BEGIN IMMEDIATE ... COMMIT, so concurrent openers don't both migrate."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        if not exc_type:
            self.conn.execute("COMMIT")
        elif self.conn.in_transaction:  # SQLite rolls back by itself on some errors (a full disk): the original
            self.conn.execute("ROLLBACK")  # error, not "no transaction is active", is what the user must see


def transaction(db: Database) -> _WriteLock:
    """A write transaction that commits everything or nothing."""
    return _WriteLock(db.conn)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def dumps(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


IN_CHUNK = 900
"""Keys bound in one `IN (...)` list: SQLite's default limit on bound parameters is 999."""


def query_in(db: Database, sql: str, keys: Sequence) -> Iterator[dict]:
    """The rows of `sql`, whose `{marks}` is the placeholder list of an `IN`, for every key (in chunks of
    `IN_CHUNK`, so any number of keys binds)."""
    for i in range(0, len(keys), IN_CHUNK):
        chunk = list(keys[i:i + IN_CHUNK])
        yield from db.query(sql.format(marks=",".join("?" * len(chunk))), chunk)


def runs_of_decisions(db: Database, decision_ids: Sequence[int]) -> dict[int, int]:
    """Each decision's run id."""
    return {r["id"]: r["run_id"] for r in query_in(db, "SELECT id, run_id FROM decisions WHERE id IN ({marks})",
                                                   decision_ids)}


def run_row(db: Database, name: str) -> dict:
    """The run's row with JSON columns decoded.

    Raises:
        UnknownRun: no run of that name.
    """
    rows = list(db.query("SELECT * FROM runs WHERE name = ?", [name]))
    if not rows:
        known = [r["name"] for r in db.query("SELECT name FROM runs ORDER BY id DESC LIMIT 6")]
        more = db.execute("SELECT count(*) FROM runs").fetchone()[0] - 5 if len(known) > 5 else 0
        hint = (f"; runs in this database: {', '.join(known[:5])}" + (f" and {more:,} more (`runs` lists them)"
                                                                       if more else "")
                if known else "; this database has no runs")
        shown = repr(name) if len(name) <= 80 else f"{name[:60]!r}... ({len(name):,} characters)"
        raise UnknownRun(f"unknown run {shown}{hint}")
    row = rows[0]
    for k in ("judge_identity", "inputs", "summary", "original_metrics", "original_counts"):
        row[k] = _decoded(row[k])
    return row


_DECODED: LRUCache = LRUCache(8)
"""JSON text -> the marshal bytes of its decoding: the last few large columns read (`_decoded`)."""
_DECODED_LOCK = threading.Lock()
_DECODE_KEPT_FROM = 64 * 1024


def _decoded(text: str) -> object:
    """`json.loads(text)`, a fresh object on every call. A large text seen before (a 500-paper LitXBench run's row
    holds 0.8 MB of JSON, decoded on every read of the run: 8.5 ms, #38) is rebuilt from the `marshal` bytes of its
    first decoding, three times faster; same types, values and key order. Keyed by the text itself, so a changed
    column (a stale run's metrics rebuilt) is decoded afresh; the last few kept."""
    if len(text) < _DECODE_KEPT_FROM:
        return json.loads(text)
    with _DECODED_LOCK:
        kept = _DECODED.get(text)
    if kept is not None:
        return marshal.loads(kept)
    value = json.loads(text)
    with _DECODED_LOCK:
        _DECODED[text] = marshal.dumps(value)
    return value


def list_runs(db: Database) -> list[dict]:
    return [dict(r) | {"inputs": json.loads(r["inputs"]), "summary": json.loads(r["summary"]),
                       "original_metrics": json.loads(r["original_metrics"])}
            for r in db.query("SELECT id, name, task, judge_spec, created, n_docs, n_decisions, inputs, summary, "
                              "original_metrics FROM runs ORDER BY id DESC")]


class SqliteAnswerCache:
    """`scoring.judges.transport.AnswerCache` over the `judge_cache` table (keys already include judge and prompt)."""

    def __init__(self, db: Database, judge: str, identity: dict | None = None) -> None:
        self.db = db
        self.judge = judge
        identity = identity or {}
        self.prompt_hash = identity.get("prompt_hash")
        self.params = dumps(identity["params"]) if "params" in identity else None

    def get_many(self, keys: Sequence[str]) -> dict[str, Answer]:
        out: dict[str, Answer] = {}
        for i in range(0, len(keys), 500):
            chunk = list(keys[i:i + 500])
            q = f"SELECT key, value, raw, rationale, score FROM judge_cache WHERE key IN ({','.join('?' * len(chunk))})"
            for r in self.db.query(q, chunk):
                out[r["key"]] = Answer(r["value"], r["raw"], r["rationale"], r["score"])
        return out

    def put_many(self, answers: dict[str, Answer]) -> None:
        if not answers:
            return
        created = now()
        with transaction(self.db):
            self.db.conn.executemany(
                "INSERT OR REPLACE INTO judge_cache (key, judge, value, raw, rationale, score, created, prompt_hash, "
                "params, prompt_tokens, completion_tokens, retries) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(k, self.judge, a.value, a.raw, a.rationale, a.score, created, self.prompt_hash, self.params,
                  a.prompt_tokens, a.completion_tokens, a.retries) for k, a in answers.items()])


def reviews_version(db: Database, run_id: int) -> tuple[int, int]:
    """(count, newest id) of the reviews the run sees (its own and those settling its questions in other runs):
    changes whenever one is added, imported or deleted.

    Read from the run's stored audited state when it is current (its last applied review is the newest the run
    sees: every write of reviews brings it up to date in its own transaction, `audit.rescoring.apply_reviews`,
    which keeps the count of review rows with it, migration m022); else counted through `run_reviews`, which
    walked every review of the run on each page render (2 s of CPU at a million reviews, #38)."""
    state = db.execute("SELECT last_review, json_extract(review_counts, '$.reviews') FROM audit_state "
                       "WHERE run_id = ?", [run_id]).fetchone()
    if state is not None and state[1] is not None and state[0] == newest_review(db, run_id):
        return state[1], state[0]
    return counted_reviews_version(db, run_id)


def counted_reviews_version(db: Database, run_id: int) -> tuple[int, int]:
    """`reviews_version` counted through the `run_reviews` view (a read of every review the run sees)."""
    n, last = db.execute("SELECT COUNT(*), COALESCE(MAX(id), 0) FROM run_reviews WHERE run_id = ?",
                         [run_id]).fetchone()
    return n, last


def newest_review(db: Database, run_id: int) -> int:
    """The id of the newest review `run_reviews` gives the run (0 if none). `MAX(id)` over that view walked every
    review of the database (2 s of CPU at 1M reviews, #38); here reviews are read newest first and the walk stops
    at the first one the view gives the run (the view's two branches, as conditions)."""
    return db.execute(_NEWEST_REVIEW, [run_id]).fetchone()[0]


_NEWEST_REVIEW = f"""SELECT COALESCE((SELECT v.id FROM reviews v JOIN decisions d1 ON d1.id = v.decision_id
    WHERE ({SETTLES_OWN} AND v.run_id = ?1)
       OR EXISTS (SELECT 1 FROM decisions d2 WHERE {SAME_QUESTION} AND d2.run_id = ?1)
    ORDER BY v.id DESC LIMIT 1), 0)"""


def plan_stamp(db: Database, run_id: int, kind: str) -> tuple[int, str] | None:
    """(row id, creation time) of the run's sampling plan of `kind`, None without one: tells whether there is a plan,
    and which, without decoding it (a 10,000-query retrieval plan lists 683k unit ids: 1.9 s to load, #38)."""
    r = db.execute("SELECT id, created FROM sampling_plans WHERE run_id = ? AND kind = ?", [run_id, kind]).fetchone()
    return (r[0], r[1]) if r else None
