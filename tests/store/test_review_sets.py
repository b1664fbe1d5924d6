"""The review set a statistic of human labels counts (`audit.outputs.review_sets.reviews_in`: agreement, the
alternative annotator test, improve-judge's learnt rows and notes) is taken of each reviewer's CURRENT label: a
blind label its reviewer withdrew or changed in a sighted session is no blind label of theirs. Filtered first, the
sighted undo was dropped, the withdrawn blind label was counted in agreement and learnt by improve-judge, and the
improved judge was stale the moment it was made."""

from __future__ import annotations

import random

from audit.effective import current_labels
from audit.outputs.agreement import agreement_rows
from audit.outputs.review_sets import review_set, reviews_in
from audit.review.reviews import add_review
from audit.views import as_view, decisions


def _labels(db, used: str) -> dict[int, dict[str, str]]:
    return {int(k): v for k, v in agreement_rows(db, "mixed", reviews=used)["ratings"].items()}


def test_a_blind_label_withdrawn_or_changed_sighted_is_not_counted_as_blind(db_with_run):
    db = db_with_run
    d1, d2 = [x["id"] for x in decisions(db, "mixed") if x["judge"] != "invalid"][:2]
    for d in (d1, d2):
        add_review(db, "mixed", d, "match", "ana", blind=True)
        add_review(db, "mixed", d, "match", "bo", blind=True)
    add_review(db, "mixed", d1, "no-match", "ana", blind=False)  # a second thought, seen with the judge's answer
    add_review(db, "mixed", d2, None, "bo", blind=False)  # withdrawn in a sighted session
    blind = _labels(db, "blind")
    assert blind[d1] == {"bo": "match"} and blind[d2] == {"ana": "match"}
    assert _labels(db, "sighted")[d1] == {"ana": "no-match"} and d2 not in _labels(db, "sighted")
    assert _labels(db, "all")[d1] == {"ana": "no-match", "bo": "match"}


def test_every_set_is_the_current_labels_split_by_how_they_were_given(db_with_run):
    """On random histories of one decision: blind ∪ sighted = the current labels (the product's), each label in
    exactly the set of the row that holds it; an adjudication in every set."""
    rng = random.Random(5)
    for _ in range(300):
        rows = []
        for i in range(rng.randint(0, 8)):
            role = "adjudicator" if rng.random() < 0.15 else "reviewer"
            rows.append({"id": i + 1, "reviewer": rng.choice(["ana", "bo", "cy"]), "role": role,
                         "label": rng.choice(["match", "no-match", None]), "blind": rng.random() < 0.5})
        humans, adjudicated = current_labels(rows)
        parts = {used: current_labels(reviews_in(rows, used)) for used in ("blind", "sighted", "all")}
        assert parts["all"] == (humans, adjudicated)
        assert {**parts["blind"][0], **parts["sighted"][0]} == humans
        assert not set(parts["blind"][0]) & set(parts["sighted"][0])
        assert all(p[1] == adjudicated for p in parts.values())
        latest = {r["reviewer"]: r for r in rows if r["role"] == "reviewer"}
        for who in parts["blind"][0]:
            assert latest[who]["blind"]


def test_auto_reads_blind_reviews_only_while_a_current_label_was_given_blind(db_with_run):
    """`auto` picked the blind set whenever a blind row had ever been stored: one label given blind and then again
    sighted left agreement and improve-judge with no decision at all."""
    db = db_with_run
    d = next(x for x in decisions(db, "mixed") if x["judge"] != "invalid")["id"]
    add_review(db, "mixed", d, "match", "ana", blind=True)
    assert review_set(as_view(db, "mixed"), "auto") == "blind"
    add_review(db, "mixed", d, "match", "ana")
    assert review_set(as_view(db, "mixed"), "auto") == "all"
    assert _labels(db, "auto")[d] == {"ana": "match"}
