"""Partial audits through the store: plan, sample queue, estimate (audit/review/sampling.py)."""

from __future__ import annotations

import json
import random

import pytest

from audit.errors import AuditError
from audit.rescoring import audit_run
from audit.review.reviews import add_review
from audit.review.sampling import create_plan, estimate, load_plan, next_sample
from audit.store.database import db_file, open_db
from audit.views import as_view, decisions
from devtools.sqlite_files import copy_db, twin_orders


def _review_block(db, pick, rng, sampled=True):
    for dec_id in pick["decisions"]:
        add_review(db, "mixed", dec_id, rng.choice(["match", "no-match"]), "ana", sampled=sampled)


def test_estimate_before_review_says_insufficient_never_zero(db_with_run):
    create_plan(db_with_run, "mixed", seed=3)
    est = estimate(db_with_run, "mixed")
    exact = {"/".join(c.path) for c in as_view(db_with_run, "mixed").task.headline if not c.reviewable}
    assert exact and exact < set(est)
    for key, v in est.items():
        if key in exact:  # no review can move it: its value, exact (tests/report/test_exact_estimate_shown.py)
            assert v["ci"] == [v["estimate"]] * 2 and v["estimate"] is not None
        else:
            assert v["estimate"] is None and v["ci"] is None and v["note"].startswith("insufficient reviews")


def test_a_plan_is_fixed_before_review(db_with_run):
    create_plan(db_with_run, "mixed", seed=3)
    with pytest.raises(AuditError, match="already has a sampling plan"):
        create_plan(db_with_run, "mixed", seed=4)
    with pytest.raises(AuditError, match="one sampling plan for every decision kind, which covers entity_pair"):
        estimate(db_with_run, "mixed", kind="entity_pair")


def test_plan_is_reproducible_from_its_seed(db_with_run, tmp_path):
    create_plan(db_with_run, "mixed", seed=11)
    a = load_plan(db_with_run, "mixed")
    db_with_run.execute("DELETE FROM sampling_plans")
    create_plan(db_with_run, "mixed", seed=11)
    assert load_plan(db_with_run, "mixed") == a


def test_full_review_through_the_sample_queue_gives_the_audited_score_exactly(db_with_run):
    """Invariant: at full review the estimate equals the audited score and its interval has zero width."""
    db = db_with_run
    create_plan(db, "mixed", seed=5)
    rng = random.Random(5)
    served = 0
    while (pick := next_sample(db, "mixed")) is not None:
        _review_block(db, pick, rng)
        served += 1
    assert served == len(load_plan(db, "mixed").blocks)
    audited = audit_run(db, "mixed").metrics
    for path, e in estimate(db, "mixed").items():
        section, t, metric = path.split("/")
        assert e["estimate"] == pytest.approx(audited[section][t][metric], abs=1e-12)
        assert e["ci"][0] == pytest.approx(e["ci"][1], abs=1e-12)
        assert e["n_reviewed"] == e["n_total"]


def test_hand_picked_reviews_never_enter_as_sample_draws(db_with_run):
    db = db_with_run
    create_plan(db, "mixed", seed=5)
    doc = next_sample(db, "mixed")["doc"]
    for d in decisions(db, "mixed", doc):
        add_review(db, "mixed", d["id"], "no-match", "bo")  # picked by hand, not through the queue
    e = next(iter(estimate(db, "mixed").values()))
    assert e["n_documents_sampled"] == 0
    assert next_sample(db, "mixed")["doc"] != doc  # a known block is not served again


def test_merging_reviews_keeps_the_sample_and_its_estimate(db_with_run, tmp_path):
    """Invariant: exporting a sampled audit's reviews and importing them into another database holding the same run
    and plan gives the same estimate (the `sampled` flag travels with each review)."""
    from audit.review.reviews_io import export_reviews, import_reviews
    from audit.runs import score_run
    from tests.conftest import GOLD, JUDGE_LOG, PRED_MIXED

    db = db_with_run
    create_plan(db, "mixed", seed=9)
    rng = random.Random(9)
    for _ in range(35):
        pick = next_sample(db, "mixed")
        _review_block(db, pick, rng)
    before = estimate(db, "mixed")
    assert any(v["ci"] is not None for v in before.values())
    f = tmp_path / "reviews.jsonl"
    f.write_text(export_reviews(db, "mixed"))
    other = open_db(tmp_path / "other.db")
    score_run(other, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, f"replay:{JUDGE_LOG}", run="mixed")
    create_plan(other, "mixed", seed=9)
    import_reviews(other, "mixed", f)
    after = estimate(other, "mixed")
    for path, e in before.items():
        assert after[path]["n_documents_sampled"] == e["n_documents_sampled"] > 0
        assert after[path]["estimate"] == pytest.approx(e["estimate"], abs=1e-12)
        assert after[path]["ci"] == pytest.approx(e["ci"], abs=1e-12)


def test_the_queue_aims_at_a_metric_reviews_can_move(db_with_run):
    """CHIMERA's first headline number (classification F1) takes no judge; the queue must not aim at it."""
    from audit.views import as_view

    db = db_with_run
    create_plan(db, "mixed", seed=2)
    task = as_view(db, "mixed").task
    assert not task.headline[0].reviewable
    nxt = next_sample(db, "mixed")
    assert nxt["target_metric"] == "entities/avg/f1"
    assert next_sample(db, "mixed", metric="relations/avg/f1")["target_metric"] == "relations/avg/f1"
    with pytest.raises(AuditError, match="not moved by any review"):
        next_sample(db, "mixed", metric="classification/avg/f1")
    with pytest.raises(AuditError, match="not a headline metric"):
        next_sample(db, "mixed", metric="entities/avg/nope")
    # the target drives the advice: after the stratum minimums, more reviews are asked for, not "0 more"
    rng = random.Random(2)
    for _ in range(12):
        _review_block(db, next_sample(db, "mixed"), rng)
    assert next_sample(db, "mixed")["more_to_target"] > 0


def test_estimate_reports_the_power_tuned_estimate_and_its_lambda(db_with_run):
    db = db_with_run
    create_plan(db, "mixed", seed=4)
    rng = random.Random(4)
    for _ in range(40):
        _review_block(db, next_sample(db, "mixed"), rng)
    e = estimate(db, "mixed")["entities/avg/f1"]
    tuned = e["power_tuned"]
    assert tuned["lambda"] is not None and 0 <= tuned["lambda"] <= 1
    assert tuned["ci"][0] <= tuned["estimate"] <= tuned["ci"][1]
    # random reviewer labels make the judge uninformative: the tuned interval is not wider than the difference one
    assert tuned["ci"][1] - tuned["ci"][0] <= (e["ci"][1] - e["ci"][0]) * 1.05


def test_estimate_labels_both_intervals_and_the_advice_aims_at_the_anytime_one(db_with_run):
    """`ci` is the fixed-n interval, `anytime` the confidence sequence around the same point (never narrower); the
    queue's stopping advice targets the anytime interval (the reviewer stops on it: optional stopping)."""
    db = db_with_run
    create_plan(db, "mixed", seed=4)
    rng = random.Random(4)
    for _ in range(40):
        _review_block(db, next_sample(db, "mixed"), rng)
    e = estimate(db, "mixed")["entities/avg/f1"]
    assert e["interval"] == "fixed-n" and e["anytime"]["interval"] == "anytime"
    assert e["anytime"]["estimate"] == e["estimate"]
    lo, hi = e["anytime"]["ci"]
    assert lo <= e["ci"][0] <= e["ci"][1] <= hi and hi - lo > e["ci"][1] - e["ci"][0]
    assert next_sample(db, "mixed")["target_interval"] == "anytime"


def test_the_cli_estimate_says_which_interval_is_which(db_with_run, capsys):
    import json

    from audit.cli import main

    db = db_with_run
    path = db_file(db)
    create_plan(db, "mixed", seed=4)
    assert main(["estimate", "--db", path, "--run", "mixed"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {e["interval"] for e in out.values()} == {"fixed-n"}
    assert {e["anytime"]["interval"] for e in out.values()} == {"anytime"}
    with pytest.raises(SystemExit):
        main(["estimate", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "fixed-n interval" in help_text and "however you decide when to stop" in help_text


def test_estimate_says_per_stratum_what_its_variance_rests_on(db_with_run):
    """Every stratum of the plan is named with its assumption: its own sample, the Jeffreys prior where none of its
    sampled documents differs, or fully reviewed (exact) once the queue has served it whole."""
    db = db_with_run
    create_plan(db, "mixed", seed=4)
    strata = set(load_plan(db, "mixed").stratum_of().values())
    rng = random.Random(4)
    for _ in range(30):
        _review_block(db, next_sample(db, "mixed"), rng)
    said = estimate(db, "mixed")["entities/avg/f1"]["strata"]
    assert strata <= set(said)
    for name in strata:
        assert said[name].startswith(("fully reviewed", "none of its", "1 reviewed", "no reviewed")) or \
            " sampled blocks differ: Jeffreys rate " in said[name], said[name]
    while (pick := next_sample(db, "mixed")) is not None:
        _review_block(db, pick, rng)
    done = estimate(db, "mixed")["entities/avg/f1"]["strata"]
    assert all(done[name].startswith("fully reviewed") for name in strata)


def test_the_estimate_counts_sampled_documents_not_documents_without_decisions(db_with_run):
    """Issue 39 point 5: after 40 sampled documents the Scores page said "187 of 216 documents reviewed" (the 147
    documents without decisions counted as reviewed); every surface now shows the one sentence of
    `audit.review.coverage`."""
    from audit.review.coverage import coverage_text

    db = db_with_run
    create_plan(db, "mixed", seed=4)
    rng = random.Random(4)
    for _ in range(40):
        _review_block(db, next_sample(db, "mixed"), rng)
    planned = len(load_plan(db, "mixed").blocks)
    for e in estimate(db, "mixed").values():
        none = e["n_total"] - planned
        assert none > 0 and e["n_documents_sampled"] == 40
        assert e["documents"] == f"40 sampled documents (of {planned} with decisions; {none} have none)"
        assert e["documents"] == coverage_text(e["coverage"]) == e["coverage"]["text"]
    # a hand-reviewed document of the plan is named apart, never as a sampled one
    pick = next_sample(db, "mixed")
    _review_block(db, pick, rng, sampled=False)
    e = next(iter(estimate(db, "mixed").values()))
    assert e["documents"].startswith("40 sampled documents") and e["documents"].endswith(
        "; 1 more reviewed whole outside the sample")


def test_a_drawn_document_waiting_for_an_adjudicator_does_not_stall_the_sample_queue(db_with_run):
    # a document reviewed whole whose reviewers disagree is drawn but not settled: the queue served it again and
    # again and refused every label on the next document. It now moves on (to the draw an immediate adjudication
    # would give), accepts labels there as draws, names the waiting document, and the estimate says it is left out
    create_plan(db_with_run, "mixed", seed=3)
    pick = next_sample(db_with_run, "mixed")
    assert pick["conflicted"] == [] and pick["waiting_for_adjudication"] == []
    first = pick["decisions"][0]
    for dec_id in pick["decisions"]:
        add_review(db_with_run, "mixed", dec_id, "match", "ana", sampled=True)
    add_review(db_with_run, "mixed", first, "no-match", "bo", sampled=True)
    moved = next_sample(db_with_run, "mixed")
    assert moved["doc"] != pick["doc"] and moved["waiting_for_adjudication"] == [pick["doc"]]
    assert f"1 drawn document ({pick['doc']}) waiting for an adjudicator" in moved["why"]
    assert moved["sampled_documents"] == 0  # not settled: not yet in the estimate
    reviewable = {"/".join(c.path) for c in as_view(db_with_run, "mixed").task.headline if c.reviewable}
    for key, e in estimate(db_with_run, "mixed").items():
        if key not in reviewable:  # the exact cell (no review moves it) waits for nobody
            assert e["waiting_for_adjudication"] == [] and "adjudicator" not in e["note"]
            continue
        assert e["waiting_for_adjudication"] == [pick["doc"]] and "waiting for an adjudicator" in e["note"]
        assert "the interval rests on the settled documents alone" in e["note"]
    for dec_id in moved["decisions"]:  # the next draw takes sampled labels (they were refused)
        add_review(db_with_run, "mixed", dec_id, "match", "ana", sampled=True)
    # an adjudicator settles the first: both documents are draws, nothing waits
    add_review(db_with_run, "mixed", first, "no-match", "cy", role="adjudicator", sampled=True)
    after = next_sample(db_with_run, "mixed")
    assert after["sampled_documents"] == 2 and after["waiting_for_adjudication"] == []
    assert after["doc"] not in (pick["doc"], moved["doc"])


def test_the_order_after_a_waiting_document_is_the_order_an_immediate_adjudication_gives(db_with_run, tmp_path):
    # the design stays label-blind: the documents served after one that waits for an adjudicator are the documents
    # served had it been adjudicated at once (the order reads which documents were drawn, not what was said)
    create_plan(db_with_run, "mixed", seed=5)

    def review(db, pick: dict, step: int, adjudicate: bool) -> None:
        for dec_id in pick["decisions"]:
            add_review(db, "mixed", dec_id, "match", "ana", sampled=True)
        if step == 0:
            add_review(db, "mixed", pick["decisions"][0], "no-match", "bo", sampled=True)
            if adjudicate:
                add_review(db, "mixed", pick["decisions"][0], "no-match", "cy", role="adjudicator", sampled=True)
    waited, adjudicated = twin_orders(db_with_run, tmp_path / "twin.db", lambda db: next_sample(db, "mixed"), review)
    assert waited == adjudicated and len(set(waited)) == 5


def test_when_only_waiting_documents_are_left_the_queue_serves_them_and_never_says_done(db_with_run):
    # with every other document reviewed, the queue said "every document of the plan is reviewed" (None) while one
    # still waited for an adjudicator; and its advice counted the waiting documents as open
    create_plan(db_with_run, "mixed", seed=3)
    plan = load_plan(db_with_run, "mixed")
    first = next_sample(db_with_run, "mixed")
    for dec_id in first["decisions"]:
        add_review(db_with_run, "mixed", dec_id, "match", "ana", sampled=True)
    add_review(db_with_run, "mixed", first["decisions"][0], "no-match", "bo", sampled=True)
    served = {first["doc"]}
    while (pick := next_sample(db_with_run, "mixed"))["doc"] != first["doc"]:
        assert pick["doc"] not in served and pick["more_to_target"] <= len(plan.blocks) - len(served)
        served.add(pick["doc"])
        for dec_id in pick["decisions"]:
            add_review(db_with_run, "mixed", dec_id, "match", "ana", sampled=True)
    assert served == {b.id for b in plan.blocks}  # every other document first
    assert pick["why"].startswith("waiting for an adjudicator") and pick["waiting_for_adjudication"] == [first["doc"]]
    assert pick["more_decisions_to_target"] == 0 or pick["more_to_target"] == 0
    add_review(db_with_run, "mixed", first["decisions"][0], "no-match", "cy", role="adjudicator", sampled=True)
    assert next_sample(db_with_run, "mixed") is None  # now every document is reviewed and settled


def test_an_imported_review_is_a_draw_only_where_the_queue_would_serve_its_document(db_with_run, tmp_path):
    """`import-reviews` kept `sampled` on any document the plan lists (every document): a hand-picked one, refused
    by `review --sampled`, became a sample draw through a file. Now a file's sampled reviews, in its order, are draws
    only where `check_sample_draw` would take them one by one: the reviews a twin database made by following its
    queue keep every draw, a hand-picked document's do not."""
    from audit.review.reviews_io import export_reviews, import_reviews

    create_plan(db_with_run, "mixed", seed=4)
    twin = tmp_path / "twin.db"
    copy_db(db_file(db_with_run), twin)
    other = open_db(twin)
    served = []
    for _ in range(4):  # the twin's reviewer follows the queue
        pick = next_sample(other, "mixed")
        served.append(pick["doc"])
        for dec_id in pick["decisions"]:
            add_review(other, "mixed", dec_id, "match", "ana", sampled=True)
    plan = load_plan(db_with_run, "mixed")
    picked = next(b for b in reversed(plan.serving_order()) if b.id not in served)  # the plan's last document
    with pytest.raises(AuditError, match="not what the sample queue serves now"):
        add_review(other, "mixed", int(picked.units[0]), "match", "bo", sampled=True)
    for u in picked.units:
        add_review(other, "mixed", int(u), "match", "bo")  # by hand; the file below claims them as draws
    hand = tmp_path / "hand.jsonl"
    hand.write_text("".join(json.dumps(json.loads(x) | {"sampled": True}) + "\n"
                            for x in export_reviews(other, "mixed").splitlines() if json.loads(x)["reviewer"] == "bo"))
    followed = tmp_path / "followed.jsonl"
    followed.write_text("".join(x + "\n" for x in export_reviews(other, "mixed").splitlines()
                                if json.loads(x)["reviewer"] == "ana"))
    res = import_reviews(db_with_run, "mixed", followed)
    assert res["not_sample_draws"] == 0 and res["imported"] > 0
    res = import_reviews(db_with_run, "mixed", hand)
    assert res["not_sample_draws"] == res["imported"] == len(picked.units)
    drawn = {d for d, in db_with_run.execute("SELECT DISTINCT d.doc_id FROM reviews v JOIN decisions d ON "
                                              "d.id = v.decision_id WHERE v.sampled = 1")}
    assert drawn == set(served)


def test_a_new_reviewers_sample_queue_serves_new_draws_not_the_documents_already_settled(db_with_run):
    """After the suggested document the browser card went through every document others had drawn and settled,
    rank by rank, before a new draw. The sample queue now leaves settled documents out, and what it serves next is
    a valid draw: `review --sampled` takes it."""
    from audit.review.queue import queue_ids

    create_plan(db_with_run, "mixed", seed=6)
    drawn = []
    for _ in range(3):
        pick = next_sample(db_with_run, "mixed")
        drawn.append(pick["doc"])
        for dec_id in pick["decisions"]:
            add_review(db_with_run, "mixed", dec_id, "match", "ana", sampled=True)
    ids = queue_ids(db_with_run, "mixed", "dan", "sample")
    docs = dict(db_with_run.execute("SELECT id, doc_id FROM decisions WHERE run_id = (SELECT id FROM runs WHERE "
                                    "name = 'mixed')").fetchall())
    assert ids and not {docs[i] for i in ids} & set(drawn)
    first = [i for i in ids if docs[i] == docs[ids[0]]]
    for dec_id in first:  # refused with NotASampleDraw if it were not the next draw of its stratum
        add_review(db_with_run, "mixed", dec_id, "match", "dan", sampled=True)
