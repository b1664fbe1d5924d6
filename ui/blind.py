"""The blind rule, in one place: what a blind reviewer sees of a decision, and whether a review is recorded blind.

A reviewer reviewing blind (role reviewer; an adjudicator settles disagreements and sees everything) sees a decision
without anything derived from the judge's or other reviewers' labels until they have labelled it themselves; the
review they make is recorded blind exactly then. The rule is per decision on every surface: the classic card, the
browser card (its buffer and its store), the queue page and the Document page (which hides the document's outcome,
matches and scores while any of its decisions is still blind for the reviewer).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

JUDGE_DERIVED = frozenset({"judge", "effective", "source", "human", "reviews", "moot", "detail"})
"""The fields of a decision view a blind card is built without (detail: only the family's `BLIND_DETAIL` keys)."""


def reviews_blind(blind: bool, role: str) -> bool:
    """Whether a session reviews blind: blind review switched on (or assigned) and the role a reviewer's (an
    adjudicator sees everything). What a page derives from every decision's labels stays hidden then."""
    return blind and role == "reviewer"


def is_blind(d: Mapping, *, blind: bool, role: str, who: str) -> bool:
    """Whether decision `d` is shown, and a review of it recorded, blind for reviewer `who` in `role` with blind
    review switched on (`blind`): a reviewer's, until they hold a label on it."""
    return reviews_blind(blind, role) and who not in d["human"]


def document_is_blind(decisions: Iterable[Mapping], *, blind: bool, role: str, who: str) -> bool:
    """Whether what a document view derives from all its decisions' labels (outcome, matches, counts) stays hidden:
    while any of its decisions is blind for the reviewer."""
    return any(is_blind(d, blind=blind, role=role, who=who) for d in decisions)


def blind_decision(d: Mapping, blind_detail: Iterable[str]) -> dict:
    """The decision as a blind reviewer may see it: the question (and the detail keys the family's view names in
    `BLIND_DETAIL`), nothing the judge or anyone else answered."""
    question = {k: v for k, v in d.items() if k not in JUDGE_DERIVED}
    detail = d.get("detail") or {}
    return question | {"judge": "", "effective": "", "source": "", "human": {}, "reviews": [],
                       "detail": {k: detail[k] for k in blind_detail if k in detail}}
