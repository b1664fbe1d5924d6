"""The queue rule written plainly over built decisions: the oracle `audit.review.queue.queue_ids` (which reads ids
with a
few SQL queries) is tested against. Test-only: the product never builds every decision to pick a queue."""

from __future__ import annotations

from collections.abc import Iterable

from audit.review.queue import QUEUES


def in_queue(d: dict, queue: str, reviewer: str) -> bool:
    if queue == "unreviewed":  # an adjudication is the adjudicator's label too
        return reviewer not in d["human"] and d.get("adjudicator") != reviewer
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
