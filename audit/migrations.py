"""Schema changes, one registered function each; `audit.store.open_db` applies the pending ones.

Never edit a migration that has been applied somewhere; add a new one.
"""

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

migrations = Migrations("rejudge")
SCHEMA_VERSION = 3


@migrations()
def m001_initial(db: Database) -> None:
    db.execute("""CREATE TABLE runs (
        id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, task TEXT NOT NULL, judge_spec TEXT NOT NULL,
        judge_identity TEXT NOT NULL, created TEXT NOT NULL, inputs TEXT NOT NULL, summary TEXT NOT NULL,
        original_metrics TEXT NOT NULL, original_counts TEXT NOT NULL, n_docs INTEGER NOT NULL,
        n_decisions INTEGER NOT NULL)""")
    db.execute("""CREATE TABLE documents (
        run_id INTEGER NOT NULL REFERENCES runs(id), doc_id TEXT NOT NULL, idx INTEGER NOT NULL,
        payload TEXT NOT NULL, counts TEXT NOT NULL, outcome TEXT NOT NULL, PRIMARY KEY (run_id, doc_id))""")
    db.execute("""CREATE TABLE decisions (
        id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id), doc_id TEXT NOT NULL,
        kind TEXT NOT NULL, type TEXT NOT NULL, left TEXT NOT NULL, right TEXT NOT NULL,
        judge_label TEXT NOT NULL, detail TEXT NOT NULL)""")
    db.execute("CREATE UNIQUE INDEX decisions_natural ON decisions(run_id, doc_id, kind, type, left, right)")
    db.execute("""CREATE TABLE reviews (
        id INTEGER PRIMARY KEY, uid TEXT NOT NULL UNIQUE, run_id INTEGER NOT NULL REFERENCES runs(id),
        decision_id INTEGER NOT NULL REFERENCES decisions(id), reviewer TEXT NOT NULL, label TEXT,
        role TEXT NOT NULL DEFAULT 'reviewer', note TEXT, blind INTEGER NOT NULL DEFAULT 0,
        created TEXT NOT NULL)""")
    db.execute("CREATE INDEX reviews_run ON reviews(run_id, decision_id)")
    db.execute("""CREATE TABLE judge_cache (
        key TEXT PRIMARY KEY, judge TEXT NOT NULL, value TEXT NOT NULL, raw TEXT, rationale TEXT,
        score REAL, created TEXT NOT NULL)""")


@migrations()
def m002_incremental_audit(db: Database) -> None:
    """Index reviews by decision, and keep each run's audited state so a review re-counts only its document."""
    db.execute("CREATE INDEX reviews_decision ON reviews(decision_id, id)")
    db.execute("""CREATE TABLE audit_state (
        run_id INTEGER PRIMARY KEY REFERENCES runs(id), last_review INTEGER NOT NULL, total TEXT NOT NULL)""")
    db.execute("""CREATE TABLE effective (
        decision_id INTEGER PRIMARY KEY REFERENCES decisions(id), run_id INTEGER NOT NULL, doc_id TEXT NOT NULL,
        judge_label TEXT NOT NULL, label TEXT NOT NULL, source TEXT NOT NULL, n_humans INTEGER NOT NULL)""")
    db.execute("CREATE INDEX effective_run ON effective(run_id, doc_id)")
    db.execute("""CREATE TABLE doc_audit (
        run_id INTEGER NOT NULL REFERENCES runs(id), doc_id TEXT NOT NULL, counts TEXT NOT NULL,
        outcome TEXT NOT NULL, PRIMARY KEY (run_id, doc_id))""")


@migrations()
def m003_judge_cache_provenance(db: Database) -> None:
    """Record with every cached judge call the prompt template's version hash, the request parameters and tokens."""
    for column, kind in (("prompt_hash", "TEXT"), ("params", "TEXT"), ("prompt_tokens", "INTEGER"),
                         ("completion_tokens", "INTEGER"), ("retries", "INTEGER")):
        db.execute(f"ALTER TABLE judge_cache ADD COLUMN {column} {kind}")
