"""A run's reviewed decisions are kept per process and brought up to date from the reviews added since (#38: reading
every review on each page render took 9 s at a million reviews), and `reviews_version` comes from the stored
audited state.

Invariant, after every step of random review sets (several reviewers, undos, adjudications, imports that bring
reviews older than the kept ones, reviews made in a run sharing the questions, a run deleted with the reviews it
shared), in every run and under every policy: the kept reviewed decisions equal a full read (`load_reviewed`: same
reviews in the same order, same effective labels in the same order, same decision rows) and `reviews_version`
equals the count and newest id counted through the `run_reviews` view.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from audit.effective import POLICIES
from audit.rescoring import load_reviewed
from audit.review.queue import labelled_count, reviewer_progress, reviewer_progress_db
from audit.review.reviews import add_review, reviewer_labels
from audit.review.reviews_io import import_reviews
from audit.runs import delete_run, score_run
from audit.store.database import counted_reviews_version, open_db, reviews_version, run_row
from audit.views import kept_reviewed, load_view
from tests.conftest import GOLD, PRED_MIXED, PRED_PERFECT, copy_of
from tests.store.conftest import review_unless_nothing_to_undo

REVIEWERS = ("ana", "ben", "cy")


def _ids(db, run: str) -> list[int]:
    return [r[0] for r in db.execute("SELECT id FROM decisions WHERE run_id = ? ORDER BY id", [run_row(db, run)["id"]])]


def _runs(db) -> list[str]:
    return [r[0] for r in db.execute("SELECT name FROM runs ORDER BY id")]


def check(db) -> None:
    for run in _runs(db):
        row = run_row(db, run)
        assert reviews_version(db, row["id"]) == counted_reviews_version(db, row["id"]), run
        for policy in POLICIES:
            kept, full = kept_reviewed(db, row, policy), load_reviewed(db, row["id"], policy)
            assert list(kept.reviews.items()) == list(full.reviews.items()), (run, policy)
            assert list(kept.effective.items()) == list(full.effective.items()), (run, policy)
            assert kept.rows == full.rows, (run, policy)
        # the review queue's progress table, from the tallies kept with them
        full = load_reviewed(db, row["id"])
        decs = [{"human": full.effective[i].human_labels, "judge": full.rows[i]["judge_label"], "reviews": r,
                 "adjudicator": full.effective[i].adjudicator, "effective": full.effective[i].label}
                for i, r in full.reviews.items()]
        expected = [r | {"of": row["n_decisions"]} for r in reviewer_progress(decs)]
        assert reviewer_progress_db(db, load_view(db, run)) == expected, run
        for who in ("dee", *REVIEWERS):
            # a reviewer's labels, and an adjudicator's adjudications (`Effective.labels_by`)
            adjudicated = sum(e.adjudicator == who and who not in e.human_labels for e in full.effective.values())
            own = sum(who in e.human_labels for e in full.effective.values())
            assert labelled_count(db, run, who) == len(reviewer_labels(db, run, who)) == own + adjudicated, (run, who)
        # the per-type and per-document counts kept with them, against every reviewed decision walked afresh
        view = load_view(db, run)
        per_type: dict = {}
        for i, e in full.effective.items():
            d = full.rows[i]
            c = per_type.setdefault((d["kind"], d["type"]), [0, 0, 0])
            c[0] += e.reviewed
            c[1] += e.label != d["judge_label"]
            c[2] += e.source == "conflicted"
        for r in view.review_counts_by_type():
            assert [r["reviewed"], r["overruled"], r["conflicted"]] == per_type.get((r["kind"], r["type"]), [0, 0, 0])
        per_doc = Counter(full.rows[i]["doc_id"] for i, e in full.effective.items() if e.reviewed)
        assert {d["doc"]: d["reviewed"] for d in view.documents()} == {d: per_doc.get(d, 0)
                                                                      for d in view.document_ids()}


def _review(db, rng: random.Random, run: str) -> None:
    dec = rng.choice(_ids(db, run)[:60])  # few decisions: several reviews each, conflicts
    kind = db.execute("SELECT kind FROM decisions WHERE id = ?", [dec]).fetchone()[0]
    labels = ["match", "no-match"] if kind != "relation" else ["match", "no-match"]
    role = "adjudicator" if rng.random() < 0.1 else "reviewer"
    label = None if rng.random() < 0.15 else rng.choice(labels)  # None: an undo of the reviewer's label
    review_unless_nothing_to_undo(db, run, dec, label, rng.choice(REVIEWERS), role=role, blind=rng.random() < 0.2)


def _import(db, rng: random.Random, run: str, path, k: int) -> None:
    """`k` review lines made on `run`'s decisions, dated before every review stored (they sort first)."""
    rid = run_row(db, run)["id"]
    decs = db.execute("SELECT doc_id, kind, type, left, right FROM decisions WHERE run_id = ? ORDER BY id LIMIT 80",
                      [rid]).fetchall()
    with path.open("w", encoding="utf-8") as f:
        for n in range(k):
            doc, kind, typ, left, right = rng.choice(decs)
            f.write(json.dumps({"uid": f"imp-{path.stem}-{n}", "doc": doc, "kind": kind, "type": typ, "left": left,
                                "right": right, "reviewer": rng.choice(("dee", *REVIEWERS)),
                                "label": rng.choice(["match", "no-match"]), "role": "reviewer", "note": None,
                                "blind": False, "created": f"2020-01-0{1 + n % 9}T00:00:00+00:00"}) + "\n")
    import_reviews(db, run, path)


@pytest.mark.parametrize("seed", [1, 2])
def test_kept_reviewed_equals_a_full_read_after_every_step(db_with_run, tmp_path, seed):
    db = db_with_run
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, "exact", run="twin")  # mixed's questions
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_PERFECT)}, "exact", run="perfect")
    rng = random.Random(seed)
    check(db)
    for step in range(45):
        runs = _runs(db)
        if step == 20:
            _import(db, rng, "mixed", tmp_path / f"old{seed}.jsonl", 25)
        elif step == 32 and "twin" in runs:
            delete_run(db, "twin", force=True)  # mixed loses the reviews twin shared with it
        else:
            _review(db, rng, rng.choice(runs))
        check(db)
    # the steps did exercise what the kept state must follow
    mixed = run_row(db, "mixed")["id"]
    sources = {e.source for e in load_reviewed(db, mixed).effective.values()}
    assert {"human", "conflicted", "adjudicated"} <= sources, sources


def test_a_review_through_another_connection_is_seen_at_once(db_with_run, db_path):
    db = db_with_run
    other = open_db(db_path)
    try:
        ids = _ids(db, "mixed")
        view = load_view(db, "mixed")
        assert view.reviewed.reviews == {}
        for n, dec in enumerate(ids[:5]):
            add_review(other, "mixed", dec, "no-match", "ben")
            fresh = load_view(db, "mixed")  # the next render's view, on the first connection
            assert set(fresh.reviewed.reviews) == set(ids[:n + 1])
            assert fresh.audit.review_counts["reviewed"] == n + 1
        assert view.reviewed.reviews == {}  # a view is a snapshot: the kept state is never changed in place
    finally:
        other.conn.close()


@pytest.mark.parametrize("grown", [False, True])
def test_a_copy_moved_over_the_file_is_read_as_its_own_history(db_path, mixed_template, grown):
    """Another copy of the same scored database put at the path (a backup restored), whose reviews have the kept
    count and newest id (`grown`: and then one more, which alone would be read on top of the kept state) but are
    other reviews: what is read is that file's reviews, not the kept ones. (The fast suite found it: a test's
    database copied to the path of an earlier test's, removed once it passed.)"""
    db = open_db(copy_of(mixed_template, db_path))
    ids = _ids(db, "mixed")
    add_review(db, "mixed", ids[0], "no-match", "ana")
    assert set(kept_reviewed(db, run_row(db, "mixed")).reviews) == {ids[0]}
    db.conn.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    db = open_db(copy_of(mixed_template, db_path))
    try:
        add_review(db, "mixed", ids[1], "match", "ben")
        if grown:
            add_review(db, "mixed", ids[2], "match", "ben")
        row = run_row(db, "mixed")
        assert set(kept_reviewed(db, row).reviews) == ({ids[1], ids[2]} if grown else {ids[1]})
        check(db)
    finally:
        db.conn.close()


def test_a_review_reads_only_its_decisions(db_with_run, monkeypatch):
    """After the first read, a review makes the next read load only its decision's reviews."""
    import audit.views as views

    db = db_with_run
    row = run_row(db, "mixed")
    ids = _ids(db, "mixed")
    add_review(db, "mixed", ids[0], "no-match", "ana")
    kept_reviewed(db, row)
    asked: list = []
    real = views.load_reviewed
    monkeypatch.setattr(views, "load_reviewed", lambda *a, **k: asked.append(a[3:]) or real(*a, **k))
    add_review(db, "mixed", ids[7], "match", "ben")
    assert set(kept_reviewed(db, row).reviews) == {ids[0], ids[7]}
    assert asked == [([ids[7]],)]
    # a count that does not add up (reviews deleted behind the state's back) reads everything again
    db.execute("DELETE FROM reviews WHERE decision_id = ?", [ids[0]])
    db.execute("UPDATE audit_state SET review_counts = json_set(review_counts, '$.reviews', 1), last_review = "
               "(SELECT MAX(id) FROM reviews) WHERE run_id = ?", [row["id"]])
    add_review(db, "mixed", ids[9], "match", "ben")
    asked.clear()
    assert set(kept_reviewed(db, row).reviews) == {ids[7], ids[9]}
    assert asked == [()]


def test_the_variant_differences_equal_those_of_every_documents_counts(db_with_run):
    """The overview's strict-variant table compares each distinct counts dict once; the same rows as comparing every
    document's audited counts (decoded afresh), after reviews that change some documents."""
    from scoring.families.chimera import strict
    from ui.families.chimera import _variant_differences

    db = db_with_run
    rng = random.Random(5)
    for n in range(4):
        for dec in rng.sample(_ids(db, "mixed"), 15):
            add_review(db, "mixed", dec, rng.choice(["match", "no-match"]), "ana")
        view = load_view(db, "mixed")
        per_doc = view.audited_doc_counts()
        expected = strict.differing_documents(per_doc)
        assert _variant_differences.__wrapped__(view, n) == (len(per_doc), expected)
        assert view.audited_doc_counts_shared() == per_doc
    assert expected and view.audit.changed_docs  # the reviews did change documents, and some differ


def test_a_boards_runs_read_in_turn_stay_kept(db_with_run, monkeypatch):
    """Five runs read one after another (a board of five systems): after the first round no read is a full one
    (with fewer places kept than runs, each read evicted the run read next and every read was a full one)."""
    import audit.views as views

    db = db_with_run
    runs = ["mixed"] + [f"system-{i}" for i in range(2, 6)]
    for run in runs[1:]:
        score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, "exact", run=run)
    for run in runs:
        add_review(db, run, _ids(db, run)[0], "no-match", "ana")
        kept_reviewed(db, run_row(db, run))
    asked: list = []
    real = views.load_reviewed
    monkeypatch.setattr(views, "load_reviewed", lambda *a, **k: asked.append(a[3:]) or real(*a, **k))
    for step in range(3):
        add_review(db, runs[step], _ids(db, runs[step])[3 + step], "match", "ben")
        for run in runs:
            assert kept_reviewed(db, run_row(db, run)).reviews == load_reviewed(db, run_row(db, run)["id"]).reviews
    assert asked and () not in asked, asked  # () is a full read


def test_a_full_read_of_many_reviews_is_kept_out_of_the_cycle_collector(db_with_run, monkeypatch):
    """From `_FREEZE_AT` reviews, a full read moves what is alive to the permanent generation (`gc.freeze`): full
    collections then skip a million reviews' objects; below it, nothing is frozen."""
    import gc

    import audit.views as views

    db = db_with_run
    ids = _ids(db, "mixed")
    for dec in ids[:3]:
        add_review(db, "mixed", dec, "no-match", "ana")
    gc.unfreeze()
    try:
        monkeypatch.setattr(views, "_FREEZE_AT", 4)
        kept_reviewed(db, run_row(db, "mixed"))
        assert gc.get_freeze_count() == 0  # 3 reviews: under the mark
        add_review(db, "mixed", ids[5], "match", "ben")
        views._KEPT.clear()  # the next read is a full one
        reviewed = kept_reviewed(db, run_row(db, "mixed"))
        assert gc.get_freeze_count() > 0 and len(reviewed.reviews) == 4
    finally:
        gc.unfreeze()
