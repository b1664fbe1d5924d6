"""A review settles a question, not a run (issue 36 §1).

Invariant, on random review sets made in random runs: for every run, the audited state (stored incrementally, and
rebuilt from all reviews) equals the family's own counting with the judge's answers replaced by the effective
labels, where a decision's reviews are every review of any decision asking the same question (same family, same
gold content of the document, same `question_key`) in any run. The oracle groups reviews by keys it computes from
the documents' payloads itself, never from the store's `qkey` column.
"""

from __future__ import annotations

import csv
import json
import math
import random
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from audit.demo import DATA
from audit.effective import effective_labels
from audit.errors import AuditError
from audit.rescoring import audit_run, rebuild_audit_state, run_options
from audit.review.reviews import add_review
from audit.runs import delete_run, score_run
from audit.stale import rebuild_stale_runs
from audit.store.database import open_db, run_row
from audit.views import decisions
from scoring.families import TASKS
from scoring.families.base import content_hash
from tests.conftest import GOLD
from tests.store.conftest import review_unless_nothing_to_undo

PAIRS = {"chimera": ["demo-chimera-mixed", "demo-chimera-smollm2"],
         "litxbench": ["demo-litxbench-drop-meas30", "demo-litxbench-process-perturb"]}


def _score_demos(db, family: str) -> list[str]:
    fam = TASKS[family]
    names = []
    for demo in fam.demo_runs(DATA):
        if demo.name in PAIRS[family]:
            score_run(db, family, demo.inputs, demo.judge, run=demo.name)
            names.append(demo.name)
    return names


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("shared") / "shared.db"
    db = open_db(path)
    for family in PAIRS:
        _score_demos(db, family)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    return path


@pytest.fixture
def db(template, tmp_path):
    path = tmp_path / "db.db"
    shutil.copyfile(template, path)
    d = open_db(path)
    yield d
    d.conn.close()


def _payloads(db, run: str) -> dict[str, dict]:
    rid = run_row(db, run)["id"]
    return {doc: json.loads(p) for doc, p in db.execute("SELECT doc_id, payload FROM documents WHERE run_id = ?",
                                                        [rid])}


def _oracle_key(fam, payload: dict, d: dict) -> str:
    return content_hash([fam.name, fam.gold_key(payload), fam.question_key(payload, d)])


_KEYS: dict[str, dict[int, str]] = {}


def _oracle_keys(db, runs: list[str]) -> dict[int, tuple[str, str, str]]:
    """Each current decision's (run, kind, oracle key), in the runs' decision order. A decision's key never changes,
    so it is worked out once per database copy (a LitXBench key takes a paper's canonical JSON: 25 of the 33 s this
    file's longest test took when every step worked them all out again); a review can add decisions (LitXBench
    re-matches below an overruled match), whose keys are worked out when they first appear."""
    known = _KEYS.setdefault(db.execute("PRAGMA database_list").fetchone()[2], {})
    fam = TASKS[run_row(db, runs[0])["task"]]
    out = {}
    for r in runs:
        payloads = None
        for d in decisions(db, r):
            if d["id"] not in known:
                payloads = payloads or _payloads(db, r)
                known[d["id"]] = _oracle_key(fam, payloads[d["doc"]], d)
            out[d["id"]] = (r, d["kind"], known[d["id"]])
    return out


def _close(a, b, where=""):
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), (where, sorted(set(a) ^ set(b)))
        for k in a:
            _close(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _close(x, y, f"{where}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), (where, a, b)
    else:
        assert a == b, (where, a, b)


def check_invariant(db, runs: list[str]) -> None:
    """Every run's audited metrics and counts equal the family's counting under labels from all shared reviews."""
    rows = {r: run_row(db, r) for r in runs}
    fam = TASKS[rows[runs[0]]["task"]]
    payloads = {r: _payloads(db, r) for r in runs}
    decs = {r: list(decisions(db, r)) for r in runs}
    key_of = {i: key for i, (_, _, key) in _oracle_keys(db, runs).items()}
    by_key: dict[str, list[dict]] = defaultdict(list)
    for r in db.query("SELECT id, decision_id, reviewer, label, role, blind, note, created FROM reviews "
                      "ORDER BY created, id"):
        if r["decision_id"] in key_of:
            by_key[key_of[r["decision_id"]]].append(r)
    for run in runs:
        judge = {d["id"]: d["judge"] for d in decs[run]}
        reviews = {d["id"]: by_key[key_of[d["id"]]] for d in decs[run] if by_key.get(key_of[d["id"]])}
        eff = effective_labels(judge, reviews)
        per_doc = []
        for doc, payload in sorted(payloads[run].items(), key=lambda kv: kv[0]):
            labels = {(d["kind"], d["type"], d["left"], d["right"]): (eff[d["id"]].label if d["id"] in eff
                                                                      else d["judge"])
                      for d in decs[run] if d["doc"] == doc}
            per_doc.append(fam.counts(payload, labels))
        want = fam.aggregate(per_doc, run_options(rows[run]))
        for rebuild in (False, True):
            got = audit_run(db, run, rebuild=rebuild)
            _close(got.metrics, want, f"{run} rebuild={rebuild}")
        # the review counts stored with the state (m022) are a recount of every review the run sees
        assert audit_run(db, run).review_counts == audit_run(db, run, rebuild=True).review_counts, run


def _random_reviews(db, runs: list[str], rng: random.Random, n: int) -> None:
    fam = TASKS[run_row(db, runs[0])["task"]]
    shared = {}
    for i, (r, kind, key) in _oracle_keys(db, runs).items():
        shared.setdefault(key, []).append((r, {"id": i, "kind": kind}))
    keys = [k for k, v in shared.items() if len({r for r, _ in v}) > 1]
    assert keys, "the demo runs share no question"
    everything = [x for v in shared.values() for x in v]
    for _ in range(n):
        # mostly questions two runs share, reviewed in either run
        run, d = rng.choice(shared[rng.choice(keys)]) if rng.random() < 0.8 else rng.choice(everything)
        labels = fam.label_schemes[d["kind"]].labels
        who = rng.choice(["ana", "bo", "cy"])
        label = None if rng.random() < 0.1 else rng.choice(labels)  # None: withdraw the last label
        role = "adjudicator" if rng.random() < 0.1 else "reviewer"
        review_unless_nothing_to_undo(db, run, d["id"], label, who, role=role)


@pytest.mark.parametrize("family", list(PAIRS))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_audited_equals_the_scorer_with_every_shared_review(db, family, seed):
    runs = PAIRS[family]
    _random_reviews(db, runs, random.Random(seed), 60)
    check_invariant(db, runs)


@pytest.mark.parametrize("family", list(PAIRS))
def test_after_every_single_review_the_stored_state_equals_a_recount(db, family):
    """The stored state is brought up to date a review at a time (only the changed question's reviews are read):
    after each, in every run sharing the question, it equals the state recomputed from every review."""
    runs, rng = PAIRS[family], random.Random(4)
    # a LitXBench recount re-solves every paper of both runs (about 0.8 s a step): 5 steps there (the other
    # LitXBench tests here check the state after many random reviews)
    for _ in range(30 if family == "chimera" else 5):
        _random_reviews(db, runs, rng, 1)
        for run in runs:
            inc, full = audit_run(db, run), audit_run(db, run, rebuild=True)
            assert (inc.metrics, inc.counts, inc.changed_docs, inc.review_counts) == \
                (full.metrics, full.counts, full.changed_docs, full.review_counts), run
    check_invariant(db, runs)


def test_a_review_in_one_run_changes_the_other_runs_audited_metrics(db):
    a, b = PAIRS["chimera"]
    fam = TASKS["chimera"]
    pa, pb = _payloads(db, a), _payloads(db, b)
    keys_b = {_oracle_key(fam, pb[d["doc"]], d): d for d in decisions(db, b)}
    d_a = next(d for d in decisions(db, a)
               if (k := _oracle_key(fam, pa[d["doc"]], d)) in keys_b and keys_b[k]["judge"] == "match")
    before = audit_run(db, b).metrics
    add_review(db, a, d_a["id"], "no-match", "ana")
    assert audit_run(db, b).metrics != before
    shared = next(d for d in decisions(db, b) if d["id"] == keys_b[_oracle_key(fam, pa[d_a["doc"]], d_a)]["id"])
    assert shared["effective"] == "no-match" and shared["human"] == {"ana": "no-match"}
    # the review keeps the run it was made in
    assert db.execute("SELECT run_id FROM reviews").fetchall() == [(run_row(db, a)["id"],)]
    check_invariant(db, [a, b])


def test_runs_on_different_gold_never_share(db, tmp_path):
    """A third CHIMERA run whose gold text differs for one abstract: the reviews of that abstract stay home."""
    rows = list(csv.DictReader(GOLD.open(encoding="utf-8", newline="")))
    fam = TASKS["chimera"]
    a = PAIRS["chimera"][0]
    pa = _payloads(db, a)
    reviewed_doc = next(d["doc"] for d in decisions(db, a))
    gold = tmp_path / "eval.csv"
    with gold.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            if r["paper_id"] == reviewed_doc:
                r = {**r, "text": r["text"] + " (revised)"}
            w.writerow(r)
    demo = fam.demo_runs(DATA)[0]
    score_run(db, "chimera", {**demo.inputs, "gold": str(gold)}, demo.judge, run="other-gold")
    other = {d["doc"]: d for d in decisions(db, "other-gold")}
    pc = _payloads(db, "other-gold")
    assert fam.gold_key(pc[reviewed_doc]) != fam.gold_key(pa[reviewed_doc]), "the gold text was not changed"
    d = next(d for d in decisions(db, a) if d["doc"] == reviewed_doc)
    add_review(db, a, d["id"], "no-match" if d["judge"] == "match" else "match", "ana")
    assert all(not x["human"] for x in decisions(db, "other-gold") if x["doc"] == reviewed_doc)
    assert other  # the run has decisions at all
    # an untouched abstract of the same run still shares with run a
    check_invariant(db, [a, "other-gold"])


def test_a_database_keyed_later_keeps_every_review_and_shares_them(db):
    """A database from before question keys (keys unset, runs marked): nothing changes until the keys are filled;
    then every review is kept and counts in every run that asks its question."""
    a, b = PAIRS["chimera"]
    _random_reviews(db, [a, b], random.Random(9), 40)
    n_reviews = db.execute("SELECT COUNT(*) FROM reviews").fetchone()[0]
    db.execute("UPDATE decisions SET qkey = NULL")
    db.execute("UPDATE runs SET qkeys_missing = 1")
    db.execute("DELETE FROM audit_state")
    for run in (a, b):
        rebuild_audit_state(db, run)  # before the keys: each run sees its own reviews only
    own = {r: {d["id"] for d in decisions(db, r) if d["reviews"]} for r in (a, b)}
    made_in = {r: {i for i, in db.execute("SELECT DISTINCT decision_id FROM reviews WHERE run_id = ?",
                                           [run_row(db, r)["id"]])} for r in (a, b)}
    assert own == made_in
    assert {a, b} <= set(rebuild_stale_runs(db))
    assert db.execute("SELECT COUNT(*) FROM decisions WHERE qkey IS NULL").fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM reviews").fetchone()[0] == n_reviews
    check_invariant(db, [a, b])


def _state_of(db, run: str) -> tuple:
    audit = audit_run(db, run)
    return ([(d["id"], d["effective"], d["human"], d["source"]) for d in decisions(db, run)], audit.metrics,
            audit.counts, audit.review_counts)


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_deleting_a_run_keeps_every_label_the_other_runs_had(db, seed):
    """A review settles its question in every run that asks it: deleting the run it was made in moves it to a run
    that asks the question, so every other run keeps its labels, audited metrics and counts exactly; only the
    reviews of questions no other run asks go, and the runs are recounted."""
    a, b = PAIRS["chimera"]
    _random_reviews(db, [a, b], random.Random(seed), 40)
    made_in_a = db.execute("SELECT COUNT(*) FROM reviews WHERE run_id = ?", [run_row(db, a)["id"]]).fetchone()[0]
    db.execute("UPDATE reviews SET sampled = 1 WHERE run_id = ? AND id % 2 = 0", [run_row(db, a)["id"]])  # a's draws
    total = db.execute("SELECT COUNT(*) FROM reviews").fetchone()[0]
    before = _state_of(db, b)
    result = delete_run(db, a, force=True)
    assert result["runs_recounted"] == [b] and set(result["reviews_moved"]) == {b}
    moved = result["reviews_moved"][b]
    assert moved > 0 and moved + result["reviews_deleted"] == made_in_a
    assert db.execute("SELECT COUNT(*) FROM reviews").fetchone()[0] == total - result["reviews_deleted"]
    assert _state_of(db, b) == before
    assert db.execute("SELECT COUNT(*) FROM reviews WHERE run_id = ? AND sampled = 1", [run_row(db, b)["id"]]
                      ).fetchone()[0] == 0  # moved reviews are not the other run's sample draws
    check_invariant(db, [b])


def test_a_run_whose_reviews_all_move_is_deleted_without_an_export(db):
    a, b = PAIRS["chimera"]
    keys_b = {d["qkey"] for d in db.query("SELECT qkey FROM decisions WHERE run_id = ?", [run_row(db, b)["id"]])}
    shared = next(d for d in db.query("SELECT id, qkey FROM decisions WHERE run_id = ?", [run_row(db, a)["id"]])
                  if d["qkey"] in keys_b)
    alone = next(d for d in db.query("SELECT id, qkey FROM decisions WHERE run_id = ?", [run_row(db, a)["id"]])
                 if d["id"] != shared["id"])
    db.execute("UPDATE decisions SET qkey = 'asked only here' WHERE id = ?", [alone["id"]])  # both runs ask the same
    add_review(db, a, alone["id"], "match", "ana")
    with pytest.raises(AuditError, match="has 1 review of a question no other run asks"):
        delete_run(db, a)
    add_review(db, a, alone["id"], "no-match", "bo")
    with pytest.raises(AuditError, match="has 2 reviews of questions no other run asks"):  # it said "1 review … askss"
        delete_run(db, a)
    db.execute("DELETE FROM reviews")
    for run in (a, b):
        rebuild_audit_state(db, run)
    add_review(db, a, shared["id"], "match", "ana")
    result = delete_run(db, a)  # nothing would be lost: no export asked for
    assert result["reviews_moved"] == {b: 1} and result["reviews_deleted"] == 0


def test_delete_run_says_which_plans_and_sample_draws_went_with_it(db):
    """Its answer named reviews moved and deleted but not the plan and draws it dropped (moved reviews become
    hand-picked in the other run, silently)."""
    from audit.review.sampling import create_plan, next_sample

    a, _ = PAIRS["chimera"]
    create_plan(db, a, seed=0)
    pick = next_sample(db, a)
    for dec_id in pick["decisions"]:
        add_review(db, a, dec_id, "match", "ana", sampled=True)
    out = delete_run(db, a, force=True)
    assert out["sampling_plans_deleted"] == 1 and out["sample_draws_dropped"] == len(pick["decisions"])


@pytest.mark.parametrize("seed", [3, 4])
def test_the_file_delete_run_wrote_imports_back_into_the_run_scored_again(db, tmp_path, seed):
    """`delete-run --exported FILE` then scoring the run again: importing FILE was refused at its first moved review
    ("already stored for run …: reviews exported from one run cannot be imported into another run"), so the deleted
    reviews could not come back. A moved review is the same review of the same question: it is skipped, the others
    come back, and the database holds every review it had."""
    from audit.review.reviews_io import export_reviews, import_reviews
    from audit.runs import export_marks

    a, b = PAIRS["chimera"]
    _random_reviews(db, [a, b], random.Random(seed), 40)
    ids_a = [d for d, in db.execute("SELECT id FROM decisions WHERE run_id = ?", [run_row(db, a)["id"]])]
    alone = random.Random(seed).sample(ids_a, 3)
    for i, d in enumerate(alone):  # questions only a asks (the two runs ask the same ones)
        db.execute("UPDATE decisions SET qkey = ? WHERE id = ?", [f"asked only in a {i}", d])
    for run in (a, b):
        rebuild_audit_state(db, run)
    for d in alone:
        add_review(db, a, d, "match", "cy")
    uids = {u for u, in db.execute("SELECT uid FROM reviews")}
    marks = export_marks(db, a)
    out = tmp_path / "a.reviews.jsonl"
    out.write_text(export_reviews(db, a), encoding="utf-8")
    result = delete_run(db, a, exported=marks)
    assert result["reviews_moved"] and result["reviews_deleted"]
    demo = next(d for d in TASKS["chimera"].demo_runs(DATA) if d.name == a)
    score_run(db, "chimera", demo.inputs, demo.judge, run=a)
    got = import_reviews(db, a, out)
    assert got["skipped_duplicates"] == sum(result["reviews_moved"].values())
    assert got["imported"] == result["reviews_deleted"] >= 3
    assert {u for u, in db.execute("SELECT uid FROM reviews")} == uids  # every review is back, none twice
