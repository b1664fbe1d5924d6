"""m020: retrieval runs keyed before retrieval had a gold key (every query shared one, so a question was keyed by its
relation, candidate and positive in every query with that positive) are re-keyed by the application: no review is
lost, a review settles its own query's question only, and a run that shared nothing keeps every number."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pytest

from audit.rescoring import audit_run, rebuild_audit_state
from audit.review.reviews import add_review
from audit.runs import score_run
from audit.stale import rebuild_stale_runs, stale_runs
from audit.store.database import DatabaseRefused, open_db, run_row
from audit.store.migrations import SCHEMA_VERSION, m020_retrieval_question_keys
from audit.views import decisions
from scoring.families import get_task
from scoring.families.base import FamilyBase, decision_qkeys

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "data" / "retrieval" / "demo_rankings.jsonl"
M020 = "m020_retrieval_question_keys"
RUNS = ("a", "a2", "b", "c")
TASK = get_task("retrieval")
ACCEPTABLE, NOT_ACCEPTABLE = TASK.label_schemes["candidate"].labels


def _rows() -> dict[str, list[dict]]:
    """Run a: query X and one other; a2: X again (a second ranker of X: it shares X's questions under either key);
    b: X's twin (another query: other id and text, same relation, positive and candidates, so its questions collided
    with X's under the old key) and one other; c: two queries that share nothing with any run."""
    demo = [json.loads(line) for line in DEMO.read_text().splitlines() if line]
    picked: list[dict] = []
    for r in demo:  # few decisions each (gold at rank 2-4) and distinct positives (no collision among them)
        if 1 <= r["positive_index"] <= 3 and r["positive_id"] not in {p["positive_id"] for p in picked}:
            picked.append(r)
        if len(picked) == 5:
            break
    x, a_other, b_other, c1, c2 = picked
    twin = copy.deepcopy(x)
    twin["id"], twin["query"] = x["id"] + "-twin", x["query"] + " (another query)"
    return {"a": [x, a_other], "a2": [x], "b": [twin, b_other], "c": [c1, c2]}


def _old_qkeys(db) -> list[tuple[str, int]]:
    """(key, decision id) of every decision as the code before retrieval's gold key computed them (the family
    default: the hash of the payload's absent `gold`, one key for every query)."""
    keys = []
    for run_id, doc_id, payload in db.execute("SELECT run_id, doc_id, payload FROM documents").fetchall():
        payload = json.loads(payload)
        rows = db.execute("SELECT id, kind, type, left, right FROM decisions WHERE run_id = ? AND doc_id = ?",
                          [run_id, doc_id]).fetchall()
        asked = [{"kind": k, "type": t, "left": le, "right": r} for _, k, t, le, r in rows]
        old_gold = FamilyBase.gold_key(TASK, payload)
        keys += zip(decision_qkeys(TASK, payload, asked, old_gold), [r[0] for r in rows], strict=True)
    return keys


def _new_qkeys(db) -> dict[int, str]:
    out = {}
    for run_id, doc_id, payload in db.execute("SELECT run_id, doc_id, payload FROM documents").fetchall():
        payload = json.loads(payload)
        rows = db.execute("SELECT id, kind, type, left, right FROM decisions WHERE run_id = ? AND doc_id = ?",
                          [run_id, doc_id]).fetchall()
        asked = [{"kind": k, "type": t, "left": le, "right": r} for _, k, t, le, r in rows]
        out.update(zip([r[0] for r in rows], decision_qkeys(TASK, payload, asked), strict=True))
    return out


def _stored_keys(db) -> dict[int, str | None]:
    return dict(db.execute("SELECT id, qkey FROM decisions").fetchall())


def _reviews(db) -> list[tuple]:
    return db.execute("SELECT * FROM reviews ORDER BY id").fetchall()


def _human(db, run: str, doc: str) -> dict[tuple, dict]:
    """(candidate, positive) -> the human labels a run's decisions of one query show."""
    return {(d["left"], d["right"]): d["human"] for d in decisions(db, run, doc)}


def _old_database(path: Path) -> dict:
    """A database of the schema before m020 with the old (colliding) retrieval keys, its audited state built on
    them, and reviews made then; what it showed, for comparison."""
    db = open_db(path)
    rows = _rows()
    for run, lines in rows.items():
        pred = path.parent / f"{run}.jsonl"
        pred.write_text("".join(json.dumps(r) + "\n" for r in lines))
        score_run(db, "retrieval", {"pred": str(pred)}, "gold-only", run=run)
    old = _old_qkeys(db)
    db.conn.executemany("UPDATE decisions SET qkey = ? WHERE id = ?", old)
    db.conn.commit()
    for run in RUNS:
        rebuild_audit_state(db, run)
    x, twin = rows["a"][0]["id"], rows["b"][0]["id"]
    shared = next(d for d in decisions(db, "a", x) if d["judge"] == NOT_ACCEPTABLE)  # a collided question
    add_review(db, "a", shared["id"], ACCEPTABLE, "ana")
    for run, doc, reviewer in (("b", rows["b"][1]["id"], "bo"), ("c", rows["c"][0]["id"], "cy"),
                               ("c", rows["c"][1]["id"], "ana")):  # reviews that collide with nothing
        add_review(db, run, decisions(db, run, doc)[0]["id"], ACCEPTABLE, reviewer)
    twin_shared = next(d["id"] for d in decisions(db, "b", twin) if (d["left"], d["right"]) == (shared["left"],
                                                                                                 shared["right"]))
    before = {"x": x, "twin": twin, "shared": (shared["left"], shared["right"]), "old": {i: k for k, i in old},
              "new": _new_qkeys(db), "pair": (shared["id"], twin_shared),
              "reviews": _reviews(db), "metrics": {r: audit_run(db, r).metrics for r in RUNS},
              "twin_human": _human(db, "b", twin)}
    db.execute(f"DELETE FROM _sqlite_migrations WHERE name = '{M020}'")
    db.execute("PRAGMA user_version = 17")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    return before


@pytest.fixture
def old(tmp_path) -> tuple[Path, dict]:
    path = tmp_path / "old.db"
    return path, _old_database(path)


def test_the_old_keys_made_a_review_settle_another_query(old):
    """The premise: before m020, X's question and its twin's (another query) had one key, and a's review of it
    showed in b."""
    _, before = old
    x_dec, twin_dec = before["pair"]
    assert before["old"][x_dec] == before["old"][twin_dec] and before["new"][x_dec] != before["new"][twin_dec]
    assert before["twin_human"][before["shared"]] == {"ana": ACCEPTABLE}


def test_upgrade_rekeys_retrieval_keeps_every_review_and_settles_only_its_query(old):
    path, before = old
    db = open_db(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert db.execute("SELECT COUNT(*) FROM runs WHERE qkeys_missing = 1").fetchone()[0] == len(RUNS)
    assert set(_stored_keys(db).values()) == {None}  # until re-keyed, each run sees its own reviews only
    assert stale_runs(db) == list(RUNS)
    assert _human(db, "b", before["twin"])[before["shared"]] == {}
    assert set(rebuild_stale_runs(db)) == set(RUNS) and stale_runs(db) == []
    assert db.execute("SELECT COUNT(*) FROM runs WHERE qkeys_missing = 1").fetchone()[0] == 0
    assert _stored_keys(db) == _new_qkeys(db)
    assert _reviews(db) == before["reviews"]  # no review lost or changed
    assert _human(db, "a", before["x"])[before["shared"]] == {"ana": ACCEPTABLE}
    assert _human(db, "a2", before["x"])[before["shared"]] == {"ana": ACCEPTABLE}  # same query: still shared
    assert _human(db, "b", before["twin"])[before["shared"]] == {}  # another query: no longer settled
    assert audit_run(db, "c").metrics == before["metrics"]["c"]  # c collided with nothing: every number kept
    assert audit_run(db, "a").metrics == before["metrics"]["a"]
    assert audit_run(db, "b").metrics != before["metrics"]["b"]  # b lost the review of another query
    for run in RUNS:  # the stored audited state is what a rebuild from the reviews gives
        assert audit_run(db, run).metrics == audit_run(db, run, rebuild=True).metrics


def test_m020_is_idempotent(old):
    path, _ = old
    db = open_db(path)
    rebuild_stale_runs(db)
    state = (_stored_keys(db), _reviews(db), {r: audit_run(db, r).metrics for r in RUNS},
             db.execute("SELECT * FROM audit_state ORDER BY run_id").fetchall())
    db.conn.close()
    db = open_db(path)  # a second open applies nothing
    assert db.execute("SELECT COUNT(*) FROM _sqlite_migrations WHERE name = ?", [M020]).fetchone()[0] == 1
    assert rebuild_stale_runs(db) == []
    m020_retrieval_question_keys(db)  # and running it again re-keys to the same state
    db.conn.commit()
    assert set(rebuild_stale_runs(db)) == set(RUNS)
    assert (_stored_keys(db), _reviews(db), {r: audit_run(db, r).metrics for r in RUNS},
            db.execute("SELECT * FROM audit_state ORDER BY run_id").fetchall()) == state
    assert run_row(db, "c")["qkeys_missing"] == 0


def test_a_read_only_database_is_left_as_it_is(old):
    path, before = old
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    path.chmod(0o444)
    try:
        with pytest.raises(DatabaseRefused, match="read-only and needs upgrading"):
            open_db(path)
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
        assert not any(Path(f"{path}{s}").exists() for s in ("-wal", "-shm", "-journal"))
    finally:
        path.chmod(0o644)
    db = open_db(path)  # with write access it migrates
    assert db.execute("SELECT COUNT(*) FROM _sqlite_migrations WHERE name = ?", [M020]).fetchone()[0] == 1
    rebuild_stale_runs(db)
    assert _reviews(db) == before["reviews"]
