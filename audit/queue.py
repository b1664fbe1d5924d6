"""Review queues: which decision to look at next, and how far each reviewer has got."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

QUEUES = {
    "unreviewed": "not labelled by you yet",
    "conflicted": "reviewers disagree",
    "invalid": "judge answer unreadable",
    "disagree": "human ≠ judge",
    "all": "every decision",
}
BLIND_QUEUES = ("unreviewed", "all")
"""Queues that reveal nothing of the judge's or other reviewers' labels (offered in blind review)."""


def in_queue(d: dict, queue: str, reviewer: str) -> bool:
    if queue == "unreviewed":
        return reviewer not in d["human"]
    if queue == "conflicted":
        return d["source"] == "conflicted"
    if queue == "invalid":
        return d["judge"] == "invalid"
    if queue == "disagree":
        return any(lab != d["judge"] for lab in d["human"].values())
    if queue == "all":
        return True
    raise ValueError(f"unknown queue {queue!r}; use one of {', '.join(QUEUES)}")


def queue(decs: Iterable[dict], reviewer: str, mode: str, *, types: Iterable[str] = (),
          judge_labels: Iterable[str] = (), doc: str = "") -> list[dict]:
    """Decisions (from `audit.views.decisions`) in the queue `mode`, filtered by type, judge label and document
    id substring."""
    types, judge_labels = set(types), set(judge_labels)
    return [d for d in decs
            if in_queue(d, mode, reviewer) and (not types or d["type"] in types)
            and (not judge_labels or d["judge"] in judge_labels) and (not doc or doc in d["doc"])]


def reviewer_progress(decs: Iterable[dict]) -> list[dict]:
    """Per reviewer: decisions currently labelled, how many agree with the judge, and reviews written."""
    labelled: Counter[str] = Counter()
    agree: Counter[str] = Counter()
    rows: Counter[str] = Counter()
    total = 0
    for d in decs:
        total += 1
        for who, lab in d["human"].items():
            labelled[who] += 1
            agree[who] += lab == d["judge"]
        for r in d["reviews"]:
            rows[r["reviewer"]] += 1
    return [{"reviewer": who, "labelled": labelled[who], "of": total, "agree with judge": agree[who],
             "review rows": rows[who]} for who in sorted(rows)]
