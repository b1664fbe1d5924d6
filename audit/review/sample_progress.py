"""What the sample queue tells its reviewer: the next document, how far the sample is from its target, and when they
may stop (issue 40.2 and 40.7). One place for the wording, read by the queue page's caption and the review card.

A blind reviewer is told nothing derived from the judge: not the stratum (strata are built from the judge's
answers), not why a document was picked, and not how many more documents reach the target (it follows the
differences between the reviews and the judge's answers, so its change after a document would tell whether the
reviewer contradicted the judge there).
"""

from __future__ import annotations

from collections.abc import Mapping


def sample_caption(nxt: Mapping, *, blind: bool, share: bool = False) -> str:
    """The queue page's line about the sample queue's next document (`audit.review.sampling.next_sample`'s answer).
    A reviewer with a `share` of an assigned review is served their share, not the run's next document: the line
    names no document (it named a co-reviewer's) and says what the run's sample as a whole still needs."""
    if share:
        head = "Sample queue: your share of the plan's documents (reviews here count as sample draws)."
        more, hw = nxt.get("more_to_target"), nxt["target_half_width"]
        if blind or more is None:
            return head
        if int(more) <= 0:
            return f"{head} The run's sample, shared among its reviewers, has reached ±{hw:.2f} on the headline metric."
        return (f"{head} The run's sample, shared among its reviewers, needs about {more} more documents "
                f"({nxt['more_decisions_to_target'] or 0:.0f} decisions) to reach ±{hw:.2f} on the headline metric.")
    head = "Sample queue: documents in the plan's order (reviews here count as sample draws)."
    if blind:
        return f"{head} Next: {nxt['doc']}."
    return (f"{head} Suggested next: {nxt['doc']} (stratum {nxt['stratum']}, {nxt['why']}); about "
            f"{nxt['more_to_target']} more documents ({nxt['more_decisions_to_target'] or 0:.0f} decisions) reach "
            f"±{nxt['target_half_width']:.2f} on the headline metric.")


def card_progress(nxt: Mapping | None, *, blind: bool) -> str:
    """The card's progress toward the sampling target, e.g. `Sample: document 5 of ~26 to ±0.03 on entity F1`, or
    that the reviewer may stop; `nxt` None: every document of the plan is reviewed."""
    if nxt is None:
        return "Sample: every document of the plan is reviewed; the Scores page has the exact score."
    k = int(nxt.get("sampled_documents") or 0) + 1
    if blind:
        return (f"Sample: document {k} · how many more reach the target is not shown in blind review (it follows "
                "the judge's answers)")
    more, hw, label = nxt.get("more_to_target"), nxt["target_half_width"], nxt.get("target_label") or "the headline"
    if more is not None and int(more) <= 0:
        return (f"Sample: {k - 1} documents reviewed: you may stop, the estimate of {label} is within ±{hw:.2f} "
                "(anytime interval, valid whenever you stop); more reviews narrow it")
    goal = f" of ~{k - 1 + int(more)}" if more is not None else ""
    return f"Sample: document {k}{goal} to ±{hw:.2f} on {label} (anytime interval); stop when the card says so"
