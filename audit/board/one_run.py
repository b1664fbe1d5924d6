"""The sampled audit of a board whose systems live inside one run (ideation): estimates per system, per pairwise
difference and rank sets, all from the run's own sampling plan (`python -m audit plan`; docs/board.md).

Why the run's own plan and not a second, board-wide one: every system's questions about a research question (its
idea's ratings, and the comparisons its idea is in) are decisions of the same document, so the document is the
unit either way, and the run's plan already draws documents at random within judge-side strata. One plan per run
means one sample: the Scores page's estimate and the board's are the same numbers, and a review served by the
run's sample queue is a draw for both (a second plan on the same run would count the other's draws as hand-picked).

Statistics: the stratified difference estimator runs once, on the run's count vector (`estimated_totals`, with the
variance of the counts the sample never saw move, as `audit.review.sampling.estimate` runs it). A system's metric is
a smooth function of the estimated totals (its mean rating or pairwise score, `TaskFamily.system_metrics`), so its
estimate equals the single-run estimator's for that number. A ratings question belongs to one system and a
comparison to two, but both live in the one vector, so the difference of two systems is one more function of the
same totals: its delta-method variance uses the totals' covariance, which holds the pairing (the same questions, the
comparisons they share). Simultaneous intervals and rank sets as on any board (Bonferroni over the pairs,
`scoring.stats.board`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations

import numpy as np
from sqlite_utils import Database

from audit.effective import DEFAULT_POLICY
from audit.errors import AuditError
from audit.numbers import count_noun
from audit.review.count_vectors import row_unflattener
from audit.review.crossfit_estimate import crossfit_setup, crossfit_text, fold_of_documents, fold_vectors
from audit.review.movable import documents_to_recount, movable_vectors
from audit.review.sampling import (
    MIN_SAMPLED_BLOCKS,
    _block_strata,
    _blocks_state,
    create_plan,
    load_plan,
    next_sample,
    plan_summary,
)
from audit.store.database import run_row
from audit.views import RunView
from scoring.families.base import MetricCell, TaskFamily
from scoring.stats.board import Board, PairDifference, anytime, competition_ranks, rank_sets, rank_sets_listed
from scoring.stats.confidence_sequence import planned_n_for, stopping_advice
from scoring.stats.difference import Totals, estimated_totals, unseen_moves
from scoring.stats.estimators import VARIANCE, Estimate, headline, metric_estimate
from scoring.stats.sampling import Plan

LEVEL = 0.95
REL_STEP = 1e-6
"""`scoring.stats.estimators.delta_method`'s step: the gradients here are the ones it would take, so a system's
estimate is the single-run estimator's to the last bit."""


def one_run_plan(db: Database, run: str) -> dict | None:
    """The run's own plan (all decision kinds) as `plan_summary` gives it, with the run; None without one."""
    view = RunView(db, run_row(db, run))
    plan = load_plan(db, view, None)
    return None if plan is None else plan_summary(plan) | {"run": run}


def create_one_run_plan(db: Database, name: str, run: str, *, seed: int = 0) -> dict:
    """`board plan` on a board of one run's systems: the run's own sampling plan (created if it has none).

    Raises:
        AuditError: the run has a plan already (the board reads it; a plan is fixed before review), a bad seed.
    """
    if one_run_plan(db, run) is not None:
        raise AuditError(f"board {name!r}: its systems live inside run {run!r}, which already has a sampling plan; "
                         "the board reads that plan (a plan is fixed before review)")
    return create_plan(db, run, seed=seed) | {"run": run, "board": name}


def _jacobian(evaluate: Callable[[np.ndarray], dict], total: np.ndarray) -> dict[tuple, np.ndarray]:
    """The gradient of every number `evaluate` returns, at `total`, by central differences with
    `delta_method`'s step: 2 evaluations per count for all systems and metrics at once."""
    grads: dict[tuple, np.ndarray] = {}
    for i in range(total.size):
        h = REL_STEP * max(1.0, abs(total[i]))
        up, down = total.copy(), total.copy()
        up[i] += h
        down[i] -= h
        hi, lo = evaluate(up), evaluate(down)
        for k in hi:
            grads.setdefault(k, np.zeros(total.size))[i] = (hi[k] - lo[k]) / (2 * h)
    return grads


class _State:
    """The run's sample under its plan: totals, the systems' metric functions and their gradients."""

    def __init__(self, db: Database, run: str, systems: Sequence[str], policy: str) -> None:
        self.view = view = RunView(db, run_row(db, run), policy)
        plan = load_plan(db, view, None)
        if plan is None:
            raise AuditError(f"run {run!r} has no sampling plan; create one with `python -m audit plan --run {run}`")
        self.plan: Plan = plan
        self.task: TaskFamily = view.task
        self.systems = list(systems)
        judge, sampled, certain, paths, _ = _blocks_state(view, plan)  # the board serves its own queue
        strata = _block_strata(plan, judge)
        setup = crossfit_setup(view, sampled)
        # as `estimate` does: the counts the sample never saw move get their variance (`unseen_moves`); without it a
        # sample whose reviews all confirmed the judge gave zero-width "exact" intervals
        movable = movable_vectors(view, paths, None, sampling=True, docs=documents_to_recount(plan, sampled))
        self.how = None
        if setup is not None and "folds" in setup:  # as `estimate` does for a judge improved on this sample
            from scoring.stats.crossfit import cross_fitted_totals

            fold_judge = fold_vectors(view, setup, paths, list(judge))
            fold_of = fold_of_documents(setup["folds"], list(judge))
            self.tot: Totals = cross_fitted_totals(fold_judge, strata, sampled, {b: fold_of[b] for b in sampled},
                                                   certain=certain, variance=VARIANCE)
            judge = {b: (vs[fold_of[b]] if b in sampled else np.mean(vs, axis=0)) for b, vs in fold_judge.items()}
            self.tot = unseen_moves(self.tot, judge, strata, sampled, movable, certain=certain)
            self.how = crossfit_text(setup)
        else:
            self.tot = estimated_totals(judge, strata, sampled, certain=certain, movable=movable, variance=VARIANCE)
            self.how = setup["unavailable"] if setup else None
        self.judge, self.sampled, self.certain, self.paths = judge, sampled, certain, paths
        self._counts = row_unflattener(paths)
        self.options = view.row["inputs"].get("options") or {}
        self.cells = [c for c in self.task.board_cells(view.original_metrics) if self.task.sampled_by(c) == "totals"]
        self._grads: dict[tuple, np.ndarray] | None = None

    def values(self, vec: np.ndarray) -> dict[tuple, float]:
        """(cell path, system) -> the system's metric of the totals `vec` (nan where it has none)."""
        metrics = self.task.metrics(self._counts(vec), None, self.options)
        out = {}
        for s in self.systems:
            mine = self.task.system_metrics(metrics, s)
            for c in self.cells:
                v = c.value(mine)
                out[(c.path, s)] = float(v) if v is not None else float("nan")
        return out

    def g(self, cell: MetricCell, system: str) -> Callable[[np.ndarray], float]:
        return lambda vec: self.values(vec)[(cell.path, system)]

    def grad(self, cell: MetricCell, system: str) -> np.ndarray | None:
        """The gradient at the estimated totals (what the delta method linearises with), once for every number;
        None while the interval is withheld (the estimator then takes none)."""
        tot = self.tot
        if tot.total is None or tot.cov is None or tot.complete:
            return None
        if self._grads is None:
            self._grads = _jacobian(self.values, np.asarray(tot.total, dtype=float))
        return self._grads[(cell.path, system)]

    def board(self, cell: MetricCell) -> Board:
        """Every system's estimate of `cell` and every pairwise difference, fixed-n, from the one sample."""
        bounds = self.task.metric_bounds(cell)
        own = self.task.sampling_own_error_sizes
        per = {s: metric_estimate(self.tot, self.g(cell, s), bounds=bounds, level=LEVEL, grad=self.grad(cell, s),
                                  own_errors=own)
               for s in self.systems}
        n_pairs = max(1, len(self.systems) * (len(self.systems) - 1) // 2)
        pairs = []
        for a, b in combinations(self.systems, 2):
            ga, gb = self.g(cell, a), self.g(cell, b)
            grad_a, grad_b = self.grad(cell, a), self.grad(cell, b)
            grad = None if grad_a is None or grad_b is None else grad_a - grad_b

            def diff(vec: np.ndarray, ga=ga, gb=gb) -> float:
                return ga(vec) - gb(vec)

            pairs.append(PairDifference(
                a, b, metric_estimate(self.tot, diff, bounds=None, level=LEVEL, grad=grad, own_errors=own),
                metric_estimate(self.tot, diff, bounds=None, level=1 - (1 - LEVEL) / n_pairs, grad=grad,
                                own_errors=own)))
        higher = cell.higher_is_better
        audited = {s: e.estimate for s, e in per.items()}
        intervals = {(p.a, p.b): p.simultaneous.ci for p in pairs}
        return Board(self.systems, per, pairs,
                     competition_ranks({s: e.judge_only for s, e in per.items()}, higher_is_better=higher),
                     competition_ranks(audited, higher_is_better=higher),
                     rank_sets(self.systems, intervals, higher_is_better=higher),
                     higher, LEVEL)

    @property
    def planned_n(self) -> int:
        return planned_n_for(len(self.plan.blocks))

    def residuals(self, cell: MetricCell, a: str, b: str) -> dict[str, float]:
        """Each sampled document's first-order effect on θ_a − θ_b (gradient at the judge-only totals, as the
        single-run queue takes it): what the stopping advice projects from."""
        base = sum(self.judge.values())
        grads = _jacobian(self.values, np.asarray(base, dtype=float))
        grad = grads[(cell.path, a)] - grads[(cell.path, b)]
        grad = np.nan_to_num(grad)
        in_plan = self.plan.stratum_of()
        return {d: float(grad @ (self.sampled[d] - self.judge[d])) for d in self.sampled if d in in_plan}


def _ci(est: Estimate) -> list[float] | None:
    return list(est.ci) if est.ci is not None else None


def _adjacent(state: _State, board: Board, pairs_any: list[PairDifference], cell: MetricCell) -> list[dict]:
    """The adjacent pairs of the estimated ranking, each with how many more sampled documents make its
    simultaneous anytime interval exclude 0 (`stopping_advice` aimed at |difference|, as the board plan's)."""
    sign = 1 if cell.higher_is_better else -1
    systems = state.systems

    def value(s: str) -> float:
        e = board.per_system[s]
        return e.estimate if e.estimate is not None else e.judge_only

    order = sorted(systems, key=lambda s: (-sign * value(s), systems.index(s)))
    by_pair = {(p.a, p.b): (p, q) for p, q in zip(board.pairs, pairs_any, strict=True)}
    known = [d for d in state.certain if d in state.plan.stratum_of()]
    out = []
    for hi, lo in zip(order, order[1:], strict=False):
        p, q = by_pair[(hi, lo)] if (hi, lo) in by_pair else by_pair[(lo, hi)]
        flip = 1 if p.a == hi else -1
        est = p.simultaneous
        diff = flip * (est.estimate if est.estimate is not None else est.judge_only)
        ci = None if q.simultaneous.ci is None else sorted((flip * q.simultaneous.ci[0], flip * q.simultaneous.ci[1]))
        if state.tot.complete:
            more, waiting = 0, None
        else:
            advice = stopping_advice(state.plan, state.residuals(cell, hi, lo), abs(diff),
                                     now_half_width=None if ci is None else (ci[1] - ci[0]) / 2, now_se=est.se,
                                     min_sampled=MIN_SAMPLED_BLOCKS, certain=known,
                                     alpha=(1 - LEVEL) / max(1, len(board.pairs)))
            more, waiting = int(advice["more"]), advice["waiting_for"]
        out.append({"a": hi, "b": lo, "difference": diff, "anytime": {"ci": ci}, "more_documents": more,
                    "waiting_for": waiting})
    return out


def one_run_estimates(db: Database, name: str, run: str, systems: Sequence[str], *,
                      policy: str = DEFAULT_POLICY) -> dict | None:
    """A one-run board's table from the run's own plan, in `audit.board.joint.board_estimates`' shape (systems
    keyed by system name; `plan`: "run"); None when the run has no plan.

    Per system and board metric (every `board_cells` number that is a function of summed counts): the single-run
    estimator (fixed-n `ci`, `anytime.ci`), the judge's bias and its interval. `pairs`: every difference of the
    primary metric (the first such cell), `ci` alone at 95%, `ci_simultaneous` over all pairs (Bonferroni, what
    rank sets read), `anytime.ci` simultaneous and anytime-valid; `more_documents` as on a board plan.
    """
    view = RunView(db, run_row(db, run), policy)
    if load_plan(db, view, None) is None:
        return None
    state = _State(db, run, systems, policy)
    if not state.cells:
        return None
    primary = state.cells[0]
    out_systems: dict[str, dict] = {s: {"bias": {}} for s in systems}
    boards: dict[tuple, tuple[Board, dict[str, Estimate], list[PairDifference]]] = {}
    for cell in state.cells:
        board = state.board(cell)
        per_any, pairs_any = anytime(board, planned_n=state.planned_n, bounds=state.task.metric_bounds(cell))
        boards[cell.path] = (board, per_any, pairs_any)
        path = "/".join(cell.path)
        for s in systems:
            fixed, anyt = board.per_system[s], per_any[s]
            h = headline(fixed, cell.value(state.task.system_metrics(view.audit.metrics, s)))
            note = "; ".join(n for n in (fixed.note, state.how) if n)
            out_systems[s][path] = {
                "value": fixed.estimate, "ci": _ci(fixed), "se": fixed.se, "label": cell.label, "interval": "fixed-n",
                "anytime": {"interval": "anytime", "ci": _ci(anyt), "note": anyt.note},
                "judge_only": fixed.judge_only, "audited": h["reviewed_so_far"], "note": note,
                "n_documents_sampled": len(state.sampled), "n_documents_known": len(state.certain),
                "n_documents": fixed.n_total}
            out_systems[s]["bias"][path] = {"value": h["bias"], "ci": h["bias_ci"]}
    board, _, pairs_any = boards[primary.path]
    pairs = [{"a": p.a, "b": p.b, "difference": p.simultaneous.estimate, "ci": _ci(p.estimate),
              "ci_simultaneous": _ci(p.simultaneous), "anytime": {"ci": _ci(q.simultaneous)}, "se": p.estimate.se,
              "note": p.simultaneous.note} for p, q in zip(board.pairs, pairs_any, strict=True)]
    adjacent = _adjacent(state, board, pairs_any, primary)
    least = max(adjacent, key=lambda p: p["more_documents"], default=None)
    sim_any = {(q.a, q.b): q.simultaneous.ci for q in pairs_any}
    return {"board": name, "runs": [run], "plan": "run", "metric": "/".join(primary.path), "systems": out_systems,
            "pairs": pairs, "adjacent": adjacent,
            "more_documents": None if least is None else least["more_documents"],
            "least_settled": None if least is None else [least["a"], least["b"]],
            "rank_sets": rank_sets_listed(board.rank_sets),
            "rank_sets_anytime": rank_sets_listed(rank_sets(systems, sim_any,
                                                            higher_is_better=primary.higher_is_better)),
            "interval": f"{LEVEL:.0%} per system; differences simultaneous over {count_noun(len(pairs), 'pair')} "
                        "(Bonferroni); anytime: valid whenever reviewing stops",
            "sampled_documents": len(state.sampled), "known_documents": len(state.certain),
            "planned_documents": len(state.plan.blocks)}


def next_one_run_document(db: Database, name: str, run: str, systems: Sequence[str]) -> dict | None:
    """What a one-run board's queue serves: the run's sample queue (`next_sample`, the one serving rule of the
    run: the Review queue's sample mode serves the same document, and only a review made there counts as a draw),
    with how many more documents settle the board's ranking. None when every planned document is reviewed."""
    pick = next_sample(db, run)
    if pick is None:
        return None
    est = one_run_estimates(db, name, run, systems) or {}
    more = est.get("more_documents") or 0
    more_text = f"{more} more document{'s' if more != 1 else ''} settle the ranking" if more else \
        "the ranking is settled"
    return {"doc": pick["doc"], "documents": {run: [pick["doc"]]}, "stratum": pick["stratum"], "rank": pick["rank"],
            "why": pick["why"],
            "review_in": [{"run": run, "documents": [pick["doc"]], "decisions": pick["decisions"],
                           "numbers": pick["numbers"], "sample_queue": True}],
            "pair": est.get("least_settled"), "focus": None, "more_documents": more, "more_text": more_text,
            "sampled_documents": pick["sampled_documents"],
            "how": f"review it in run {run}'s sample queue (Review page, queue 'sample'; CLI: `python -m audit review "
                   f"--run {run} ... --sampled`): only a review the sample queue serves counts as a draw"}

