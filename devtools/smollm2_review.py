"""A review of the bundled SmolLM2 run (`data/chimera/judge_smollm2_structured.jsonl` over `pred_mixed.jsonl`),
for the real-model runs of `improve-judge --strategy few-shot | rules` and the bundled improved demo run.

The labels are the ones a careful reviewer gives after reading every pair of these documents: in this run two
spans name the same idea exactly when they are the same text up to letter case (`pred_mixed.jsonl` replaces or
swaps spans; none of its unequal pairs is a paraphrase: e.g. "a saliency-based superpixel algorithm" and "a
superpixel-based saliency estimator" are two different methods). Every overruled decision gets a note saying why,
in one of two wordings, as a reviewer in a hurry writes them.
"""

from __future__ import annotations

from sqlite_utils import Database

from audit.review.reviews import add_review
from audit.views import load_view

REVIEWER = "rev-smollm2"
SAME = "the two spans are the same text (letter case aside): the same idea, always a match"
DIFFERENT = "two different ideas ({a} / {b}); the combination's elements are not the same thing"


def label_of(left: str, right: str) -> str:
    return "match" if left.strip().casefold() == right.strip().casefold() else "no-match"


def small_documents(db: Database, run: str, n_docs: int, max_decisions: int = 3) -> list[str]:
    """The run's first `n_docs` documents (by id) with at most `max_decisions` decisions: chosen by size alone
    (never by a label), so a real-model run on a loaded machine asks few questions."""
    count: dict[str, int] = {}
    for d in load_view(db, run).decisions():
        count[d["doc"]] = count.get(d["doc"], 0) + 1
    return [doc for doc in sorted(count) if count[doc] <= max_decisions][:n_docs]


def review_documents(db: Database, run: str, docs: list[str]) -> list[int]:
    """Review every decision of these documents; the decision ids reviewed."""
    decisions = load_view(db, run).decisions()
    ids = []
    for d in decisions:
        if d["doc"] not in docs:
            continue
        label = label_of(d["left"], d["right"])
        note = None
        if label != d["judge"]:
            note = SAME if label == "match" else DIFFERENT.format(a=d["left"], b=d["right"])
        add_review(db, run, d["id"], label, REVIEWER, note=note)
        ids.append(d["id"])
    return ids
