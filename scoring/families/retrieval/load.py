"""Load ranking results (JSON lines, as the CHIMERA bi-encoder writes `results.json`) into `RankedQuery`s.

Fields per line: `id`, `query`, `context` (optional), `anchor_text`, `relation`, `positive`, `positive_id`,
`candidates` (ranked ids), `candidates_text`, `positive_index` (0-based rank of the gold), `is_cross_domain`
(optional), `anchor_id` (optional). Extensions of ours, all optional: `scores` (one similarity per candidate, same
order, descending), from which the gold's tie block is found; `n_candidates` (size of the full pool when the list
holds only the top K, with the gold appended last when it ranks below them); `gold_block` ([first, last] 1-based
ranks of the gold's block of equal scores in the full pool, needed when that block reaches past the listed top K).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoring.errors import InputError, is_blank
from scoring.families.retrieval.model import RELATION_ALIASES, RELATIONS, RankedQuery
from scoring.jsonl import read_records
from scoring.limits import MAX_ID_CHARS, MAX_QUERY_CHARS

UNSEEN_TIES = ("gold below the cut with unlisted neighbours and no 'gold_block': ties with them cannot be seen, "
               "counted as none")


@dataclass
class LoadedRankings:
    queries: list[RankedQuery]
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class _Line:
    """Field access for one JSON object that fails with file, line and field name."""

    def __init__(self, path: str, lineno: int, rec: dict) -> None:
        self.path, self.lineno, self.rec = path, lineno, rec

    def fail(self, reason: str) -> InputError:
        return InputError(self.path, self.lineno, reason)

    def string(self, name: str, *, optional: bool = False) -> str | None:
        v = self.rec.get(name)
        if v is None and optional:
            return None
        if not isinstance(v, str):
            raise self.fail(f"field '{name}' must be a string, got {_kind(v)}")
        return v

    def integer(self, name: str, *, optional: bool = False) -> int | None:
        v = self.rec.get(name)
        if v is None and optional:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.fail(f"field '{name}' must be an integer, got {_kind(v)}")
        return v

    def strings(self, name: str) -> tuple[str, ...]:
        v = self.rec.get(name)
        if not isinstance(v, list):
            raise self.fail(f"field '{name}' must be a list of strings, got {_kind(v)}")
        for i, x in enumerate(v):
            if not isinstance(x, str):
                raise self.fail(f"{name}[{i}] must be a string, got {_kind(x)}")
        return tuple(v)

    def numbers(self, name: str) -> tuple[float, ...] | None:
        v = self.rec.get(name)
        if v is None:
            return None
        if not isinstance(v, list):
            raise self.fail(f"field '{name}' must be a list of numbers, got {_kind(v)}")
        for i, x in enumerate(v):
            if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
                raise self.fail(f"{name}[{i}] must be a finite number, got {x!r}")
        return tuple(float(x) for x in v)


def _kind(v: Any) -> str:
    return "nothing" if v is None else type(v).__name__


def _gold_block_from_scores(q: _Line, scores: Sequence[float], gold_pos: int, positive_index: int,
                            truncated: bool, appended: bool) -> tuple[tuple[int, int], bool]:
    """The gold's tie block from the listed scores (equal scores are contiguous once sorted), and whether it is
    certain (False: the gold sits below the cut with unlisted neighbours, so ties with them cannot be seen)."""
    s = scores[gold_pos]
    prefix = len(scores) - 1 if appended else len(scores)  # listed candidates ranked 1..prefix
    if appended:
        if prefix and scores[prefix - 1] == s:
            raise q.fail("the gold, appended after the listed top candidates, ties with the last of them: the tie "
                         "block reaches into unlisted ranks, so give 'gold_block'")
        return (positive_index + 1, positive_index + 1), positive_index == prefix
    lo = gold_pos
    while lo > 0 and scores[lo - 1] == s:
        lo -= 1
    hi = gold_pos
    while hi + 1 < prefix and scores[hi + 1] == s:
        hi += 1
    if truncated and hi == prefix - 1:
        raise q.fail("the gold's tie block reaches the end of the listed top candidates of a cut list: give "
                     "'gold_block'")
    return (lo + 1, hi + 1), True


def _check_gold_block(q: _Line, block: tuple[int, int], scores: Sequence[float] | None, gold_pos: int,
                      positive_index: int, appended: bool, n_candidates: int) -> None:
    first, last = block
    if not 1 <= first <= positive_index + 1 <= last <= n_candidates:
        raise q.fail(f"gold_block {list(block)} must satisfy 1 <= first <= gold rank ({positive_index + 1}) <= last "
                     f"<= n_candidates ({n_candidates})")
    if scores is None:
        return
    s = scores[gold_pos]
    prefix = len(scores) - 1 if appended else len(scores)
    for i in range(prefix):
        if i == gold_pos:
            continue
        inside = first <= i + 1 <= last
        if inside != (scores[i] == s):
            raise q.fail(f"gold_block {list(block)} disagrees with scores: rank {i + 1} has score {scores[i]!r}, the "
                         f"gold {s!r}")


def parse_line(path: str, lineno: int, rec: Any) -> tuple[RankedQuery, list[str]]:
    """Validate one decoded line; returns the query and notes (normalisations, ties that cannot be seen).

    Raises:
        InputError: wrong types, lengths that differ, a gold that is not where `positive_index` says, scores not
            sorted descending, an inconsistent `gold_block`.
    """
    if not isinstance(rec, dict):
        raise InputError(path, lineno, f"expected a JSON object, got {_kind(rec)}")
    q = _Line(path, lineno, rec)
    notes: list[str] = []
    qid = q.string("id")
    relation = q.string("relation")
    assert qid is not None and relation is not None
    if is_blank(qid):
        raise q.fail("field 'id' is empty: every query needs an id of its own (reviews and exports name it)")
    if len(qid) > MAX_ID_CHARS:
        raise q.fail(f"field 'id' is {len(qid):,} characters long; the limit is {MAX_ID_CHARS:,}")
    for name in ("query", "context", "anchor_text", "positive"):
        text = rec.get(name)
        if isinstance(text, str) and len(text) > MAX_QUERY_CHARS:
            raise q.fail(f"field {name!r} is {len(text):,} characters long; the limit is {MAX_QUERY_CHARS:,} "
                         "(scoring.limits.MAX_QUERY_CHARS)")
    if relation in RELATION_ALIASES:
        notes.append(f"relation {relation!r} renamed {RELATION_ALIASES[relation]!r}")
        relation = RELATION_ALIASES[relation]
    if relation not in RELATIONS:
        raise q.fail(f"relation must be one of {', '.join(RELATIONS)} (or analogy/blend), got {relation!r}")
    candidates = q.strings("candidates")
    texts = q.strings("candidates_text")
    for i, text in enumerate(texts):
        if len(text) > MAX_QUERY_CHARS:
            raise q.fail(f"candidates_text[{i}] is {len(text):,} characters long; the limit is {MAX_QUERY_CHARS:,} "
                         "(scoring.limits.MAX_QUERY_CHARS)")
    scores = q.numbers("scores")
    if not candidates:
        raise q.fail("candidates is empty")
    if len(texts) != len(candidates):
        raise q.fail(f"candidates_text has {len(texts)} entries but candidates has {len(candidates)}")
    if scores is not None and len(scores) != len(candidates):
        raise q.fail(f"scores has {len(scores)} entries but candidates has {len(candidates)}")
    seen: dict[str, int] = {}
    for i, c in enumerate(candidates):
        if c in seen:
            raise q.fail(f"candidate id {c!r} is listed twice (candidates[{seen[c]}] and candidates[{i}])")
        seen[c] = i
    positive_id = q.string("positive_id")
    assert positive_id is not None
    if positive_id not in seen:
        raise q.fail(f"positive_id {positive_id!r} is not among the candidates")
    gold_pos = seen[positive_id]
    positive_index = q.integer("positive_index")
    assert positive_index is not None
    listed_n = len(candidates)
    n_candidates = q.integer("n_candidates", optional=True)
    if n_candidates is None:
        n_candidates = listed_n
    if n_candidates < listed_n:
        raise q.fail(f"n_candidates ({n_candidates}) is smaller than the {listed_n} listed candidates")
    truncated = n_candidates > listed_n
    appended = positive_index != gold_pos
    if appended:
        # the only other layout: a cut top K with the gold appended last, at its true rank below the cut
        if not (truncated and gold_pos == listed_n - 1 and listed_n - 1 < positive_index < n_candidates):
            shown = repr(candidates[positive_index]) if 0 <= positive_index < listed_n else \
                f"nothing (past the {listed_n} listed candidates of a list that is not cut)"
            raise q.fail(f"positive_index {positive_index} points to {shown}, not to positive_id {positive_id!r} "
                         f"(listed at index {gold_pos})")
    if scores is not None:
        for i in range(1, listed_n):
            if scores[i] > scores[i - 1]:
                raise q.fail(f"scores are not sorted descending: scores[{i}] = {scores[i]!r} > scores[{i - 1}] = "
                             f"{scores[i - 1]!r}")
    raw_block = rec.get("gold_block")
    if raw_block is not None:
        if not (isinstance(raw_block, list) and len(raw_block) == 2
                and all(isinstance(x, int) and not isinstance(x, bool) for x in raw_block)):
            raise q.fail(f"gold_block must be [first, last] (two integers), got {raw_block!r}")
        block = (raw_block[0], raw_block[1])
        _check_gold_block(q, block, scores, gold_pos, positive_index, appended, n_candidates)
    elif scores is not None:
        block, certain = _gold_block_from_scores(q, scores, gold_pos, positive_index, truncated, appended)
        if not certain:
            notes.append(UNSEEN_TIES)
    else:
        block = (positive_index + 1, positive_index + 1)
    cross = rec.get("is_cross_domain")
    if cross is not None and not isinstance(cross, bool):
        raise q.fail(f"field 'is_cross_domain' must be true, false or absent, got {cross!r}")
    query = RankedQuery(
        id=qid, query=q.string("query") or "", context=q.string("context", optional=True),
        anchor_text=q.string("anchor_text") or "", relation=relation, positive=q.string("positive") or "",
        positive_id=positive_id, candidates=candidates, candidates_text=texts, positive_index=positive_index,
        is_cross_domain=cross, scores=scores, n_candidates=n_candidates, gold_block=block,
        anchor_id=q.string("anchor_id", optional=True), line=lineno)
    return query, notes


def load_rankings(path: str | Path) -> LoadedRankings:
    """Read a ranking results file (JSON lines; blank lines skipped).

    Raises:
        InputError: file missing or empty, malformed JSON, duplicate query ids, or any `parse_line` failure.
    """
    path = str(path)
    queries: list[RankedQuery] = []
    first_line: dict[str, int] = {}
    notes: dict[str, int] = {}
    no_scores = 0
    for lineno, rec in read_records(path, what="rankings file", objects=False):
        q, line_notes = parse_line(path, lineno, rec)
        if q.id in first_line:
            raise InputError(path, lineno, f"duplicate query id {q.id!r} (first on line {first_line[q.id]})")
        first_line[q.id] = lineno
        queries.append(q)
        no_scores += q.scores is None
        for n in line_notes:
            notes[n] = notes.get(n, 0) + 1
    if not queries:
        raise InputError(path, None, "no queries in the rankings file")
    unseen = notes.pop(UNSEEN_TIES, 0)
    out = LoadedRankings(queries, [f"{n} ({k} queries)" for n, k in notes.items()])
    if unseen:
        out.warnings.append(f"{UNSEEN_TIES} ({unseen} queries)")
    if no_scores:
        out.warnings.append(f"{no_scores} of {len(queries)} queries carry no scores: ties cannot be seen there, so "
                            "every tie policy gives the rank as written (the paper's sort broke ties arbitrarily)")
    flagged = sum(q.is_cross_domain is not None for q in queries)
    if 0 < flagged < len(queries):
        out.warnings.append(f"only {flagged} of {len(queries)} queries say whether they are cross-domain; the others "
                            "are left out of the cross_domain subset")
    return out
