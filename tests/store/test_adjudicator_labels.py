"""An adjudicator's label is theirs (the browser pass: dana adjudicated #1, then the card still said "You have
labelled 0", served #1 again in "not labelled by you yet", and the CSV's human:dana column was empty on that row),
while agreement statistics keep reading the reviewers' own labels; and the CSV's notes hold what people typed, not
the undo marker."""

from __future__ import annotations

import contextlib
import csv
import io

from audit.errors import AuditError
from audit.outputs.agreement import agreement
from audit.outputs.export import export_csv
from audit.review.queue import labelled_count, queue_ids, reviewer_progress, reviewer_progress_db
from audit.review.reviews import UNDO_NOTE, add_review
from audit.views import as_view, decisions


def test_an_adjudication_counts_as_the_adjudicators_label_everywhere_but_in_agreement(db_with_run):
    run = "mixed"
    dec = queue_ids(db_with_run, run, "ana", "unreviewed")[0]
    add_review(db_with_run, run, dec, "match", "ana")
    add_review(db_with_run, run, dec, "no-match", "ben")
    before = agreement(db_with_run, run)
    assert dec in queue_ids(db_with_run, run, "dana", "unreviewed") and labelled_count(db_with_run, run, "dana") == 0
    add_review(db_with_run, run, dec, "no-match", "dana", role="adjudicator")
    assert dec not in queue_ids(db_with_run, run, "dana", "unreviewed")
    assert labelled_count(db_with_run, run, "dana") == 1
    by_db = {r["reviewer"]: r for r in reviewer_progress_db(db_with_run, run)}
    by_rows = {r["reviewer"]: r for r in reviewer_progress(decisions(db_with_run, run))}
    assert by_db == by_rows and by_db["dana"]["labelled"] == 1 and by_db["dana"]["review rows"] == 1
    e = as_view(db_with_run, run).effective[dec]
    assert e.source == "adjudicated" and e.adjudicator == "dana" and "dana" not in e.human_labels
    rows = {int(r["id"]): r for r in csv.DictReader(io.StringIO(export_csv(db_with_run, run)))}
    assert rows[dec]["adjudicated_by"] == "dana" and rows[dec]["effective"] == "no-match"
    assert "human:dana" not in rows[dec]  # a column per reviewer; the adjudication has its own
    after = agreement(db_with_run, run)  # the reviewers' labels against the judge: the adjudicator adds no pair
    assert after["human_vs_human"] == before["human_vs_human"]


def test_the_csv_notes_hold_what_people_typed_not_the_undo_marker(db_with_run):
    run = "mixed"
    a, b = queue_ids(db_with_run, run, "ana", "unreviewed")[:2]
    add_review(db_with_run, run, a, "match", "ana", note="same idea, other words")
    add_review(db_with_run, run, b, "match", "ana")
    add_review(db_with_run, run, b, None, "ana", note=UNDO_NOTE)
    rows = {int(r["id"]): r for r in csv.DictReader(io.StringIO(export_csv(db_with_run, run)))}
    assert rows[a]["notes"] == "ana: same idea, other words" and rows[b]["notes"] == ""


def test_the_csv_says_whether_each_current_label_was_given_blind(db_with_run):
    """Blind-only agreement could not be recomputed from the CSV: it had each reviewer's label but not whether it
    was given blind. `blind:NAME` is the flag of the review that holds `human:NAME` (the latest; an undo drops it)."""
    import random

    run, rng = "mixed", random.Random(7)
    ids = queue_ids(db_with_run, run, "ana", "unreviewed")[:8]
    for _ in range(40):
        dec, who = rng.choice(ids), rng.choice(("ana", "ben"))
        label, blind = rng.choice(("match", "no-match", None)), rng.random() < 0.5
        with contextlib.suppress(AuditError):  # an undo of nothing is refused
            add_review(db_with_run, run, dec, label, who, blind=blind, note=UNDO_NOTE if label is None else "")
    rows = {int(r["id"]): r for r in csv.DictReader(io.StringIO(export_csv(db_with_run, run)))}
    reviews = as_view(db_with_run, run).reviews
    for dec in ids:
        held: dict[str, bool] = {}
        for r in reviews.get(dec, []):  # oldest first: each reviewer's latest labelled row
            if r["label"] is None:
                held.pop(r["reviewer"], None)
            else:
                held[r["reviewer"]] = bool(r["blind"])
        for who in ("ana", "ben"):
            assert rows[dec][f"blind:{who}"] == ({True: "yes", False: "no"}[held[who]] if who in held else "")
            assert (rows[dec][f"human:{who}"] == "") == (who not in held)


def test_an_adjudicators_sample_queue_leads_with_the_conflicts_the_sample_waits_for(db_with_run):
    """A drawn document with a conflict is no draw until someone adjudicates; the adjudicator's sample queue served it
    at its plan place, after the suggested document (and not at all where they had labelled it as a reviewer). Now
    it leads, before the suggestion; a conflict in a document reviewed by hand (no draw: the sample queue would
    refuse its label as one) does not."""
    from audit.review.sampling import create_plan, load_plan, next_sample

    run = "mixed"
    create_plan(db_with_run, run, seed=4)
    for _ in range(2):  # two documents drawn and settled, so the conflicted one below is not the plan's first
        for d in next_sample(db_with_run, run)["decisions"]:
            add_review(db_with_run, run, d, "match", "ana", sampled=True)
    pick = next_sample(db_with_run, run)
    dec = pick["decisions"][-1]
    add_review(db_with_run, run, dec, "match", "ana", sampled=True)
    add_review(db_with_run, run, dec, "no-match", "dana", sampled=True)  # dana, who also adjudicates
    reviewed = {r[0] for r in db_with_run.execute("SELECT decision_id FROM reviews")}
    plan = load_plan(db_with_run, run)
    by_hand = next(int(b.units[0]) for b in plan.serving_order() if not reviewed & {int(u) for u in b.units})
    add_review(db_with_run, run, by_hand, "match", "ana")
    add_review(db_with_run, run, by_hand, "no-match", "bo")  # a conflict, but no draw
    later = [d for d in next_sample(db_with_run, run)["decisions"] if d != dec]
    assert later
    for who in ("dana", "eve"):
        ids = queue_ids(db_with_run, run, who, "sample", adjudicator=True, suggested=later)
        assert ids[0] == dec and ids[1:1 + len(later)] == later, who
        assert by_hand not in ids[:1 + len(later)]
    plain_queue = queue_ids(db_with_run, run, "eve", "sample", suggested=later)
    assert plain_queue[:len(later)] == later  # a reviewer: the suggestion first, as before
    add_review(db_with_run, run, dec, "match", "dana", role="adjudicator", sampled=True)  # what the page stores
    assert dec not in queue_ids(db_with_run, run, "dana", "sample", adjudicator=True)  # settled: gone
