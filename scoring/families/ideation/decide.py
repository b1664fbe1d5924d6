"""Ideation documents, decisions and per-question counts.

A document is one research question with its pool of ideas and the judge's answers about them. Decisions:
- `rating` (type = criterion, left = system, right = ""): one per question x idea x criterion; label `1`..`5`
  or `invalid` (unreadable or absent).
- `comparison` (type = criterion, left = a, right = b with a < b by system name): one per question x criterion x
  unordered pair, asked twice (a first, b first). Label: the idea both calls agree on (`a`, `b`) or `tie`,
  else `split` (the winner changed with the order, or one call was a tie), or `invalid` (a call unreadable or
  not asked). A reviewed label a / b / tie sets the verdict of both calls.

`doc_counts` gives the per-question numbers that `family.IdeationTask.metrics` turns into the same JSON as
`scores.ideation_scores` over the verdicts with reviewed labels substituted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from scoring.decisions import Decision
from scoring.families.ideation.model import (
    COMPARISON,
    FIRST,
    INVALID,
    RATING,
    SCORE_LABELS,
    SECOND,
    SPLIT,
    TIE,
    WIN_A,
    WIN_B,
    WIN_TIE,
    Question,
    Rating,
    Verdict,
)
from scoring.families.ideation.scores import BIAS_COUNT_KEYS, bias_counts, call_outcomes, normalise

MISSING = "missing"
"""Verdict / status of a call or rating the input files do not have (the judge was not asked)."""
Labels = Mapping[tuple[str, str, str, str], str]


@dataclass
class IdeationDoc:
    """One question with the judge's answers about its ideas (filled by `attach`)."""

    question: Question
    absolute_criteria: tuple[str, ...] = ()
    pairwise_criteria: tuple[str, ...] = ()
    ratings: dict[tuple[str, str], Rating] = field(default_factory=dict)
    """{(system, criterion): rating}."""
    calls: dict[tuple[str, str, str], Verdict] = field(default_factory=dict)
    """{(criterion, first, second): call}."""


def attach(questions: Sequence[Question], ratings: Iterable[Rating] | None, verdicts: Iterable[Verdict] | None,
           ) -> list[IdeationDoc]:
    """Documents with their ratings and calls; criteria lists are run-wide (every question is asked all)."""
    ratings = list(ratings) if ratings is not None else None
    verdicts = list(verdicts) if verdicts is not None else None
    abs_c = tuple(dict.fromkeys(r.criterion for r in ratings)) if ratings is not None else ()
    pair_c = tuple(dict.fromkeys(v.criterion for v in verdicts)) if verdicts is not None else ()
    docs = {q.question_id: IdeationDoc(q, abs_c, pair_c) for q in questions}
    for r in ratings or ():
        docs[r.question_id].ratings[(r.system, r.criterion)] = r
    for v in verdicts or ():
        docs[v.question_id].calls[(v.criterion, v.first, v.second)] = v
    return list(docs.values())


def unordered_pairs(systems: Sequence[str]) -> list[tuple[str, str]]:
    """Every {a, b} with a < b by system name."""
    s = sorted(systems)
    return [(a, b) for i, a in enumerate(s) for b in s[i + 1:]]


def pair_label(v_ab: str | None, v_ba: str | None) -> str:
    """The comparison label from the call with a first (`v_ab`) and with b first (`v_ba`); None = not asked."""
    win_ab = {FIRST: WIN_A, SECOND: WIN_B, TIE: WIN_TIE}.get(v_ab or "")
    win_ba = {FIRST: WIN_B, SECOND: WIN_A, TIE: WIN_TIE}.get(v_ba or "")
    if win_ab is None or win_ba is None:
        return INVALID
    return win_ab if win_ab == win_ba else SPLIT


def slot_verdicts(label: str) -> tuple[str, str] | None:
    """Both calls' slot verdicts (a first, b first) that a reviewed label a / b / tie stands for."""
    return {WIN_A: (FIRST, SECOND), WIN_B: (SECOND, FIRST), WIN_TIE: (TIE, TIE)}.get(label)


def rating_label(r: Rating | None) -> str:
    return str(r.score) if r is not None and r.score is not None else INVALID


def _call_detail(v: Verdict | None, first: str, second: str, a: str) -> dict:
    verdict = v.verdict if v is not None else MISSING
    winner = {FIRST: first, SECOND: second}.get(verdict)
    return {"first": first, "second": second, "verdict": verdict,
            "winner": WIN_TIE if verdict == TIE else (None if winner is None else WIN_A if winner == a else WIN_B),
            "rationale": v.rationale if v else None, "raw": v.raw if v else None, "line": v.line if v else None}


def decisions(doc: IdeationDoc) -> list[Decision]:
    """The document's decisions: ratings (if absolute ratings were given) then comparisons (if pairwise)."""
    q = doc.question
    out = []
    for c in doc.absolute_criteria:
        for system in q.systems:
            r = doc.ratings.get((system, c))
            status = MISSING if r is None else ("ok" if r.score is not None else INVALID)
            out.append(Decision(q.question_id, RATING, c, system, "", rating_label(r),
                                {"score": r.score if r else None, "rationale": r.rationale if r else None,
                                 "raw": r.raw if r else None, "status": status, "line": r.line if r else None}))
    for c in doc.pairwise_criteria:
        for a, b in unordered_pairs(q.systems):
            ab, ba = doc.calls.get((c, a, b)), doc.calls.get((c, b, a))
            label = pair_label(ab.verdict if ab else None, ba.verdict if ba else None)
            out.append(Decision(q.question_id, COMPARISON, c, a, b, label,
                                {"calls": [_call_detail(ab, a, b, a), _call_detail(ba, b, a, a)]}))
    return out


def to_payload(doc: IdeationDoc) -> dict:
    """JSON-able document: ideas, criteria and the judge's scores and slot verdicts (rationales stay in the
    decisions' detail)."""
    q = doc.question
    return {
        "question_id": q.question_id, "question": q.question,
        "ideas": [{"system": i.system, "idea": i.idea, "extra": i.extra} for i in q.ideas],
        "absolute_criteria": list(doc.absolute_criteria), "pairwise_criteria": list(doc.pairwise_criteria),
        "scores": [[r.system, r.criterion, r.score] for r in doc.ratings.values()],
        "calls": [[v.criterion, v.first, v.second, v.verdict] for v in doc.calls.values()],
    }


def doc_counts(payload: Mapping, labels: Labels) -> dict:
    """Per-question counts under effective labels (judge's answer where `labels` lacks a decision).

    - `absolute[system][criterion]`: `sum` (the valid score or 0), `n_valid`, `n_invalid` (0/1 each);
    - `pairwise[system][criterion]`: `S`, `n_valid`, `n_invalid` (calls), `pool` (N), `fixed` and (when the
      idea has a valid call) `valid` normalised scores, `q_fixed`, `q_valid` (1 when that score is defined);
    - `position_bias[criterion]`: `scores.bias_counts` summed over the question's pairs;
    - `wins[criterion][system][opponent]`: `wins`, `losses`, `ties` over valid calls;
    - `single_idea`: 1 when pairwise criteria exist and the pool has one idea; `questions`: 1.
    """
    systems = [i["system"] for i in payload["ideas"]]
    out: dict = {"questions": 1}
    judge_scores = {(s, c): score for s, c, score in payload["scores"]}
    absolute: dict = {}
    for c in payload["absolute_criteria"]:
        for s in systems:
            label = labels.get((RATING, c, s, ""))
            if label is None:
                score = judge_scores.get((s, c))
            else:
                score = int(label) if label in SCORE_LABELS else None
            absolute.setdefault(s, {})[c] = {"sum": score or 0, "n_valid": int(score is not None),
                                             "n_invalid": int(score is None)}
    if absolute:
        out["absolute"] = absolute
    crits = payload["pairwise_criteria"]
    if not crits:
        return out
    n = len(systems)
    if n < 2:
        out["single_idea"] = 1
        out["position_bias"] = {c: dict.fromkeys(BIAS_COUNT_KEYS, 0) for c in crits}
        return out
    judge_calls = {(c, f, s): v for c, f, s, v in payload["calls"]}
    pairwise: dict = {}
    bias: dict = {}
    wins: dict = {}
    for c in crits:
        totals = {s: [0, 0] for s in systems}
        bias_c = bias.setdefault(c, {})
        for a, b in unordered_pairs(systems):
            reviewed = slot_verdicts(labels.get((COMPARISON, c, a, b), ""))
            v_ab, v_ba = reviewed if reviewed else (judge_calls.get((c, a, b)), judge_calls.get((c, b, a)))
            for k, x in bias_counts(v_ab, v_ba).items():
                bias_c[k] = bias_c.get(k, 0) + x
            for first, second, v in ((a, b, v_ab), (b, a, v_ba)):
                oc = call_outcomes(v or "")
                if oc is None:
                    continue
                for me, other, o in ((first, second, oc[0]), (second, first, oc[1])):
                    totals[me][0] += o
                    totals[me][1] += 1
                    t = wins.setdefault(c, {}).setdefault(me, {}).setdefault(other, {"wins": 0, "losses": 0, "ties": 0})
                    t["wins" if o > 0 else "losses" if o < 0 else "ties"] += 1
        for s in systems:
            total_s, valid = totals[s]
            cell = {"S": total_s, "n_valid": valid, "n_invalid": 2 * (n - 1) - valid, "pool": n,
                    "fixed": normalise(total_s, valid, n, "fixed"), "q_fixed": 1, "q_valid": int(valid > 0)}
            if valid:
                cell["valid"] = normalise(total_s, valid, n, "valid")
            pairwise.setdefault(s, {})[c] = cell
    out.update(pairwise=pairwise, position_bias=bias, wins=wins)
    return out


def doc_outcome(counts: Mapping) -> str:
    """`invalid` (an invalid rating or call), `split` (a pair whose two calls disagree), else `clean`."""
    invalid = any(cell["n_invalid"] for row in counts.get("absolute", {}).values() for cell in row.values())
    bias = counts.get("position_bias", {}).values()
    if invalid or any(b.get("invalid_calls") for b in bias):
        return "invalid"
    if any(b.get("flips") or b.get("partial") for b in bias):
        return "split"
    return "clean"
