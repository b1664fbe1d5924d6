"""Candidate decisions and per-query counts: how a review of the candidates above the gold changes the ranks.

One decision per query and candidate a reviewer may accept (`metrics.reviewable_positions`: within the top 100,
above the gold or tied with it). The judge label is the benchmark's assumption, `not-acceptable`, unless a replay
log says otherwise. Per-query counts hold, per subset the query belongs to and per tie policy, its rank and the
summable figures, so that `metrics_from_counts(sum, per_doc)` equals `metrics.full_report` with the accepted
candidates removed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import fields

from scoring.decisions import Decision
from scoring.families.retrieval.judge import CandidateQuestion, label_of
from scoring.families.retrieval.metrics import (
    assemble_report,
    block_counts,
    expected_hit,
    expected_reciprocal,
    rank_in_block,
    rank_range,
    reviewable_positions,
    subsets_of,
    summarise,
)
from scoring.families.retrieval.model import (
    ACCEPTABLE,
    DEFAULT_POLICY,
    HITS_AT,
    KIND,
    METRIC_NAMES,
    NOT_ACCEPTABLE,
    SUBSETS,
    TIE_POLICIES,
    RankedQuery,
    TiePolicy,
)
from scoring.families.retrieval.ranktable import policy_summaries
from scoring.judges.answer import MISSING, Answer, JudgeStats, answer_dict
from scoring.judges.asking import ask_with_cache
from scoring.judges.transport import AnswerCache, Judge, Progress

OUTCOMES = ("top 1", "top 10", "top 100", "below 100")
"""Where the gold lands (audited, mean tie policy): for filtering the query list."""


def candidate_question(q: RankedQuery, i: int) -> CandidateQuestion:
    """The judge question about the candidate listed at index i of query q."""
    return CandidateQuestion(q.id, q.query, q.relation, q.candidates[i], q.positive_id)


def decide(queries: Sequence[RankedQuery], judge: Judge, cache: AnswerCache | None = None,
           progress: Progress | None = None, stats: JudgeStats | None = None) -> tuple[Sequence[Decision], JudgeStats]:
    """One `candidate` decision per reviewable candidate of every query, labelled by the judge (a `Decisions`
    sequence: each made when it is read)."""
    stats = stats if stats is not None else JudgeStats()
    where = [(q, i) for q in queries for i in reviewable_positions(q)]
    questions = [candidate_question(q, i) for q, i in where]
    stats.distinct_queries = len(questions)
    answers = _interned(ask_with_cache(judge, questions, cache, stats, progress))
    del questions
    for (q, i), a in zip(where, answers, strict=True):
        if a.value == MISSING and len(stats.missing_examples) < 10:  # ask_with_cache counted them already
            stats.missing_examples.append({"query_id": q.id, "candidate_id": q.candidates[i], "why": a.rationale})
    return Decisions(where, answers), stats


def _interned(answers: list[Answer]) -> list[Answer]:
    """Equal answers as one object (answers are frozen): a judge gives a few distinct answers to 683k questions,
    and an object each held 80 MB until the run was stored (#38)."""
    seen: dict[Answer, Answer] = {}
    by_id: dict[int, Answer] = {}  # the same object again (a judge's shared answer) is not hashed again
    out = []
    try:
        for a in answers:
            found = by_id.get(id(a))
            if found is None:
                found = by_id[id(a)] = seen.setdefault(a, a)
            out.append(found)
    except TypeError:  # a field that cannot be hashed (none today): kept as they are
        return answers
    return out


class Decisions(Sequence[Decision]):
    """A run's candidate decisions, each `Decision` (and its detail dict) made when it is read, from its query,
    position and judge answer: the run's 683k decisions held at once were 300 MB of a 10,000-query `score` (#38);
    the store reads them one at a time. Equal judge answers share one answer dict (read-only), as before."""

    def __init__(self, where: list[tuple[RankedQuery, int]], answers: list[Answer]) -> None:
        self._where, self._answers = where, answers
        self._shared: dict[tuple, dict] = {}
        self._dicts: dict[Answer, dict] = {}  # answer -> its shared dict: made once per distinct answer
        # id(answer) -> (label, shared dict): `answers` holds every answer for the sequence's life, so an id stays
        # one answer's; hashing a frozen Answer on each of the store's reads of 683k decisions cost seconds (#38)
        self._by_id: dict[int, tuple[str, dict]] = {}
        self._shared_by: tuple = (None, None, "")  # (query, answer, their part of the detail text): `detail_text`

    def __len__(self) -> int:
        return len(self._where)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        (q, pos), a = self._where[i], self._answers[i]
        label, answer = self._label_and_answer(a)
        detail = {"rank": pos + 1, "text": q.candidates_text[pos], "tied_with_gold": pos + 1 >= q.gold_block[0],
                  "anchor": q.anchor_text, "gold": q.positive, "gold_rank": q.positive_index + 1,
                  "gold_ranks": list(q.gold_block), "answer": answer}
        if q.scores is not None:
            detail["score"] = q.scores[pos]
        return Decision(q.id, KIND, q.relation, q.candidates[pos], q.positive_id, label, detail)

    def doc_ids(self) -> list[str]:
        """Each decision's document (query) id, in order: `fields(i)[0]` for every i, without the rest (#38)."""
        return [q.id for q, _ in self._where]

    def fields(self, i: int) -> tuple[str, str, str, str, str, str]:
        """(doc, kind, type, left, right, judge) of decision i, without making it (what the store reads twice)."""
        (q, pos), a = self._where[i], self._answers[i]
        return q.id, KIND, q.relation, q.candidates[pos], q.positive_id, self._label_and_answer(a)[0]

    def detail_text(self, i: int, dumps: Callable[[object], str]) -> str:
        """`dumps(self[i].detail)`, without making it: the parts the query and the answer share are spelled by
        `dumps` once per query, the candidate's rank, text, tie and score as JSON spells them (encoding every
        detail dict whole was 2.8 s of storing 683k decisions, #38)."""
        (q, pos), a = self._where[i], self._answers[i]
        if q is not self._shared_by[0] or a is not self._shared_by[1]:
            self._shared_by = (q, a, ',"anchor":' + dumps(q.anchor_text) + ',"gold":' + dumps(q.positive)
                               + ',"gold_rank":' + dumps(q.positive_index + 1) + ',"gold_ranks":'
                               + dumps(list(q.gold_block)) + ',"answer":'
                               + dumps(self._label_and_answer(a)[1]))
        text = ('{"rank":' + _json_scalar(pos + 1, dumps) + ',"text":' + _json_scalar(q.candidates_text[pos], dumps)
                + (',"tied_with_gold":true' if pos + 1 >= q.gold_block[0] else ',"tied_with_gold":false')
                + self._shared_by[2])
        if q.scores is not None:
            return text + ',"score":' + _json_scalar(q.scores[pos], dumps) + "}"
        return text + "}"

    def _label_and_answer(self, a: Answer) -> tuple[str, dict]:
        found = self._by_id.get(id(a))
        if found is None:
            found = self._by_id[id(a)] = (label_of(a), self._answer(a))
        return found

    def _answer(self, a: Answer) -> dict:
        try:
            found = self._dicts.get(a)
        except TypeError:  # an answer that cannot be hashed (none today)
            return _shared_answer(answer_dict(a), self._shared)
        if found is None:
            found = self._dicts[a] = _shared_answer(answer_dict(a), self._shared)
        return found

    def __iter__(self):
        return map(self.__getitem__, range(len(self)))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Sequence) and len(self) == len(other)
                and all(a == b for a, b in zip(self, other, strict=True)))

    __hash__ = None  # type: ignore[assignment]


def _json_scalar(value: object, dumps: Callable[[object], str]) -> str:
    """What `dumps` (JSON) spells for a str, int or finite float, spelled without an encoder; `dumps` for the rest."""
    kind = type(value)
    if kind is str:
        return _json_string(value)
    if kind is int or (kind is float and math.isfinite(value)):  # type: ignore[arg-type]
        return repr(value)
    return dumps(value)


_json_string = json.encoder.encode_basestring  # json.dumps's spelling of a string with ensure_ascii=False


def _shared_answer(answer: dict, shared: dict[tuple, dict]) -> dict:
    try:
        return shared.setdefault(tuple(answer.items()), answer)
    except TypeError:  # a value that cannot be a key (none today): kept as it is
        return answer


def accepted_from_labels(labels: Mapping[tuple[str, str, str, str], str]) -> set[str]:
    """Candidate ids whose effective label is `acceptable`, from {(kind, type, left, right): label}."""
    return {left for (kind, _t, left, _r), lab in labels.items() if kind == KIND and lab == ACCEPTABLE}


def query_counts(q: RankedQuery, accepted: Collection[str] = ()) -> dict:
    """Counts of one query: `domain_flagged` (1 if it says whether it is cross-domain) and, per subset it is in,
    `with_ties` (1 if the gold still shares its score) and per tie policy `n`, `rank`, `rr` (1/rank), `hits@K`."""
    above, tied = block_counts(q, accepted)
    per_policy = {}
    for p in TIE_POLICIES:
        span = rank_range(above, tied, p)
        per_policy[p] = {"n": 1, "rank": rank_in_block(above, tied, p), "rr": expected_reciprocal(span),
                         **{f"hits@{k}": _count(expected_hit(span, k)) for k in HITS_AT}}
    out: dict = {"domain_flagged": int(q.is_cross_domain is not None)}
    for s in subsets_of(q):
        out[s] = {"with_ties": int(tied > 0), **{p: dict(v) for p, v in per_policy.items()}}
    return out


def _count(x: float) -> int | float:
    """A hit count as an int when it is one (no tie at the cut-off), else the expected count."""
    return int(x) if x in (0.0, 1.0) else x


def _range_of(counts: Mapping, policy: TiePolicy) -> tuple[int, int]:
    """A query's rank range under `policy` from its counts: the optimistic and pessimistic ranks bound the mean
    policy's (so counts stored before the mean policy took expectations read the same)."""
    if policy == "mean":
        return int(counts["optimistic"]["rank"]), int(counts["pessimistic"]["rank"])
    r = int(counts[policy]["rank"])
    return r, r


def rank_span(counts: Mapping, policy: TiePolicy) -> tuple[int, int]:
    """A query's rank range under `policy` from its counts within one subset (public form of `_range_of`)."""
    return _range_of(counts, policy)


def _subsets(total: Mapping, per_doc: Sequence[Mapping] | None) -> list[str]:
    flagged = total.get("domain_flagged", 0) > 0 or any(d.get("domain_flagged", 0) for d in per_doc or ())
    return [s for s in SUBSETS if s != "cross_domain" or flagged]


def _summary_from_sums(sums: Mapping | None) -> dict:
    """Figures from summed counts alone (no median: that needs each query's rank)."""
    if not sums or not sums.get("n"):
        return summarise(())
    n = sums["n"]
    out = {"n": n, "mr": sums["rank"] / n, "mrr": sums["rr"] / n}
    out.update({f"hits@{k}": sums[f"hits@{k}"] / n for k in HITS_AT})
    out["median_rank"] = None
    return out


def metrics_with_policy(per_doc: Sequence[Mapping], policy: TiePolicy = DEFAULT_POLICY) -> dict:
    """`{subset: summary}` under one tie policy, from every query's counts (`query_counts`)."""
    return policy_summaries(per_doc)[policy]


def metrics_from_counts(total: Mapping, per_doc: Sequence[Mapping] | None = None,
                        policy: TiePolicy = DEFAULT_POLICY) -> dict:
    """The metrics JSON (`metrics.full_report` layout) from summed counts and, for medians, each query's counts."""
    subsets = _subsets(total, per_doc)
    if per_doc is not None:
        by_policy = policy_summaries(per_doc)
    else:
        by_policy = {p: {s: _summary_from_sums(total.get(s, {}).get(p)) for s in subsets} for p in TIE_POLICIES}
    with_ties = {s: total.get(s, {}).get("with_ties", 0) for s in subsets}
    return assemble_report(by_policy, with_ties, policy)


def outcome(counts: Mapping) -> str:
    """One of OUTCOMES from a query's counts (audited, mean policy)."""
    r = counts["all"]["mean"]["rank"]
    return "top 1" if r <= 1 else "top 10" if r <= 10 else "top 100" if r <= 100 else "below 100"


COLUMN_TITLES = {"n": "queries", "mr": "mean rank", "mrr": "MRR", "median_rank": "median rank",
                 **{f"hits@{k}": f"Hits@{k}" for k in HITS_AT}}
"""What the tables (Scores page, change strip, LaTeX) call each metric."""


def metric_rows(metrics: Mapping) -> list[dict]:
    """One row per tie policy and subset: section (policy), type (subset) and the figures."""
    rows = []
    for p, by_subset in metrics.get("tie_policies", {}).items():
        for s, summary in by_subset.items():
            rows.append({"section": f"ties: {p}", "type": s,
                         **{COLUMN_TITLES.get(m, m): summary.get(m) for m in METRIC_NAMES}})
    return rows


# ---------------------------------------------------------------- (de)serialisation for the store


_QUERY_FIELDS = tuple(f.name for f in fields(RankedQuery))
_SEQUENCES = frozenset(("candidates", "candidates_text", "scores", "gold_block"))


def query_to_json(q: RankedQuery) -> dict:
    """The query's fields in declaration order, its tuples as lists (read field by field: `dataclasses.asdict`
    deep-copies every candidate and was half the time of scoring 10k queries)."""
    d = {k: getattr(q, k) for k in _QUERY_FIELDS}
    for k in _SEQUENCES:
        if d[k] is not None:
            d[k] = list(d[k])
    return d


def query_from_json(d: Mapping) -> RankedQuery:
    return RankedQuery(
        id=d["id"], query=d["query"], context=d.get("context"), anchor_text=d["anchor_text"], relation=d["relation"],
        positive=d["positive"], positive_id=d["positive_id"], candidates=tuple(d["candidates"]),
        candidates_text=tuple(d["candidates_text"]), positive_index=d["positive_index"],
        is_cross_domain=d.get("is_cross_domain"), scores=tuple(d["scores"]) if d.get("scores") is not None else None,
        n_candidates=d["n_candidates"], gold_block=(d["gold_block"][0], d["gold_block"][1]),
        anchor_id=d.get("anchor_id"), line=d.get("line", 0))


def judge_log_records(decisions: Sequence[object]) -> list[dict]:
    """Replay lines (`judge.LOG_FORMAT`) for candidate decisions or decision rows with a readable judge label."""
    out = []
    for d in decisions:
        label = _get(d, "judge")
        if _get(d, "kind") == KIND and label in (ACCEPTABLE, NOT_ACCEPTABLE):
            out.append({"query_id": str(_get(d, "doc")), "candidate_id": str(_get(d, "left")), "answer": label})
    return out


def _get(d: object, name: str) -> object:
    return d.get(name) if isinstance(d, Mapping) else getattr(d, name, None)
