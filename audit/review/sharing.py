"""Which other runs a review settles a question in (issue 36 §1): a review is shared by question key (`decisions.qkey`:
same family, same gold content of the document, same judge question; the `run_reviews` view), so a review made on a
decision counts in every run that asks its question. Both review cards say so with `also_settles_text`; the sentence
names runs, never what their judges answered, so it is shown on blind cards too."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from audit.store.database import Database
from audit.store.shared_reviews import SAME_QUESTION

CHUNK = 500
"""Decision ids per query (SQLite's bound-parameter limit)."""


def other_runs_asking(db: Database, decision_ids: Iterable[int]) -> dict[int, list[str]]:
    """Per decision id, the names of the other runs that ask the decision's question (in run order); a decision
    whose question no other run asks (or not keyed yet) maps to []."""
    ids = list(dict.fromkeys(int(i) for i in decision_ids))
    out: dict[int, list[str]] = {i: [] for i in ids}
    for at in range(0, len(ids), CHUNK):
        part = ids[at:at + CHUNK]
        rows = db.execute(
            f"SELECT DISTINCT d1.id, r.id, r.name FROM decisions d1 JOIN decisions d2 ON {SAME_QUESTION} "
            "AND d2.run_id != d1.run_id JOIN runs r ON r.id = d2.run_id "
            f"WHERE d1.id IN ({', '.join('?' * len(part))}) ORDER BY d1.id, r.id",
            part).fetchall()
        for decision, _run_id, name in rows:
            out[decision].append(name)
    return out


NAMED = 2
"""Runs the card names before "and N more": a board of many systems must not push the card's note field below a
720 px screen (every run is named in the card's tooltip)."""


def also_settles_text(runs: Sequence[str]) -> str:
    """The card's sentence: `also settles this question in runs B, C` ('' when no other run asks it), naming at most
    `NAMED` runs and counting the rest.

    >>> also_settles_text(["B", "C"]), also_settles_text(["B"]), also_settles_text([])
    ('also settles this question in runs B, C', 'also settles this question in run B', '')
    >>> also_settles_text(["B", "C", "D", "E"])
    'also settles this question in runs B, C and 2 more'
    """
    if not runs:
        return ""
    more = len(runs) - NAMED
    named = ", ".join(runs[:NAMED]) + (f" and {more} more" if more > 0 else "")
    return f"also settles this question in {'run' if len(runs) == 1 else 'runs'} {named}"
