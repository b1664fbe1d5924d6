"""The audit decodes a run's original per-query counts once per process (`audit.rescoring.original_counts`, #38):
a run deleted and scored again under the same name, id and document count is not read from what was kept."""

from __future__ import annotations

import json

from audit.rescoring import audit_run
from audit.review.reviews import add_review
from audit.runs import delete_run, score_run
from audit.store.database import open_db, run_row
from tests.conftest import ROOT

DEMO = ROOT / "data" / "retrieval" / "demo_rankings.jsonl"


def test_a_run_scored_again_in_its_place_is_not_read_from_the_kept_counts(tmp_path) -> None:
    lines = DEMO.read_text(encoding="utf-8").splitlines()
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text("\n".join(lines[:30]) + "\n", encoding="utf-8")
    second.write_text("\n".join(lines[30:60]) + "\n", encoding="utf-8")
    db = open_db(tmp_path / "r.db")
    score_run(db, "retrieval", {"pred": str(first)}, "gold-only", run="r")
    old = run_row(db, "r")
    decision = db.execute("SELECT id FROM decisions WHERE run_id = ? ORDER BY id LIMIT 1", [old["id"]]).fetchone()[0]
    add_review(db, "r", decision, "acceptable", "ana")  # the audit reads (and keeps) the first run's counts
    assert audit_run(db, "r").metrics != old["original_metrics"]
    delete_run(db, "r", force=True)
    score_run(db, "retrieval", {"pred": str(second)}, "gold-only", run="r")
    new = run_row(db, "r")
    assert (new["id"], new["n_docs"]) == (old["id"], old["n_docs"])  # same id and size: only the run's time differs
    assert json.dumps(audit_run(db, "r").metrics, sort_keys=True) == json.dumps(new["original_metrics"],
                                                                                 sort_keys=True)
