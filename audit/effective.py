"""The effective-label rule, in one place: what a decision's label is once humans have reviewed it.

Pure functions over a decision's judge label and its review rows (dicts with `reviewer`, `label` — None is the
undo of that reviewer's label — and `role`, oldest first); no SQL. Every reader of a run (`audit.views.RunView`,
and through it the pages, the queue, agreement and every export) and the writer of the stored audited state
(`audit.rescoring.apply_reviews`) get effective labels from `effective_labels` here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from audit.errors import AuditError
from audit.numbers import count_noun

DEFAULT_POLICY = "unanimous"
POLICIES = {
    "unanimous": "adjudicated label, else the unanimous human label, else the judge's (humans who disagree leave "
                 "the judge's label in place: conflicted)",
    "majority": "adjudicated label, else the label most reviewers gave, else the judge's (a tie between humans "
                "leaves the judge's label: conflicted)",
}
"""Effective-label policies; `unanimous` is the default and the one the stored audited state uses."""

HUMAN_SOURCES = ("human", "majority", "adjudicated")
"""Sources of an effective label that humans settled (the judge's label is no longer what counts)."""


@dataclass(frozen=True)
class Effective:
    """A decision's label after reviews, and where it came from."""

    label: str
    source: str
    """`judge` (no current human label), `human` (all current human labels agree), `majority` (most reviewers
    agree; `majority` policy only), `adjudicated`, or `conflicted` (humans disagree and nobody adjudicated: the
    judge's label stands and the decision is counted as conflicted)."""
    human_labels: dict[str, str]
    """Current label of each reviewer (their latest review; an undo removes it)."""
    adjudicator: str | None = None
    """Who gave the adjudicated label (source `adjudicated`)."""

    def labels_by(self) -> dict[str, str]:
        """Each person's current label, the adjudicator's adjudication included: what a queue and a progress count
        call "labelled by you" (agreement statistics read `human_labels`, the reviewers' own labels)."""
        return labels_by(self.human_labels, self.adjudicator, self.label)

    @property
    def settled_by_humans(self) -> bool:
        """Whether humans decided the label (unanimously, by majority or by adjudication)."""
        return self.source in HUMAN_SOURCES

    @property
    def reviewed(self) -> bool:
        """Whether the decision carries a current human label or an adjudication."""
        return bool(self.human_labels) or self.source == "adjudicated"

    @property
    def conflicted(self) -> bool:
        """Whether humans reviewed the decision but did not settle it (they disagree and nobody adjudicated): the
        judge's label stands, and the decision stays open in every queue and count that asks for settled ones."""
        return self.source == "conflicted"


def labels_by(human_labels: Mapping[str, str], adjudicator: str | None, label: str) -> dict[str, str]:
    """`Effective.labels_by` from its parts (a decision as `audit.views` yields it: `human`, `adjudicator`,
    `effective`)."""
    return dict(human_labels) if adjudicator is None else {**human_labels, adjudicator: label}


def conflicted_why(n: int) -> str:
    """What a queue adds to the reason it serves a document again when `n` of its decisions are conflicted: they
    keep it open (not settled, so not a reviewed draw) until an adjudicator settles them.

    >>> conflicted_why(1).split(":")[0]
    '1 decision reviewed but conflicted (reviewers disagree)'
    """
    return (f"{count_noun(n, 'decision')} reviewed but conflicted (reviewers disagree): an adjudicator's label "
            "settles each (*Adjudicator* in the sidebar, or `review --role adjudicator`)")


def check_policy(policy: str) -> str:
    """The policy name, or AuditError naming the policies there are.

    >>> check_policy("majority")
    'majority'
    """
    if policy not in POLICIES:
        raise AuditError(f"unknown effective-label policy {policy!r}; use one of {', '.join(POLICIES)}")
    return policy


def current_rows(reviews: Iterable[Mapping]) -> list[Mapping]:
    """The review rows that hold a decision's current labels, from its rows oldest first: each reviewer's latest
    labelled review (an undo removes it) and the latest adjudication when it carries a label.

    >>> [r["id"] for r in current_rows([{"id": 1, "reviewer": "ana", "label": "no", "role": "reviewer"},
    ...                                  {"id": 2, "reviewer": "bo", "label": "yes", "role": "reviewer"},
    ...                                  {"id": 3, "reviewer": "ana", "label": None, "role": "reviewer"}])]
    [2]
    """
    humans: dict[str, Mapping] = {}
    adjudication: Mapping | None = None
    for r in reviews:
        if r["role"] == "adjudicator":
            adjudication = r
        elif r["label"] is None:
            humans.pop(r["reviewer"], None)
        else:
            humans[r["reviewer"]] = r
    return [*humans.values(), *([adjudication] if adjudication is not None and adjudication["label"] is not None
                                else [])]


def reviews_in(reviews: list[dict], used: str) -> list[dict]:
    """The current review rows of one decision (`audit.effective.current_rows`: each reviewer's latest label and the
    adjudication) that a review set (`blind`, `sighted`, `all`) counts; an adjudicator's always. The set is taken of
    the current rows, not before: a blind label its reviewer withdrew or changed sighted is no blind label of
    theirs (filtered first, the sighted undo was dropped and the withdrawn blind label counted, and was learnt)."""
    rows = current_rows(reviews)
    if used == "all":
        return rows
    return [r for r in rows if bool(r["blind"]) == (used == "blind") or r["role"] == "adjudicator"]


def current_labels(reviews: Iterable[Mapping]) -> tuple[dict[str, str], str | None]:
    """Each reviewer's latest label and the latest adjudication, from review rows oldest first (`current_rows`).

    >>> current_labels([{"reviewer": "ana", "label": "no", "role": "reviewer"},
    ...                 {"reviewer": "bo", "label": "yes", "role": "reviewer"},
    ...                 {"reviewer": "ana", "label": None, "role": "reviewer"}])
    ({'bo': 'yes'}, None)
    """
    humans, adjudication = _current(reviews)
    return humans, None if adjudication is None else adjudication["label"]


def _current(reviews: Iterable[Mapping]) -> tuple[dict[str, str], Mapping | None]:
    """(each reviewer's current label, the current adjudication's row or None), from `current_rows`."""
    rows = current_rows(reviews)
    return ({r["reviewer"]: r["label"] for r in rows if r["role"] != "adjudicator"},
            next((r for r in rows if r["role"] == "adjudicator"), None))


def effective_label(judge_label: str, reviews: Sequence[Mapping], policy: str = DEFAULT_POLICY) -> Effective:
    """Adjudicated label if any, else the unanimous (or, with `policy="majority"`, the majority) human label,
    else the judge's.

    >>> two_one = [{"reviewer": r, "label": lab, "role": "reviewer"}
    ...            for r, lab in (("ana", "no"), ("bo", "no"), ("cy", "yes"))]
    >>> effective_label("yes", two_one).source, effective_label("yes", two_one, "majority").label
    ('conflicted', 'no')
    """
    humans, adjudication = _current(reviews)
    if adjudication is not None:
        return Effective(adjudication["label"], "adjudicated", humans, adjudicator=adjudication["reviewer"])
    distinct = set(humans.values())
    if len(distinct) == 1:
        return Effective(distinct.pop(), "human", humans)
    if len(distinct) > 1:
        if policy == "majority":
            counts = Counter(humans.values()).most_common()
            if counts[0][1] > counts[1][1]:
                return Effective(counts[0][0], "majority", humans)
        return Effective(judge_label, "conflicted", humans)
    return Effective(judge_label, "judge", humans)


def effective_labels(judge_labels: Mapping[int, str], reviews: Mapping[int, Sequence[Mapping]],
                     policy: str = DEFAULT_POLICY) -> dict[int, Effective]:
    """decision id -> Effective for every decision in `reviews` (judge label from `judge_labels`)."""
    check_policy(policy)
    return {i: effective_label(judge_labels[i], revs, policy) for i, revs in reviews.items()}


SUMMARY = ("reviewed", "overruled", "confirmed", "conflicted", "adjudicated")
"""The review counts `review_summary` gives, in order."""


def summary_of(label: str, source: str, n_humans: int, judge_label: str) -> tuple[int, ...]:
    """One decision's share of each count in `SUMMARY` (0 or 1), from its effective label, that label's source, its
    number of current human labels and the judge's label: what `review_summary` adds up, and what the stored audited
    state (`audit.rescoring.apply_reviews`) adds and takes away as a decision's label changes.

    >>> summary_of("no", "human", 1, "yes")
    (1, 1, 0, 0, 0)
    """
    return (int(n_humans > 0 or source == "adjudicated"), int(label != judge_label),
            int(source in HUMAN_SOURCES and label == judge_label), int(source == "conflicted"),
            int(source == "adjudicated"))


def review_summary(effective: Mapping[int, Effective], judge_labels: Mapping[int, str]) -> dict[str, int]:
    """Reviewed / overruled / confirmed / conflicted / adjudicated decisions among `effective`.

    >>> e = {1: Effective("no", "human", {"ana": "no"}), 2: Effective("yes", "conflicted", {"a": "no", "b": "yes"})}
    >>> review_summary(e, {1: "yes", 2: "yes"})
    {'reviewed': 2, 'overruled': 1, 'confirmed': 0, 'conflicted': 1, 'adjudicated': 0}
    """
    totals = [0] * len(SUMMARY)
    for i, e in effective.items():
        for k, v in enumerate(summary_of(e.label, e.source, len(e.human_labels), judge_labels[i])):
            totals[k] += v
    return dict(zip(SUMMARY, totals, strict=True))
