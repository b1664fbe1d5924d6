"""A run's documents under a known, seeded true labelling, and the sampled estimate of each round (a fresh plan,
n documents, the estimate `audit estimate` gives), as `bench/family_partial_audit.py` and the sampling tests
(tests/store/test_sampling_families.py, tests/app/test_scores_*.py) use them.

Truth models (seeded, errors clustered by document through a per-document propensity):
- ideation: a rating is off by one (up or down, clipped to 1..5) with probability 0.35 × propensity; an
  invalid rating gets a uniform 1..5; a split comparison gets a / b / tie uniformly, a decisive one is changed
  with probability 0.2 × propensity;
- retrieval: a candidate above the gold is an acceptable answer too with probability 0.12 × propensity in the
  top 3, 0.02 × propensity below (sparse: most queries have none);
- chimera / litxbench: a decision's judge label is overruled with probability 0.1 × propensity;
- `--truth similarity` (retrieval): a candidate is acceptable with probability 0.5 × its difflib similarity to the
  gold text × propensity (acceptance in proportion to text similarity, issue 39).
"""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from audit.review.movable import documents_to_recount, leaves_a_review_can_move, path_mask
from audit.review.sampling import flatten, leaf_paths, median_rule, metric_of_totals
from scoring.families.base import MetricCell, TaskFamily
from scoring.stats.difference import estimated_totals
from scoring.stats.estimators import VARIANCE, Estimate, metric_estimate
from scoring.stats.quantile import median_estimate
from scoring.stats.sampling import Plan, Unit, build_plan, next_unit, planning_variance

NO_TAKE_ALL = "proportional, no take-all"
Truth = Callable[[Mapping, random.Random, float], str]
"""A decision's true label from the decision (judge label, detail), a seeded rng and the document's propensity."""


@dataclass
class Population:
    """A run's documents under the judge's labels and under a known true labelling."""

    task: TaskFamily
    options: dict
    units: list[Unit]
    judge: dict[str, dict]
    """Counts of every document under the judge's labels."""
    human: dict[str, dict]
    """Counts of every document under the true labels."""
    truth: dict[str, float]
    """The family's metric of each estimable headline cell under the true labels (the estimand)."""
    can_move: dict[str, set[tuple]]
    """The count paths a review can move in each document (`movable.leaves_a_review_can_move`, judge side)."""
    paths: list[tuple] | None = None
    movable: dict[str, np.ndarray] | None = None


def ideation_truth(d: Mapping, rng: random.Random, propensity: float) -> str:
    if d["kind"] == "rating":
        if d["judge"] not in "12345" or len(d["judge"]) != 1:
            return str(rng.randint(1, 5))
        if rng.random() < 0.35 * propensity:
            return str(min(5, max(1, int(d["judge"]) + rng.choice((-1, 1)))))
        return d["judge"]
    labels = ("a", "b", "tie")
    if d["judge"] not in labels:
        return rng.choice(labels)
    if rng.random() < 0.2 * propensity:
        return rng.choice([x for x in labels if x != d["judge"]])
    return d["judge"]


def retrieval_truth(d: Mapping, rng: random.Random, propensity: float) -> str:
    p = (0.12 if d["detail"].get("rank", 99) <= 3 else 0.02) * propensity
    return "acceptable" if rng.random() < p else "not-acceptable"


def similarity_truth(d: Mapping, rng: random.Random, propensity: float) -> str:
    """Retrieval acceptance in proportion to the candidate's text similarity to the gold (difflib ratio, case
    folded): acceptable with probability 0.5 × similarity × propensity (issue 39's fifth truth model)."""
    import difflib

    text, gold = str(d["detail"].get("text", "")).lower(), str(d["detail"].get("gold", "")).lower()
    sim = difflib.SequenceMatcher(None, text, gold).ratio()
    return "acceptable" if rng.random() < min(1.0, 0.5 * sim * propensity) else "not-acceptable"


TRUTHS: dict[str, Truth] = {"similarity": similarity_truth}
"""Named truth models beside each family's default (`truth_for`), `--truth NAME`."""


def coverage_text(hits: int, n: int) -> str:
    """A coverage rate with its Clopper-Pearson 95% interval over the rounds."""
    from scipy import stats

    ci = stats.binomtest(hits, n).proportion_ci(0.95, method="exact")
    return f"{hits / n:.3f} [{ci.low:.3f}, {ci.high:.3f}]"


def flip_truth(d: Mapping, rng: random.Random, propensity: float, scheme_labels: Sequence[str]) -> str:
    if d["judge"] not in scheme_labels:
        return rng.choice(list(scheme_labels))
    if rng.random() < 0.1 * propensity:
        return rng.choice([x for x in scheme_labels if x != d["judge"]])
    return d["judge"]


def truth_for(task: TaskFamily) -> Truth:
    if task.name == "ideation":
        return ideation_truth
    if task.name == "retrieval":
        return retrieval_truth
    return lambda d, rng, p: flip_truth(d, rng, p, task.label_schemes[d["kind"]].labels)


def estimable(task: TaskFamily) -> list[MetricCell]:
    return [c for c in task.headline if task.sampled_by(c) is not None and c.reviewable]


def population(db, run: str, seed: int = 0, truth: Truth | None = None) -> Population:
    """The run's documents from the store (read only) with a seeded true labelling of every decision."""
    from audit.views import as_view

    view = as_view(db, run)
    task = view.task
    truth = truth or truth_for(task)
    options = dict(view.row["inputs"].get("options") or {})
    rows = list(view.db.query("SELECT doc_id, payload, counts FROM documents WHERE run_id = ? ORDER BY rowid",
                              [view.id]))
    judge = {r["doc_id"]: json.loads(r["counts"]) for r in rows}
    payloads = {r["doc_id"]: json.loads(r["payload"]) for r in rows}
    rng = random.Random(seed)
    propensity = {doc: rng.choice((0.0, 0.5, 1.0, 1.5, 2.0)) for doc in judge}
    labels: dict[str, dict] = {doc: {} for doc in judge}
    judge_labels: dict[str, dict] = {doc: {} for doc in judge}
    units = []
    for d in view.decisions():
        key = (d["kind"], d["type"], d["left"], d["right"])
        labels[d["doc"]][key] = truth(d, rng, propensity[d["doc"]])
        judge_labels[d["doc"]][key] = d["judge"]
        units.append(Unit(str(d["id"]), d["doc"], d["judge"], {"decision": {k: d[k] for k in (
            "kind", "type", "left", "right", "judge", "detail")}}))
    human = {doc: task.counts(payloads[doc], labels[doc]) if labels[doc] else judge[doc] for doc in judge}
    metrics = task.aggregate(list(human.values()), options)
    truth_values = {"/".join(c.path): c.value(metrics) for c in estimable(task)}
    can_move = {doc: leaves_a_review_can_move(task, payloads[doc], labels[doc], judge[doc],
                                              judge_labels=judge_labels[doc]) for doc in judge}
    return Population(task, options, units, judge, human, truth_values, can_move)


def plan_for(pop: Population, seed: int, *, take_all: bool = True) -> Plan:
    """The plan `audit plan` builds (with the family's `sampling_take_all` strata; `take_all=False`: without)."""
    task = pop.task

    def stratum_of(block_units: list[Unit]) -> str:
        return task.sampling_stratum([u.info["decision"] for u in block_units])

    plan = build_plan(pop.units, stratum_of, seed)
    return build_plan(pop.units, stratum_of, seed, take_all=task.sampling_take_all(set(plan.strata()))) \
        if take_all else plan


def draw(plan: Plan, n: int) -> list[str]:
    """n blocks: take-all strata whole, the rest proportional (at least 2 per stratum), each stratum's first blocks
    in the plan's seeded order."""
    strata = plan.strata()
    picked = [b.id for h in plan.take_all for b in strata.get(h, [])]
    rest = {h: sorted(bs, key=lambda b: b.rank) for h, bs in strata.items() if h not in plan.take_all}
    left = max(0, n - len(picked))
    total = sum(len(bs) for bs in rest.values())
    for bs in rest.values():
        m = min(len(bs), max(2, round(left * len(bs) / total))) if total else 0
        picked += [b.id for b in bs[:m]]
    return picked


def draw_queue(pop: Population, plan: Plan, n: int) -> list[str]:
    """n blocks as the sample queue serves them (`sampling.next_unit`: take-all, stratum minimums, then cost-aware
    Neyman steps on the planning variance `next_sample` passes: judge-side only, `planning_variance`)."""
    planning = planning_variance(changeable(pop))
    picked: list[str] = []
    while len(picked) < n and (pick := next_unit(plan, picked, planning=planning)) is not None:
        picked.append(pick.block)
    return picked


def changeable(pop: Population) -> dict[str, int]:
    """Block -> its decisions whose answer is not certain by construction (`audit.review.sampling.
    changeable_decisions` on the population's units)."""
    out: dict[str, int] = {}
    for u in pop.units:
        out[u.block] = out.get(u.block, 0) + (not pop.task.trivial(u.info["decision"]))
    return out


def _covers(ests: list[Estimate] | None, t: float) -> str | None:
    cis = [e.ci for e in ests or () if e.ci is not None]
    return coverage_text(sum(lo - 1e-12 <= t <= hi + 1e-12 for lo, hi in cis), len(cis)) if cis else None


def estimate_round(pop: Population, plan: Plan, sample: Sequence[str], only: Collection[str] | None = None
                   ) -> dict[str, Estimate]:
    """What `audit.review.sampling.estimate` gives when exactly `sample` was reviewed through the queue (`only`:
    these metric paths alone, e.g. without a median's bootstrap)."""
    task, options = pop.task, pop.options
    strata = plan.stratum_of()
    in_plan = set(strata)
    certain_docs = [d for d in pop.judge if d not in in_plan]
    paths = _paths(pop)
    judge = {d: flatten(c, paths) for d, c in pop.judge.items()}
    sampled = {d: flatten(pop.human[d], paths) for d in sample}
    certain = {d: flatten(pop.human[d], paths) for d in certain_docs}
    if pop.movable is None:
        mask = path_mask(paths)
        pop.movable = {d: mask(leaves) for d, leaves in pop.can_move.items()}
    movable = {d: pop.movable[d] for d in documents_to_recount(plan, sample)}  # what `estimate` recounts
    tot = estimated_totals(judge, strata, sampled, certain=certain, movable=movable, variance=VARIANCE)
    out = {}
    for cell in estimable(task):
        key = "/".join(cell.path)
        if only is not None and key not in only:
            continue
        if task.sampled_by(cell) == "median":
            def dist(c: Mapping, cell: MetricCell = cell):
                return task.document_distribution(cell, c, options)
            out[key] = median_estimate({d: dist(c) for d, c in pop.judge.items()}, strata,
                                       {d: dist(pop.human[d]) for d in sample},
                                       certain={d: dist(pop.human[d]) for d in certain_docs}, seed=plan.seed,
                                       rule=median_rule(task, cell), own_errors=task.sampling_own_error_sizes)
        else:
            g = metric_of_totals(task, cell, paths, options)
            out[key] = metric_estimate(tot, g, bounds=task.metric_bounds(cell),
                                       own_errors=task.sampling_own_error_sizes)
    return out


def _paths(pop: Population) -> list[tuple]:
    """Every count path of the judge's or the true counts (what `estimate` reads off the run's totals)."""
    if pop.paths is None:
        keys: dict[tuple, None] = {}  # in the counts' key order, as the run's totals keep it
        for part in (pop.judge, pop.human):
            for c in part.values():
                keys.update(dict.fromkeys(leaf_paths(c)))
        pop.paths = list(keys)
    return pop.paths


def coverage(pop: Population, rounds: int, n: int, seed0: int = 1000, design: str = "proportional",
             ) -> dict[str, dict]:
    """Per estimable cell: rounds, bias (mean estimate − truth, on `Estimate.estimate_raw` where the shown estimate
    was clipped into the metric's range) and its MC SE, coverage, mean half-width, no-CI
    rounds, the anytime interval's coverage (`anytime_estimate` at the plan's `planned_n`; None for a median,
    whose anytime interval `quantile.median_estimates` builds apart) and the mean draws per stratum (`draws`).
    `design`: `proportional` (`draw`) or `queue` (`draw_queue`), on the plan `audit plan` builds;
    `proportional, no take-all`: `draw` on the plan without the family's take-all strata (the former plan)."""
    from scoring.stats.confidence_sequence import planned_n_for
    from scoring.stats.estimators import anytime_estimate

    res: dict[str, list[Estimate]] = {}
    anytime: dict[str, list[Estimate]] = {}
    draws: dict[str, int] = {}
    cells = {"/".join(c.path): c for c in estimable(pop.task)}
    for r in range(rounds):
        plan = plan_for(pop, seed0 + r, take_all=design != NO_TAKE_ALL)
        sample = draw(plan, n) if design != "queue" else draw_queue(pop, plan, n)
        strata = plan.stratum_of()
        for b in sample:
            draws[strata[b]] = draws.get(strata[b], 0) + 1
        for key, est in estimate_round(pop, plan, sample).items():
            res.setdefault(key, []).append(est)
            if pop.task.sampled_by(cells[key]) != "median":
                anytime.setdefault(key, []).append(anytime_estimate(
                    est, planned_n=planned_n_for(len(plan.blocks)), bounds=pop.task.metric_bounds(cells[key])))
    out = {}
    for key, ests in res.items():
        t = pop.truth[key]
        # the design-unbiased value: before an estimate outside the metric's range is moved into it for showing
        pts = [e.design_value for e in ests if e.estimate is not None]
        cis = [e.ci for e in ests if e.ci is not None]
        errs = [p - t for p in pts]
        out[key] = {"rounds": len(ests), "truth": t,
                    "bias": statistics.fmean(errs) if errs else None,
                    "mc_se": statistics.stdev(errs) / len(errs) ** 0.5 if len(errs) > 1 else None,
                    "coverage": coverage_text(sum(lo - 1e-12 <= t <= hi + 1e-12 for lo, hi in cis), len(cis))
                    if cis else None,
                    "half_width": statistics.fmean((hi - lo) / 2 for lo, hi in cis) if cis else None,
                    "no_ci": len(ests) - len(cis),
                    "anytime_coverage": _covers(anytime.get(key), t),
                    "draws": {h: k / rounds for h, k in sorted(draws.items())}}
    return out
