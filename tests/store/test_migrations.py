"""Migrations: a database written before one decision per question (twin decisions) is merged, reviews kept;
migrations import no application code, and the audited state they mark stale is rebuilt with today's code."""

from __future__ import annotations

import json
import subprocess
import sys

from sqlite_utils import Database

from audit.rescoring import audit_run
from audit.review.reviews import add_review
from audit.runs import score_run
from audit.stale import rebuild_stale_runs, stale_runs
from audit.store.database import open_db
from audit.store.migrations import SCHEMA_VERSION, migrations
from audit.views import decisions
from tests.conftest import GOLD, JUDGE_LOG, PRED_MIXED, ROOT

M004 = "m004_one_decision_per_question"


def _make_old_database(path):
    """A database as version 3 wrote it: each orientation of a span pair its own decision, reviews on both."""
    db = open_db(path)
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, f"replay:{JUDGE_LOG}", run="old")
    run_id = db.execute("SELECT id FROM runs WHERE name = 'old'").fetchone()[0]
    d = next(x for x in decisions(db, "old") if x["left"] != x["right"] and x["judge"] == "match")
    cur = db.conn.execute("INSERT INTO decisions (run_id, doc_id, kind, type, left, right, judge_label, detail) "
                          "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                          [run_id, d["doc"], d["kind"], d["type"], d["right"], d["left"], d["judge"],
                           json.dumps({"pred_gold": d["detail"]["gold_pred"], "gold_pred": d["detail"]["pred_gold"]})])
    twin = cur.lastrowid
    add_review(db, "old", d["id"], "no-match", "ana")
    add_review(db, "old", twin, "match", "ana")  # the later review: it must win
    add_review(db, "old", twin, "no-match", "bo")
    db.execute(f"DELETE FROM _sqlite_migrations WHERE name = '{M004}'")
    db.execute("PRAGMA user_version = 3")
    db.conn.close()
    return d, twin


def test_twins_merge_reviews_move_and_conflicts_are_reported(tmp_path):
    path = tmp_path / "old.db"
    d, twin = _make_old_database(path)
    db = open_db(path)
    assert stale_runs(db) == ["old"]  # the migration changed its decisions: its audited state is rebuilt, not kept
    assert audit_run(db, "old").metrics == audit_run(db, "old", rebuild=True).metrics  # reads cope meanwhile
    assert rebuild_stale_runs(db) == ["old"] and stale_runs(db) == []
    decs = {x["id"]: x for x in decisions(db, "old")}
    assert twin not in decs and d["id"] in decs
    kept = decs[d["id"]]
    assert kept["human"] == {"ana": "match", "bo": "no-match"}  # ana's later review won; bo's moved over
    assert len(kept["reviews"]) == 3
    summary = json.loads(db.execute("SELECT summary FROM runs WHERE name = 'old'").fetchone()[0])
    assert any("ana labelled them match and no-match" in n for n in summary["migration_notes"])
    assert db.execute("SELECT n_decisions FROM runs WHERE name = 'old'").fetchone()[0] == len(decs)
    assert audit_run(db, "old").metrics == audit_run(db, "old", rebuild=True).metrics
    state = db.execute("SELECT last_review FROM audit_state").fetchone()[0]
    assert state == db.execute("SELECT MAX(id) FROM reviews").fetchone()[0]


def test_review_import_accepts_either_orientation(tmp_path, db_with_run):
    from audit.review.reviews_io import import_reviews

    d = next(x for x in decisions(db_with_run, "mixed") if x["left"] != x["right"])
    line = {"uid": "u-flip", "doc": d["doc"], "kind": d["kind"], "type": d["type"], "left": d["right"],
            "right": d["left"], "reviewer": "cy", "label": "no-match", "role": "reviewer", "note": None,
            "blind": False, "created": "2026-01-01T00:00:00+00:00"}
    p = tmp_path / "r.jsonl"
    p.write_text(json.dumps(line) + "\n")
    assert import_reviews(db_with_run, "mixed", p)["imported"] == 1
    assert next(x for x in decisions(db_with_run, "mixed") if x["id"] == d["id"])["human"] == {"cy": "no-match"}


def _reviewed_reference(path, reviews: int = 12):
    """A run scored today (one decision per question) with reviews on `reviews` span pairs of unequal strings:
    overruled, confirmed, undone, conflicting and adjudicated ones. Returns the database and the reviews
    [(decision, reviewer, label, role)] in the order they were given."""
    db = open_db(path)
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, f"replay:{JUDGE_LOG}", run="r")
    pairs = [x for x in decisions(db, "r") if x["left"] != x["right"]][:reviews]
    flip = {"match": "no-match", "no-match": "match"}
    given = []
    for i, d in enumerate(pairs):
        given.append((d, "ana", flip[d["judge"]] if i % 3 else d["judge"], "reviewer"))
        if i % 4 == 1:
            given.append((d, "bo", d["judge"], "reviewer"))  # conflicts with ana's overrule
        if i % 5 == 2:
            given.append((d, "ana", None, "reviewer"))  # ana's undo
        if i % 6 == 3:
            given.append((d, "cy", flip[d["judge"]], "adjudicator"))
    for d, who, label, role in given:
        add_review(db, "r", d["id"], label, who, role=role)
    return db, given


def _oldest_schema_copy(reference: Database, path, given) -> None:
    """The reference run as the oldest schema (m001-m003) held it: each span pair of a reviewed decision stored in
    both orientations, the reviews alternating between the two twins (so the later review sits on either)."""
    old = Database(path)
    migrations.apply(old, stop_before=M004)
    for table in ("runs", "documents", "decisions"):
        cols = [c[1] for c in old.execute(f"PRAGMA table_info({table})").fetchall()]
        rows = reference.execute(f"SELECT {', '.join(cols)} FROM {table}").fetchall()
        old.conn.executemany(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", rows)
    twin_of = {}
    for d in {id(d): d for d, *_ in given}.values():
        detail = {"pred_gold": d["detail"]["gold_pred"], "gold_pred": d["detail"]["pred_gold"]}
        twin_of[d["id"]] = old.conn.execute(
            "INSERT INTO decisions (run_id, doc_id, kind, type, left, right, judge_label, detail) SELECT run_id, "
            "doc_id, kind, type, right, left, judge_label, ? FROM decisions WHERE id = ?",
            [json.dumps(detail), d["id"]]).lastrowid
    for n, (d, who, label, role) in enumerate(given):
        old.execute("INSERT INTO reviews (uid, run_id, decision_id, reviewer, label, role, created) "
                    "SELECT ?, run_id, ?, ?, ?, ?, ? FROM decisions WHERE id = ?",
                    [f"u{n}", twin_of[d["id"]] if n % 2 else d["id"], who, label, role,
                     f"2026-01-01T00:00:{n:02d}+00:00", d["id"]])
    old.execute("INSERT INTO audit_state (run_id, last_review, total) SELECT id, 0, original_counts FROM runs")
    old.execute("PRAGMA user_version = 3")
    old.conn.commit()
    old.conn.close()


def test_oldest_schema_with_twins_migrates_to_the_audited_metrics_of_one_decision_per_question(tmp_path):
    reference, given = _reviewed_reference(tmp_path / "today.db")
    expected = audit_run(reference, "r")
    assert expected.metrics != json.loads(reference.execute("SELECT original_metrics FROM runs").fetchone()[0])
    _oldest_schema_copy(reference, tmp_path / "old.db", given)
    db = open_db(tmp_path / "old.db")
    assert db.execute("PRAGMA user_version").fetchone()[0] == reference.execute("PRAGMA user_version").fetchone()[0]
    assert rebuild_stale_runs(db) == ["r"]
    assert [(x["id"], x["effective"], x["human"]) for x in decisions(db, "r")] == \
        [(x["id"], x["effective"], x["human"]) for x in decisions(reference, "r")]
    migrated = audit_run(db, "r")
    assert migrated.metrics == expected.metrics and migrated.counts == expected.counts
    assert migrated.changed_docs == expected.changed_docs
    assert migrated.review_counts == expected.review_counts
    assert audit_run(db, "r", rebuild=True).metrics == expected.metrics


def test_migrations_import_no_application_code():
    code = ("import sys, audit.store.migrations; print(sorted(m for m in sys.modules if m in ('audit.rescoring', "
            "'audit.review.reviews') or m == 'scoring.families' or m.startswith('scoring.families.')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_m017_adds_the_stored_improvements_to_a_database_written_before_it(tmp_path):
    path = tmp_path / "m014.db"
    db = open_db(path)
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, f"replay:{JUDGE_LOG}", run="old")
    db.execute("DROP TABLE judge_improvements")
    db.execute("DELETE FROM _sqlite_migrations WHERE name = 'm017_judge_improvements'")
    db.execute("PRAGMA user_version = 14")
    db.conn.close()
    db = open_db(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert db["judge_improvements"].exists() and db["judge_improvements"].count == 0
    assert [r["name"] for r in db.query("SELECT name FROM runs")] == ["old"]
    db.conn.close()
