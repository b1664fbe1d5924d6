"""Migrations: a database written before one decision per question (twin decisions) is merged, reviews kept."""

from __future__ import annotations

import json

from audit.rescoring import audit_run
from audit.reviews import add_review
from audit.runs import score_run
from audit.store import open_db
from audit.views import decisions
from tests.conftest import GOLD, JUDGE_LOG, PRED_MIXED


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
    db.execute("DELETE FROM _sqlite_migrations WHERE name = 'm004_one_decision_per_question'")
    db.execute("PRAGMA user_version = 3")
    db.conn.close()
    return d, twin


def test_twins_merge_reviews_move_and_conflicts_are_reported(tmp_path):
    path = tmp_path / "old.db"
    d, twin = _make_old_database(path)
    db = open_db(path)
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
    from audit.reviews_io import import_reviews

    d = next(x for x in decisions(db_with_run, "mixed") if x["left"] != x["right"])
    line = {"uid": "u-flip", "doc": d["doc"], "kind": d["kind"], "type": d["type"], "left": d["right"],
            "right": d["left"], "reviewer": "cy", "label": "no-match", "role": "reviewer", "note": None,
            "blind": False, "created": "2026-01-01T00:00:00+00:00"}
    p = tmp_path / "r.jsonl"
    p.write_text(json.dumps(line) + "\n")
    assert import_reviews(db_with_run, "mixed", p)["imported"] == 1
    assert next(x for x in decisions(db_with_run, "mixed") if x["id"] == d["id"])["human"] == {"cy": "no-match"}
