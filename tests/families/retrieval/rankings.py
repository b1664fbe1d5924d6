"""Build ranking lines for the retrieval tests (not a test module)."""

from __future__ import annotations

from scoring.families.retrieval.load import parse_line
from scoring.families.retrieval.model import RankedQuery


def line(scores: list[float] | None, gold: int, *, qid: str = "q", relation: str = "combination",
         n: int | None = None, cross: bool | None = None, **extra: object) -> dict:
    """A results.json line with candidates c0..c{n-1} listed in rank order and the gold at list index `gold`."""
    n = len(scores) if scores is not None else n
    assert n is not None
    rec: dict = {"id": qid, "query": f"Combine 'a{qid}' and ", "context": "ctx", "anchor_text": f"a{qid}",
                 "relation": relation, "positive": f"text {gold}", "positive_id": f"c{gold}",
                 "candidates": [f"c{i}" for i in range(n)], "candidates_text": [f"text {i}" for i in range(n)],
                 "positive_index": gold}
    if scores is not None:
        rec["scores"] = scores
    if cross is not None:
        rec["is_cross_domain"] = cross
    rec.update(extra)
    return rec


def query(scores: list[float] | None, gold: int, **kw: object) -> RankedQuery:
    return parse_line("t.jsonl", 1, line(scores, gold, **kw))[0]
