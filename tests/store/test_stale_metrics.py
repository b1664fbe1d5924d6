"""Runs whose family's aggregation changed (m011: retrieval's expected tie policy) get their original metrics
re-aggregated from the stored document counts, and their audited state rebuilt."""

from __future__ import annotations

import json
import sqlite3

from audit.runs import score_run
from audit.stale import rebuild_stale_runs
from audit.store.database import open_db
from scoring.families import get_task
from tests.conftest import ROOT

RANKINGS = ROOT / "data" / "retrieval" / "demo_rankings.jsonl"


def test_a_retrieval_run_stored_before_m011_is_re_aggregated(tmp_path):
    path = tmp_path / "old.db"
    db = open_db(path)
    score_run(db, "retrieval", {"pred": str(RANKINGS)}, "gold-only", run="ranks")
    fresh = json.loads(db.execute("SELECT original_metrics FROM runs").fetchone()[0])
    db.conn.close()
    with sqlite3.connect(path) as c:  # the file as the previous release left it: old figures, no m011
        old = dict(fresh, all=dict(fresh["all"], mrr=0.5))
        c.execute("UPDATE runs SET original_metrics = ?", [json.dumps(old)])
        c.execute("ALTER TABLE runs DROP COLUMN metrics_stale")
        c.execute("DELETE FROM _sqlite_migrations WHERE name = 'm011_retrieval_expected_ties'")
        c.execute("PRAGMA user_version = 10")
    c.close()
    db = open_db(path)
    assert db.execute("SELECT metrics_stale FROM runs").fetchone()[0] == 1
    assert rebuild_stale_runs(db) == ["ranks"]
    row = db.execute("SELECT id, original_metrics, metrics_stale FROM runs").fetchone()
    assert row[2] == 0 and json.loads(row[1]) == fresh
    counts = [json.loads(x) for x, in db.execute("SELECT counts FROM documents WHERE run_id = ? ORDER BY idx",
                                                  [row[0]])]
    assert json.loads(row[1]) == json.loads(json.dumps(get_task("retrieval").aggregate(counts, {})))
    assert db.execute("SELECT COUNT(*) FROM audit_state").fetchone()[0] == 1
