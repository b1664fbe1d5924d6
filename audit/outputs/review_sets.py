"""Which reviews a statistic of human labels counts (the Agreement page's "reviews used"): blind reviews only
whenever the run has any, since sighted reviews are anchored on the judge's answer; `blind`, `sighted` or `all` to
choose. Agreement, the alternative annotator test and improve-judge's learnt rows all read one set through here."""

from __future__ import annotations

from audit.effective import current_rows
from audit.errors import AuditError
from audit.views import RunView

REVIEW_SETS = ("auto", "blind", "sighted", "all")


def review_set(view: RunView, reviews: str) -> str:
    """`reviews` as the set it names for this run (`auto`: `blind` when the run has blind reviews, else `all`)."""
    if reviews not in REVIEW_SETS:
        raise AuditError(f"reviews must be one of {', '.join(REVIEW_SETS)}, got {reviews!r}")
    if reviews == "auto":
        return "blind" if view.blind_reviews() else "all"
    return reviews


def reviews_in(reviews: list[dict], used: str) -> list[dict]:
    """The current review rows of one decision (`audit.effective.current_rows`: each reviewer's latest label and the
    adjudication) that a review set (`blind`, `sighted`, `all`) counts; an adjudicator's always. The set is taken of
    the current rows, not before: a blind label its reviewer withdrew or changed sighted is no blind label of
    theirs (filtered first, the sighted undo was dropped and the withdrawn blind label counted, and was learnt)."""
    rows = current_rows(reviews)
    if used == "all":
        return rows
    return [r for r in rows if bool(r["blind"]) == (used == "blind") or r["role"] == "adjudicator"]
