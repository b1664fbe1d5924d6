"""Which reviews a statistic of human labels counts (the Agreement page's "reviews used"): blind reviews only
whenever the run has any, since sighted reviews are anchored on the judge's answer; `blind`, `sighted` or `all` to
choose. Agreement, the alternative annotator test and improve-judge's learnt rows all read one set through here."""

from __future__ import annotations

from audit.effective import reviews_in
from audit.errors import AuditError
from audit.views import RunView

REVIEW_SETS = ("auto", "blind", "sighted", "all")
__all__ = ["REVIEW_SETS", "review_set", "reviews_in"]


def review_set(view: RunView, reviews: str) -> str:
    """`reviews` as the set it names for this run (`auto`: `blind` when a current label of the run was given blind,
    else `all`)."""
    if reviews not in REVIEW_SETS:
        raise AuditError(f"reviews must be one of {', '.join(REVIEW_SETS)}, got {reviews!r}")
    if reviews == "auto":  # a current blind label: one given blind and then again sighted leaves none
        return "blind" if any(r["blind"] for revs in view.reviews.values() for r in reviews_in(revs, "all")) else "all"
    return reviews
