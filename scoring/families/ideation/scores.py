"""Ideation scores as pure functions of pools, ratings and pairwise verdicts (docs: ideation.md sections 2-5).

- `absolute_scores`: per system and criterion, the mean of the valid 1-5 ratings (invalid ones never imputed,
  counted in `n_invalid`), with a bootstrap interval resampling questions.
- `pairwise_scores`: each call gives each idea an outcome from its own point of view (+1 win, -1 loss, 0 tie);
  S_i sums idea i's outcomes over its valid calls and is normalised to 1..5 per question:
  fixed bounds (default) 3 + S_i / (N - 1), N = ideas in that question's pool; valid bounds 3 + 2 S_i / n_i,
  n_i = valid calls involving i (missing when n_i = 0). A pool with a single idea has no pairwise score.
  Per system: mean over questions, bootstrap interval over questions, n_questions.
- `position_bias`: per criterion over unordered pairs whose two calls (one per order) are both valid.
- `win_rates`: per criterion and ordered system pair, decisive calls only.
- `ideation_scores`: all of the above in the metrics JSON of the ideation family.

A call the judge was not asked (no line in the pairwise file) counts like an invalid call; a rating that is
absent counts as invalid.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from scoring.families.ideation.model import FIRST, INVALID, SECOND, TIE, Rating, Verdict
from scoring.nouns import Noun
from scoring.stats.bootstrap import N_RESAMPLES, SEED, ratio_interval
from scoring.stats.intervals import wilson_interval

Pools = Mapping[str, Sequence[str]]
BOUNDS = ("fixed", "valid")


def _order(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _systems(pools: Pools, *, min_size: int = 1) -> list[str]:
    return _order(s for pool in pools.values() if len(pool) >= min_size for s in pool)


# ---------------------------------------------------------------------------------------------- absolute

def absolute_cell(sums: Sequence[float], n_valid: Sequence[int], n_invalid: int, *, n_resamples: int = N_RESAMPLES,
                  seed: int = SEED) -> dict:
    """One (system, criterion) cell from per-question sums and valid counts (questions in document order).

    mean = sum of valid scores / number of valid scores; the interval resamples the questions that have at
    least one valid rating.
    """
    keep = [(s, n) for s, n in zip(sums, n_valid, strict=True) if n > 0]
    total_n = sum(n for _, n in keep)
    return {"mean": math.fsum(s for s, _ in keep) / total_n if total_n else None,
            "ci": ratio_interval([s for s, _ in keep], [n for _, n in keep], n_resamples=n_resamples, seed=seed),
            "n_valid": total_n, "n_invalid": n_invalid}


def absolute_scores(ratings: Iterable[Rating], pools: Pools, criteria: Sequence[str] | None = None, *,
                    n_resamples: int = N_RESAMPLES, seed: int = SEED) -> dict:
    """{system: {criterion: {"mean", "ci", "n_valid", "n_invalid"}}}.

    Every (question, system in its pool, criterion) is expected once: a rating with `score` None and an absent
    rating both count in `n_invalid`. `criteria` defaults to those the ratings use, in order of appearance.
    """
    ratings = list(ratings)
    crits = list(criteria) if criteria is not None else _order(r.criterion for r in ratings)
    got = {(r.question_id, r.system, r.criterion): r.score for r in ratings}
    out: dict = {}
    for system in _systems(pools):
        for c in crits:
            sums, ns, invalid = [], [], 0
            for qid, pool in pools.items():
                if system not in pool:
                    continue
                score = got.get((qid, system, c))
                sums.append(score or 0)
                ns.append(score is not None)
                invalid += score is None
            out.setdefault(system, {})[c] = absolute_cell(sums, [int(n) for n in ns], invalid,
                                                          n_resamples=n_resamples, seed=seed)
    return out


# ---------------------------------------------------------------------------------------------- pairwise

def call_outcomes(verdict: str) -> tuple[int, int] | None:
    """(outcome of the idea shown first, outcome of the idea shown second), or None for an invalid call.

    Each idea's outcome is from its own point of view: +1 it won, -1 it lost, 0 a tie.
    """
    return {FIRST: (1, -1), SECOND: (-1, 1), TIE: (0, 0)}.get(verdict)


def normalise(s: int, n_valid: int, pool: int, bounds: str = "fixed") -> float | None:
    """An idea's pairwise score on 1..5 from S (sum of outcomes), its valid calls and the pool size N.

    fixed: 3 + S / (N - 1) (bounds +-2(N-1)); valid: 3 + 2 S / n_valid (bounds +-n_valid). None when undefined
    (N < 2, or no valid call in valid-bounds mode).
    """
    if bounds not in BOUNDS:
        raise ValueError(f"bounds must be one of {', '.join(BOUNDS)}, got {bounds!r}")
    if pool < 2:
        return None
    if bounds == "fixed":
        return 3 + s / (pool - 1)
    return 3 + 2 * s / n_valid if n_valid else None


def idea_totals(verdicts: Iterable[Verdict]) -> dict[tuple[str, str, str], list[int]]:
    """{(question, criterion, system): [S, valid calls]} over the given calls."""
    out: dict[tuple[str, str, str], list[int]] = {}
    for v in verdicts:
        oc = call_outcomes(v.verdict)
        if oc is None:
            continue
        for system, o in zip((v.first, v.second), oc, strict=True):
            t = out.setdefault((v.question_id, v.criterion, system), [0, 0])
            t[0] += o
            t[1] += 1
    return out


def pairwise_cell(per_question: Sequence[float | None], n_invalid_calls: int, *, n_resamples: int = N_RESAMPLES,
                  seed: int = SEED) -> dict:
    """One (system, criterion) cell from its per-question normalised scores (None = undefined, skipped)."""
    vals = [x for x in per_question if x is not None]
    return {"score": math.fsum(vals) / len(vals) if vals else None,
            "ci": ratio_interval(vals, [1.0] * len(vals), n_resamples=n_resamples, seed=seed),
            "n_questions": len(vals), "n_invalid_calls": n_invalid_calls}


def single_idea_note(n: int) -> str:
    return (f"{Noun('question').count(n)} {'has' if n == 1 else 'have'} a single idea: no pairwise score there "
            "(N = 1 has no pairs; ideation.md section 3)")


def pairwise_scores(verdicts: Iterable[Verdict], pools: Pools, criteria: Sequence[str] | None = None, *,
                    bounds: str = "fixed", n_resamples: int = N_RESAMPLES, seed: int = SEED) -> dict:
    """{system: {criterion: {"score", "ci", "n_questions", "n_invalid_calls"}}} (see the module docstring).

    `n_invalid_calls` counts the calls involving the system's ideas that are invalid or were not asked
    (2(N-1) expected per idea). Questions with a single idea are left out.
    """
    verdicts = list(verdicts)
    crits = list(criteria) if criteria is not None else _order(v.criterion for v in verdicts)
    totals = idea_totals(verdicts)
    out: dict = {}
    for system in _systems(pools, min_size=2):
        for c in crits:
            per_q, invalid = [], 0
            for qid, pool in pools.items():
                if system not in pool or len(pool) < 2:
                    continue
                s, n = totals.get((qid, c, system), (0, 0))
                per_q.append(normalise(s, n, len(pool), bounds))
                invalid += 2 * (len(pool) - 1) - n
            out.setdefault(system, {})[c] = pairwise_cell(per_q, invalid, n_resamples=n_resamples, seed=seed)
    return out


# ---------------------------------------------------------------------------------------------- position bias

BIAS_COUNT_KEYS = ("pairs_compared", "pairs_lost_invalid", "consistent", "flips", "partial", "calls",
                   "invalid_calls", "tie_calls", "decisive_calls", "first_slot_wins")


def pair_calls(verdicts: Iterable[Verdict]) -> dict[tuple[str, str, str, str], str]:
    """{(question, criterion, first, second): verdict}."""
    return {(v.question_id, v.criterion, v.first, v.second): v.verdict for v in verdicts}


def idea_winner(verdict: str, first: str, second: str) -> str | None:
    """Which idea a call says won: a system name, `tie`, or None (invalid)."""
    return {FIRST: first, SECOND: second, TIE: TIE}.get(verdict)


def classify_pair(v_ab: str | None, v_ba: str | None) -> str | None:
    """The pair {a, b} asked as (a first) -> `v_ab` and (b first) -> `v_ba` (None = not asked).

    `consistent` (same idea won both times, or two ties), `flip` (the same slot won both times, so the winner
    changed with the order), `partial` (one tie, one decisive), or None when a call is invalid or missing.
    """
    valid = {FIRST, SECOND, TIE}
    if v_ab not in valid or v_ba not in valid:
        return None
    if v_ab == TIE and v_ba == TIE:
        return "consistent"
    if TIE in (v_ab, v_ba):
        return "partial"
    return "flip" if v_ab == v_ba else "consistent"


def bias_counts(v_ab: str | None, v_ba: str | None) -> dict[str, int]:
    """The position-bias counts of one unordered pair (keys `BIAS_COUNT_KEYS`)."""
    kind = classify_pair(v_ab, v_ba)
    calls = (v_ab, v_ba)
    return {"pairs_compared": int(kind is not None), "pairs_lost_invalid": int(kind is None),
            "consistent": int(kind == "consistent"), "flips": int(kind == "flip"), "partial": int(kind == "partial"),
            "calls": 2, "invalid_calls": sum(v in (None, INVALID) for v in calls),
            "tie_calls": sum(v == TIE for v in calls), "decisive_calls": sum(v in (FIRST, SECOND) for v in calls),
            "first_slot_wins": sum(v == FIRST for v in calls)}


def bias_summary(c: Mapping[str, int], *, tests: bool = True) -> dict:
    """Rates and the first-slot interval from summed `bias_counts` of one criterion (`tests=False`: the rates
    only, no interval or p-value, as for the other intervals when only the totals are given)."""
    def rate(k: int, n: int) -> float | None:
        return k / n if n else None

    pairs, decisive, wins = c.get("pairs_compared", 0), c.get("decisive_calls", 0), c.get("first_slot_wins", 0)
    # the interval and test are of counts: a partial audit's estimated totals are not whole numbers and get none
    whole = tests and float(wins).is_integer() and float(decisive).is_integer()
    if decisive and whole:
        from scipy.stats import binomtest  # 0.5 s to import: only where the test is made (not `queue --next`, #38)
    out = {
        "pairs_compared": pairs,
        "pairs_lost_invalid": c.get("pairs_lost_invalid", 0),
        "consistency_rate": rate(c.get("consistent", 0), pairs),
        "flip_rate": rate(c.get("flips", 0), pairs),
        "partial_rate": rate(c.get("partial", 0), pairs),
        "first_slot_win_share": rate(wins, decisive),
        "first_slot_ci": wilson_interval(wins, decisive) if whole else None,
        "first_slot_p": float(binomtest(int(wins), int(decisive), 0.5).pvalue) if decisive and whole else None,
        "tie_rate": rate(c.get("tie_calls", 0), c.get("calls", 0)),
        "invalid_rate": rate(c.get("invalid_calls", 0), c.get("calls", 0)),
    }
    out.update({k: c.get(k, 0) for k in BIAS_COUNT_KEYS if k not in out})
    return out


def _pairs(pool: Sequence[str]) -> list[tuple[str, str]]:
    s = sorted(pool)
    return [(a, b) for i, a in enumerate(s) for b in s[i + 1:]]


def position_bias(verdicts: Iterable[Verdict], pools: Pools, criteria: Sequence[str] | None = None) -> dict:
    """{criterion: {"pairs_compared", "pairs_lost_invalid", "consistency_rate", "flip_rate", "partial_rate",
    "first_slot_win_share", "first_slot_ci", ...}} over every unordered pair of every pool.

    First-slot share = decisive calls won by the idea shown first / decisive calls (0.5 = unbiased), with a
    Wilson 95% interval and a two-sided binomial test against 0.5 (`first_slot_p`).
    """
    verdicts = list(verdicts)
    crits = list(criteria) if criteria is not None else _order(v.criterion for v in verdicts)
    calls = pair_calls(verdicts)
    out = {}
    for c in crits:
        total: dict[str, int] = dict.fromkeys(BIAS_COUNT_KEYS, 0)
        for qid, pool in pools.items():
            for a, b in _pairs(pool):
                for k, n in bias_counts(calls.get((qid, c, a, b)), calls.get((qid, c, b, a))).items():
                    total[k] += n
        out[c] = bias_summary(total)
    return out


# ---------------------------------------------------------------------------------------------- win rates

def win_rate_cell(wins: int, losses: int, ties: int) -> dict:
    return {"wins": wins, "losses": losses, "ties": ties,
            "win_rate": wins / (wins + losses) if wins + losses else None}


def win_rates(verdicts: Iterable[Verdict], criteria: Sequence[str] | None = None) -> dict:
    """{criterion: {system: {opponent: {"wins", "losses", "ties", "win_rate"}}}}; win_rate over decisive calls."""
    verdicts = list(verdicts)
    crits = list(criteria) if criteria is not None else _order(v.criterion for v in verdicts)
    tally: dict = {}
    for v in verdicts:
        oc = call_outcomes(v.verdict)
        if oc is None or v.criterion not in crits:
            continue
        for me, other, o in ((v.first, v.second, oc[0]), (v.second, v.first, oc[1])):
            t = tally.setdefault(v.criterion, {}).setdefault(me, {}).setdefault(other, [0, 0, 0])
            t[0 if o > 0 else 1 if o < 0 else 2] += 1
    return {c: {me: {other: win_rate_cell(*t) for other, t in row.items()} for me, row in by.items()}
            for c, by in tally.items()}


# ---------------------------------------------------------------------------------------------- all together

def summary(result: Mapping) -> dict:
    """Headline numbers: the first system's absolute and pairwise score per criterion (first = the first system
    of the first question in the ideas file: list the system under evaluation first), invalid and consistency
    rates pooled over criteria."""
    absolute, pairwise, bias = result.get("absolute", {}), result.get("pairwise", {}), result.get("position_bias", {})
    first = next(iter(absolute), None) or next(iter(pairwise), None)
    n_valid = sum(cell["n_valid"] for row in absolute.values() for cell in row.values())
    n_invalid = sum(cell["n_invalid"] for row in absolute.values() for cell in row.values())
    pairs = sum(b["pairs_compared"] for b in bias.values())
    out: dict = {
        "absolute": {c: cell["mean"] for c, cell in absolute.get(first, {}).items()},
        "pairwise": {c: cell["score"] for c, cell in pairwise.get(first, {}).items()},
        "rating_invalid_rate": n_invalid / (n_valid + n_invalid) if n_valid + n_invalid else None,
        "consistency_rate": sum(b["consistent"] for b in bias.values()) / pairs if pairs else None,
        "flip_rate": sum(b["flips"] for b in bias.values()) / pairs if pairs else None,
    }
    calls = sum(b["calls"] for b in bias.values())
    out["call_invalid_rate"] = sum(b["invalid_calls"] for b in bias.values()) / calls if calls else None
    return out


def ideation_scores(pools: Pools, ratings: Iterable[Rating] | None = None, verdicts: Iterable[Verdict] | None = None,
                    *, absolute_criteria: Sequence[str] | None = None, pairwise_criteria: Sequence[str] | None = None,
                    bounds: str = "fixed", n_resamples: int = N_RESAMPLES, seed: int = SEED) -> dict:
    """The ideation metrics JSON: `absolute`, `pairwise`, `position_bias`, `win_rates`, `summary`, `bounds`,
    `first_system`, `notes`. Missing inputs (None) give empty sections."""
    if bounds not in BOUNDS:
        raise ValueError(f"bounds must be one of {', '.join(BOUNDS)}, got {bounds!r}")
    out: dict = {"absolute": {}, "pairwise": {}, "position_bias": {}, "win_rates": {}, "bounds": bounds, "notes": []}
    if ratings is not None:
        out["absolute"] = absolute_scores(ratings, pools, absolute_criteria, n_resamples=n_resamples, seed=seed)
    if verdicts is not None:
        verdicts = list(verdicts)
        crits = list(pairwise_criteria) if pairwise_criteria is not None else _order(v.criterion for v in verdicts)
        out["pairwise"] = pairwise_scores(verdicts, pools, crits, bounds=bounds, n_resamples=n_resamples, seed=seed)
        out["position_bias"] = position_bias(verdicts, pools, crits)
        out["win_rates"] = win_rates(verdicts, crits)
        single = sum(len(p) == 1 for p in pools.values())
        if single and crits:
            out["notes"].append(single_idea_note(single))
    out["summary"] = summary(out)
    return out
