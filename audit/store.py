"""The SQLite store (sqlite-utils, WAL): opening, and converting rows to plain values in one place."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from sqlite_utils import Database

from audit.errors import UnknownRun
from audit.migrations import SCHEMA_VERSION, migrations
from scoring.judges.base import Answer

BUSY_TIMEOUT_MS = 15_000  # two reviewers writing at once wait for each other instead of failing


def default_db_path() -> str:
    return os.environ.get("REJUDGE_DB") or "rejudge.db"


def open_db(path: str | Path | None = None) -> Database:
    """Open (creating if needed) a Rejudge database, in WAL mode, with every migration applied."""
    path = str(path or default_db_path())
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    db = Database(conn)
    if path != ":memory:":
        db.enable_wal()
        # In WAL mode NORMAL cannot corrupt the database; only an OS crash may lose the last commits. FULL
        # flushes on every one-row review commit and made concurrent reviewing 3x slower (bench/README.md).
        conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    if migrations.pending(db):
        with _WriteLock(conn):
            if migrations.pending(db):
                migrations.apply(db)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return db


class _WriteLock:
    """BEGIN IMMEDIATE ... COMMIT, so concurrent openers don't both migrate."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.conn.execute("ROLLBACK" if exc_type else "COMMIT")


def transaction(db: Database) -> _WriteLock:
    """A write transaction that commits everything or nothing."""
    return _WriteLock(db.conn)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def dumps(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def run_row(db: Database, name: str) -> dict:
    """The run's row with JSON columns decoded.

    Raises:
        UnknownRun: no run of that name.
    """
    rows = list(db.query("SELECT * FROM runs WHERE name = ?", [name]))
    if not rows:
        known = [r["name"] for r in db.query("SELECT name FROM runs ORDER BY id DESC LIMIT 5")]
        hint = f"; runs in this database: {', '.join(known)}" if known else "; this database has no runs"
        raise UnknownRun(f"unknown run {name!r}{hint}")
    row = rows[0]
    for k in ("judge_identity", "inputs", "summary", "original_metrics", "original_counts"):
        row[k] = json.loads(row[k])
    return row


def list_runs(db: Database) -> list[dict]:
    return [dict(r) | {"inputs": json.loads(r["inputs"]), "summary": json.loads(r["summary"]),
                       "original_metrics": json.loads(r["original_metrics"])}
            for r in db.query("SELECT id, name, task, judge_spec, created, n_docs, n_decisions, inputs, summary, "
                              "original_metrics FROM runs ORDER BY id DESC")]


class SqliteAnswerCache:
    """`scoring.judges.base.AnswerCache` over the `judge_cache` table (keys already include judge and prompt)."""

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
    """(count, newest id) of the run's reviews: changes whenever a review is added or imported."""
    n, last = db.execute("SELECT COUNT(*), COALESCE(MAX(id), 0) FROM reviews WHERE run_id = ?", [run_id]).fetchone()
    return n, last
