"""Partial audits: a sampling plan per run and decision kind, the "sample" review queue that serves it, and the
estimate of the score a full human review would give (docs: partial-audit.md; statistics in scoring/stats/).

- Blocks are documents: a reviewer settles a document's decisions together, and the family's per-document counts
  are the block's count vector. Strata come from the family (`sampling_stratum`, judge-side information only);
  a document with an unreadable judge answer is a take-all stratum.
- A block enters the estimator once every decision in it has a human label: as a *sample draw* if any of its
  reviews came through the sample queue (`reviews.sampled`), else as an exactly known block (hand-picked reviews
  never pose as sample draws). Documents with no decision are exactly known too.
- The estimand is the run's metric if every decision were reviewed; a headline metric is g(Σ counts), g = that
  number of the family's metrics of the totals, with a delta-method interval (`scoring.stats.estimators`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from itertools import groupby, repeat
from operator import itemgetter
from types import MappingProxyType
from typing import NamedTuple

import numpy as np
from cachetools import LRUCache
from sqlite_utils import Database

from audit.effective import conflicted_why
from audit.errors import AuditError, NotASampleDraw
from audit.numbers import count_noun
from audit.rescoring import document_drawn, original_counts, sampled_decision_ids
from audit.review.count_vectors import flatten, leaf_paths, row_flattener, row_unflattener
from audit.review.coverage import coverage
from audit.review.crossfit_estimate import crossfit_setup, crossfit_text, fold_of_documents, fold_vectors
from audit.review.movable import documents_to_recount, movable_vectors
from audit.store.database import dumps, now, plan_stamp, transaction
from audit.store.kept import kept, run_key
from audit.store.limits import check_seed
from audit.store.plans import planned_documents
from audit.views import RunRef, RunView, as_view, kept_per_run
from scoring.families.base import NOT_REVIEWABLE, MetricCell, TaskFamily
from scoring.stats.confidence_sequence import planned_n_for, stopping_advice
from scoring.stats.difference import BlockVectors, estimated_totals, unseen_moves
from scoring.stats.estimators import (
    MIN_REVIEWS,
    VARIANCE,
    Estimate,
    anytime_estimate,
    headline,
    metric_estimate,
    tuned_estimate,
)
from scoring.stats.quantile import METHOD, MedianRule, median_estimates
from scoring.stats.sampling import Pick, Plan, Unit, build_plan, next_unit, planning_variance

MIN_SAMPLED_BLOCKS = MIN_REVIEWS
"""No interval below this many sampled documents (the estimators' rule; the Scores page says it)."""

ALL_KINDS = "*"
MAX_HALF_WIDTH = 1e6  # of a metric that is not a proportion (a mean rank): wider targets mean nothing


def check_half_width(half_width: object, *, bounds: tuple[float, float] | None, label: str = "the headline "
                     "metric") -> float:
    """The target half-width of the headline interval: a finite number above 0, at most the span of the metric's
    range (`TaskFamily.metric_bounds`: 1 for a proportion, 4 for a 1-5 rating; `MAX_HALF_WIDTH` when unbounded).

    >>> check_half_width(2, bounds=(1.0, 5.0))
    2.0

    Raises:
        AuditError: saying what is allowed.
    """
    top = MAX_HALF_WIDTH if bounds is None else bounds[1] - bounds[0]
    if isinstance(half_width, bool) or not isinstance(half_width, int | float) or not 0 < half_width <= top:
        where = ("it has no bounded range" if bounds is None else
                 f"it lies in [{bounds[0]:g}, {bounds[1]:g}]")
        raise AuditError(f"--half-width must be a number above 0 and at most {top:g} ({label}: {where}), got "
                         f"{half_width!r}")
    return float(half_width)


def check_sample_draw(db: Database, run: RunRef, decision_id: int) -> None:
    """Refuse to record a review as a sample draw unless the sample queue would serve its document now.

    A draw is valid when its document is the lowest-ranked open block of its stratum in the run's plan (what
    `next_sample` serves when it picks that stratum; the choice of stratum does not bias the estimate, the order
    inside it is the plan's random one), or a block the queue already served (it has a sampled review). A
    hand-picked block, one reviewed completely by hand, or a run without a plan is no random draw.

    Raises:
        NotASampleDraw: saying why, and (for the CLI) how to review it by hand instead.
    """
    view = as_view(db, run)
    found = view.db.execute("SELECT doc_id, kind FROM decisions WHERE id = ? AND run_id = ?",
                            [decision_id, view.id]).fetchone()
    if found is None:
        return  # add_review reports the unknown decision
    doc, kind = found
    hint = "review it without --sampled (a hand-picked review), or take the document `queue --next` serves"
    plan = load_plan(db, view, kind) or load_plan(db, view, None)
    if plan is None:
        raise NotASampleDraw(f"run {view.name!r} has no sampling plan, so no review is a sample draw",
                             f"create one with `python -m audit plan --run {view.name}`, or {hint}", no_plan=True)
    if document_drawn(view.db, view.id, doc):
        return  # a block the queue served already
    block = plan.blocks_by_id().get(doc)

    # assigned review: a prefix of the plan's order fixed in advance, its shares reviewed in parallel (a co-reviewer
    # may have labelled it from another queue first: it stays a draw, or the other's share could never be finished)
    if block is not None and doc in planned_documents(view.db, view.id):
        return
    _, sampled, certain, _, waiting_list = _blocks_state(view, plan)
    if block is None or doc in certain or doc in sampled:
        why = "is not in the sampling plan" if block is None else "was reviewed by hand"
        raise NotASampleDraw(f"decision {decision_id}: document {doc!r} {why}, so it is no sample draw", hint)
    waiting = set(waiting_list)  # drawn: the queue moved on past them
    first = next(b for b in plan.blocks if b.stratum == block.stratum and b.id not in certain and b.id not in sampled
                 and b.id not in waiting)
    if first.id != doc:
        raise NotASampleDraw(f"decision {decision_id}: document {doc!r} is not what the sample queue serves now (the "
                             f"next draw of its stratum is {first.id!r})", hint)




class DrawRule:
    """`check_sample_draw`'s rule over a stream of reviews (`import_reviews`): `allows(decision_id)`, asked in the
    order the reviews were made, says whether a review of that decision may stand as a sample draw. Its document must
    be one the queue served already (it holds a sampled review), an assigned document, or the lowest-ranked block of
    its stratum not yet drawn nor reviewed by hand, which it then becomes, so a file of reviews that followed the
    queue in another copy of the database keeps its draws and a hand-picked document cannot pose as one."""

    def __init__(self, view: RunView) -> None:
        self.view = view
        self._plans: dict[str, Plan | None] = {}
        self._drawn: set[str] | None = None
        self._skipped: dict[str, set[str]] = {}  # plan key -> blocks reviewed by hand (never a draw)
        self._next: dict[tuple[str, str], int] = {}  # (plan key, stratum) -> index of its next draw
        self._doc_kind = {i: (doc, kind) for i, doc, kind in view.db.execute(
            "SELECT id, doc_id, kind FROM decisions WHERE run_id = ?", [view.id])}

    def _plan(self, kind: str) -> tuple[str, Plan | None]:
        for key in (kind, ALL_KINDS):
            if key not in self._plans:
                self._plans[key] = load_plan(self.view.db, self.view, None if key == ALL_KINDS else key)
            if self._plans[key] is not None:
                return key, self._plans[key]
        return ALL_KINDS, None

    def allows(self, decision_id: int) -> bool:
        found = self._doc_kind.get(decision_id)
        key, plan = self._plan(found[1]) if found else (ALL_KINDS, None)
        block = plan.blocks_by_id().get(found[0]) if plan is not None and found else None
        if block is None:
            return False
        if self._drawn is None:
            docs = dict(self.view.db.execute("SELECT id, doc_id FROM decisions WHERE run_id = ?", [self.view.id]))
            self._drawn = {docs[i] for i in sampled_decision_ids(self.view.db, self.view.id) if i in docs}
            self._drawn |= planned_documents(self.view.db, self.view.id)
        if block.id in self._drawn:
            return True
        if key not in self._skipped:
            state = _blocks_state(self.view, plan)
            self._skipped[key] = set(state.certain) | set(state.sampled)
        row = plan.strata()[block.stratum]
        i = self._next.get((key, block.stratum), 0)
        while i < len(row) and (row[i].id in self._drawn or row[i].id in self._skipped[key]):
            i += 1
        self._next[(key, block.stratum)] = i
        if i < len(row) and row[i].id == block.id:
            self._drawn.add(block.id)
            return True
        return False


def metric_of_totals(task: TaskFamily, cell: MetricCell, paths: list[tuple], options: Mapping):
    counts = row_unflattener(paths)

    def g(vec: np.ndarray) -> float:
        v = cell.value(task.metrics(counts(vec), None, options))
        return float(v) if v is not None else float("nan")
    return g


# ---------------------------------------------------------------- plans


def create_plan(db: Database, run: RunRef, *, kind: str | None = None, seed: int = 0) -> dict:
    """Build and store the run's sampling plan (one per run and decision kind; `kind=None`: all kinds together).

    Raises:
        AuditError: a plan exists already (plans are fixed before review), or the family cannot estimate.
    """
    check_seed(seed)
    view = as_view(db, run)
    row, task = view.row, view.task
    if not any(task.sampled_by(c) for c in task.headline):
        raise AuditError(f"sampled estimates are not available for {task.title} yet: none of its headline metrics "
                         "can be estimated from a sample of documents; review everything instead")
    key = kind or ALL_KINDS
    check_kind(task, kind)
    if list(db.query("SELECT 1 FROM sampling_plans WHERE run_id = ? AND kind = ?", [row["id"], key])):
        raise AuditError(f"run {view.name!r} already has a sampling plan for {key}; a plan is fixed before review")
    have = {k for k, in db.execute("SELECT kind FROM sampling_plans WHERE run_id = ?", [row["id"]])}
    other = sorted(have) if key == ALL_KINDS else [ALL_KINDS] if ALL_KINDS in have else []
    if other:  # one scope per run: a draw is recorded per decision, not per plan, so two scopes would share draws
        raise AuditError(f"run {view.name!r} has a sampling plan for "
                         + ("every decision kind: it covers this kind too (`queue` and `estimate` without --kind)"
                            if other == [ALL_KINDS] else f"decision kind {', '.join(sorted(other))}: a plan of "
                            "every kind would take its draws as its own (plan each kind apart instead)"))
    units, strata, changeable = plan_units(view, kind)
    plan = build_plan(units, lambda block_units: strata[block_units[0].block], seed)
    # the family's take-all strata are named from the strata the plan has (build_plan's take_all= adds the same)
    declared = sorted(task.sampling_take_all(set(plan.strata())))
    design = f"blocks = documents; strata = {task.name} sampling_stratum (judge-side only); unreadable answers"
    if declared:
        design += f" and the strata {task.name} reviews whole ({', '.join(declared)})"
    plan = replace(plan, take_all=plan.take_all | frozenset(declared), design=design + " take-all",
                   changeable=changeable)
    with transaction(db):
        db.execute("INSERT INTO sampling_plans (run_id, kind, seed, created, plan) VALUES (?, ?, ?, ?, ?)",
                   [row["id"], key, seed, now(), dumps(plan.to_json())])
    return plan_summary(plan)


_NO_INFO: Mapping = MappingProxyType({})  # the stratum is computed per document here, not from `Unit.info`


class _JudgeSide(Mapping):
    """One decision as `TaskFamily.sampling_stratum` reads it (kind, type, left, right, judge, detail); the detail
    JSON is decoded only if the family reads it."""

    __slots__ = ("_row", "_detail")
    _KEYS = ("kind", "type", "left", "right", "judge", "detail")

    def __init__(self, row: tuple) -> None:
        self._row = row  # (kind, type, left, right, judge_label, detail text)
        self._detail: object = None

    def __getitem__(self, key: str) -> object:
        if key == "detail":
            if self._detail is None:
                self._detail = json.loads(self._row[5])
            return self._detail
        try:
            return self._row[self._KEYS.index(key)]
        except ValueError:
            raise KeyError(key) from None

    def __iter__(self):
        return iter(self._KEYS)

    def __len__(self) -> int:
        return len(self._KEYS)


def plan_units(view: RunView, kind: str | None = None) -> tuple[list[Unit], dict[str, str], dict[str, int]]:
    """The plan's units (decisions of `kind`, all kinds for None, judge label only), each document's stratum
    (`task.sampling_stratum` of its decisions) and its decisions a review can change (`changeable_decisions`'s
    rule), read one document at a time: the decisions' details are never all in memory at once (683k retrieval
    decisions held 2.4 GiB as dicts)."""
    q = ("SELECT doc_id, id, kind, type, left, right, judge_label, detail FROM decisions WHERE run_id = ?"
         + ("" if kind is None else " AND kind = ?") + " ORDER BY doc_id, id")
    units: list[Unit] = []
    strata: dict[str, str] = {}
    changeable: dict[str, int] = {}
    trivial = view.task.trivial
    rows = view.db.execute(q, [view.id] if kind is None else [view.id, kind])
    for doc, group in groupby(rows, key=itemgetter(0)):
        decisions = []
        for r in group:
            units.append(Unit(str(r[1]), doc, r[6], _NO_INFO))
            decisions.append(_JudgeSide(r[2:]))
        strata[doc] = view.task.sampling_stratum(decisions)
        changeable[doc] = sum(not trivial(d) for d in decisions)
    return units, strata, changeable  # a block's units in id order, as plans always listed them


def plan_summary(plan: Plan) -> dict:
    out = {"seed": plan.seed, "design": plan.design, "blocks": len(plan.blocks),
           "strata": {h: len(bs) for h, bs in plan.strata().items()}, "take_all": sorted(plan.take_all)}
    sampled = sum(b.stratum not in plan.take_all for b in plan.blocks)  # take-all documents are no sample
    if sampled < MIN_SAMPLED_BLOCKS:  # said when the plan is made, not found out after reviews
        out["warning"] = (f"{count_noun(sampled, 'document')} to sample: fewer than the {MIN_SAMPLED_BLOCKS} sampled "
                          "documents an interval needs, so a sample gives no interval here; review every document "
                          "for the exact number")
    return out


_PLANS: LRUCache = LRUCache(8)


def load_plan(db: Database, run: RunRef, kind: str | None = None) -> Plan | None:
    """The run's sampling plan of `kind` (None without one). A plan is never changed once stored (a new one takes a
    new row; deleting the run deletes it), so it is decoded once per database file and plan (`plan_stamp`): 0.6 s of
    every Scores and review queue render at 100,000 abstracts (#38). Treat it as read-only."""
    view = as_view(db, run)
    stamp = plan_stamp(view.db, view.id, kind or ALL_KINDS)
    if stamp is None:
        return None
    return kept(_PLANS, view.db, (*run_key(view.row), kind or ALL_KINDS, *stamp), lambda: Plan.from_json(json.loads(
        view.db.execute("SELECT plan FROM sampling_plans WHERE id = ?", [stamp[0]]).fetchone()[0])))


def check_kind(task: TaskFamily, kind: str | None) -> None:
    """Refuse a decision kind the family does not have (None: all kinds together), naming the ones it has."""
    if kind is not None and kind not in task.label_schemes:
        raise AuditError(f"unknown decision kind {kind!r}; {task.name} has {', '.join(task.label_schemes)}")


def require_plan(db: Database, run: RunRef, kind: str | None, *, then: str = "") -> Plan:
    """The run's plan of `kind`, else an AuditError that names what to do: an unknown kind as unknown (with the
    family's kinds), a missing plan with the `plan` command that makes it (with its --kind). `then`: what the plan is
    needed for, said after the command."""
    view = as_view(db, run)
    check_kind(view.task, kind)
    plan = load_plan(db, view, kind)
    if plan is None and kind is not None and load_plan(db, view, None) is not None:
        raise AuditError(f"run {view.name!r} has one sampling plan for every decision kind, which covers {kind}: "
                         "leave out --kind")
    if plan is None:
        which = "" if kind is None else f" for decision kind {kind}"
        raise AuditError(f"run {view.name!r} has no sampling plan{which}; create one with `python -m audit plan "
                         f"--run {view.name}{'' if kind is None else ' --kind ' + kind}`{then}")
    return plan


def plan_kinds(db: Database, run: RunRef) -> list[str]:
    """The decision kinds the run's sampling plans are for (`ALL_KINDS` for one of every kind), without decoding."""
    view = as_view(db, run)
    return sorted(k for k, in view.db.execute("SELECT kind FROM sampling_plans WHERE run_id = ?", [view.id]))


def plans(db: Database, run: RunRef) -> dict[str, dict]:
    view = as_view(db, run)
    return {k: json.loads(p) | {"created": c} for k, p, c in
            view.db.execute("SELECT kind, plan, created FROM sampling_plans WHERE run_id = ?", [view.id])}


# ---------------------------------------------------------------- the state of a sampled audit


def _original_doc_counts(view: RunView) -> Mapping[str, dict]:
    """Every document's original counts (read-only: decoded once per run and process, `original_counts`), in
    document id order, which is the order the estimators sum them in; kept per run (`kept_per_run`: 0.15 s a render
    at 100,000 abstracts, #38).

    Document id order is the order of the documents' primary key, in which the store lists a run's documents:
    SQLite compares text by its UTF-8 bytes, and UTF-8 keeps the order of code points, which Python sorts by
    (tests/store/test_counts_index.py holds the two to each other). Sorted here, not listed by a query: 0.1 s less
    in a fresh process at 100,000 abstracts."""
    def read() -> Mapping[str, dict]:
        return MappingProxyType(dict(sorted(original_counts(view.db, view.id), key=itemgetter(0))))
    return kept_per_run(view.db, view.row, "original counts in document id order", read)


_JUDGE_VECTORS: LRUCache = LRUCache(4)


def _judge_vectors(view: RunView, paths: list[tuple]) -> BlockVectors:
    """Every document's judge vector along `paths`, in `_original_doc_counts`' order: kept per run and path list
    (judge-side only, like the counts they flatten), stacked once for the estimators (`BlockVectors`)."""
    def build() -> BlockVectors:
        flat = _shared_flatten(view.task, paths)
        docs = _original_doc_counts(view)
        # each distinct counts object flattened once, then looked up by id in C loops (100,000 documents, #38)
        ids = list(map(id, docs.values()))
        vector = {i: flat(c) for i, c in dict(zip(ids, docs.values(), strict=True)).items()}
        return BlockVectors(zip(docs, map(vector.__getitem__, ids), strict=True))
    return kept(_JUDGE_VECTORS, view.db, (*run_key(view.row), tuple(paths)), build)


def _shared_flatten(task: TaskFamily, paths: list[tuple]):
    """`flatten` of `task.sampling_counts` at `paths`, once per counts object: documents with equal original counts
    share one decoded dict (`original_counts`), and so one vector, made read-only (100,000 CHIMERA abstracts have
    114 distinct counts)."""
    vectors: dict[int, tuple[Mapping, np.ndarray]] = {}
    flatten_one = row_flattener(paths)  # the paths indexed once (10,000 retrieval queries of distinct counts)

    def flat(counts: Mapping) -> np.ndarray:
        hit = vectors.get(id(counts))
        if hit is None:
            vec = flatten_one(task.sampling_counts(counts))
            vec.flags.writeable = False
            hit = vectors[id(counts)] = (counts, vec)  # the counts kept alive: their id stays theirs
        return hit[1]
    return flat


_STRATA: LRUCache = LRUCache(4)
_STRATA_LOCK = threading.Lock()


def _block_strata(plan: Plan, judge: Mapping[str, np.ndarray]) -> Mapping[str, str]:
    """Each block's stratum under `plan` ("no decisions" for a document outside it), in the judge's order: the
    estimators' `strata`. Kept for the last few plans and judge vectors (both kept objects, held here so their ids
    stay theirs): 0.13 s a call at 100,000 abstracts (#38)."""
    key = (id(plan), id(judge))
    with _STRATA_LOCK:
        hit = _STRATA.get(key)
    if hit is not None and hit[0] is plan and hit[1] is judge:
        return hit[2]
    stratum_of = plan.stratum_of()
    strata = MappingProxyType(dict(zip(judge, map(stratum_of.get, judge, repeat("no decisions")), strict=True)))
    with _STRATA_LOCK:
        _STRATA[key] = (plan, judge, strata)
    return strata


class BlocksState(NamedTuple):
    """The run's blocks under its plan: the vectors of the family's `sampling_counts`, along `paths`."""

    judge: dict
    """judge vector per block"""
    sampled: dict
    """human vector per sampled block (drawn by the queue, every decision settled)"""
    certain: dict
    """human vector per exactly-known block (reviewed whole by hand, or holding no decision of the plan's kind)"""
    paths: list
    waiting: list[str]
    """drawn blocks waiting for an adjudicator, in plan order (`waiting_for_adjudication`)"""


def _blocks_state(view: RunView, plan: Plan) -> BlocksState:
    """The judge's and the humans' count vectors per block, and the drawn blocks that wait for an adjudicator."""
    db, row, audit = view.db, view.row, view.audit
    docs = _original_doc_counts(view)
    # a review can create counts the judge's totals lack (ideation: a first valid call of a pair)
    task = view.task
    paths = list(dict.fromkeys([*leaf_paths(task.sampling_counts(row["original_counts"] or {})),
                                *leaf_paths(task.sampling_counts(audit.counts or {}))]))
    judge = _judge_vectors(view, paths)
    changed = audit.doc_counts or {}

    def human(doc: str) -> np.ndarray:
        return flatten(task.sampling_counts(changed[doc]), paths) if changed.get(doc) else judge[doc]
    in_plan = plan.blocks_by_id()
    sampled_reviews = {str(i) for i in sampled_decision_ids(db, row["id"])}
    # only reviewed decisions can carry a human label: a block is labelled when each of its units is one of them
    settled = {str(i) for i, e in view.effective.items() if e.settled_by_humans}
    sampled, certain = {}, {}
    for doc, block in zip(docs, map(in_plan.get, docs), strict=True):  # 100,000 documents: a lean loop
        if block is None:
            certain[doc] = human(doc) if doc in changed else judge[doc]  # no decision of the plan's kind: fixed
        elif settled.issuperset(block.units):
            (sampled if not sampled_reviews.isdisjoint(block.units) else certain)[doc] = human(doc)
    waiting = waiting_for_adjudication(view, plan, sampled, certain, drawn=sampled_reviews)
    return BlocksState(judge, sampled, certain, paths, waiting)


def waiting_for_adjudication(view: RunView, plan: Plan, sampled: Collection[str], certain: Collection[str], *,
                             drawn: Collection[str]) -> list[str]:
    """Documents the sample queue served (they hold a sampled review) whose decisions all carry a human label, some
    of them conflicted: the draw is made, and its value waits for an adjudicator. The queue moves on past them, in
    the order an immediate adjudication would give (it reads which documents were drawn, not what was said of
    them); the estimate leaves them out until they are settled, and says so. `drawn`: the ids (as text) of the
    decisions the queue served (`sampled_decision_ids`)."""
    effective = view.effective
    out = []
    for b in plan.blocks:
        if b.id in sampled or b.id in certain or drawn.isdisjoint(b.units):
            continue
        labels = [effective.get(int(u)) for u in b.units]
        if all(e is not None and e.reviewed for e in labels) and any(e.conflicted for e in labels):
            out.append(b.id)
    return out


def waiting_text(waiting: Sequence[str], *, estimate: bool = False) -> str:
    """The sentence the queue (and with `estimate`, the estimate's note) adds for `waiting_for_adjudication`'s
    documents ('' for none)."""
    if not waiting:
        return ""
    shown = ", ".join(waiting[:3]) + (", …" if len(waiting) > 3 else "")
    said = (f"{count_noun(len(waiting), 'drawn document')} ({shown}) waiting for an adjudicator: conflicted "
            "decisions keep a document out of the estimate until settled (an adjudicator: *Adjudicator* in the "
            "sidebar, or `review --role adjudicator`)")
    # left out for what was said of them: not the plan's random sample until they are settled
    return said + ("; until then the interval rests on the settled documents alone, not on the plan's random sample"
                   if estimate else "")


def estimate(db: Database, run: RunRef, kind: str | None = None, *, plan: Plan | None = None) -> dict:
    """`{metric path: {"estimate", "ci", "n_reviewed", "n_total", "judge_only", "reviewed_so_far", "bias",
    "bias_ci", "note", "label", "power_tuned", "strata"}}` for the family's headline metrics, from the run's sampling
    plan; `strata` says per stratum what its variance rests on (fully reviewed, its own sample, or the Jeffreys prior
    where none of its sampled documents differs: docs/anytime.md, "What each stratum assumes").

    `estimate` is the stratified difference estimator; `power_tuned` the PPI++ estimate beside it (`estimate`,
    `ci`, `lambda`: 1 trusts the judge as the difference estimator does, 0 uses the reviewed sample alone), whose
    interval is never wider than the better of the two (λ chosen on the interval's own variance). `ci` is the
    fixed-n interval (`interval: "fixed-n"`: valid for a sample size fixed in advance); `anytime` holds the
    confidence-sequence interval (`interval: "anytime"`: valid however the reviewer decides when to stop,
    docs/anytime.md).

    `plan`: the run's plan for `kind` when the caller has read it already (the export reads every plan; decoding a
    10,000-query retrieval plan twice cost 0.3 s).

    Raises:
        AuditError: the run has no sampling plan (create one with `python -m audit plan`).
    """
    view = as_view(db, run)
    plan = plan or require_plan(db, view, kind, then=" before reviewing")
    row, task = view.row, view.task
    judge, sampled, certain, paths, waiting = _blocks_state(view, plan)
    strata = _block_strata(plan, judge)
    setup = crossfit_setup(view, sampled)
    movable = movable_vectors(view, paths, kind, sampling=True, docs=documents_to_recount(plan, sampled))
    how, same_totals = None, None  # same_totals: the difference totals `tuned_estimate` would compute again
    if setup is not None and "folds" in setup:
        from scoring.stats.crossfit import cross_fitted_totals  # (scikit-learn: only for an improved judge)

        fold_judge = fold_vectors(view, setup, paths, list(judge))
        fold_of = fold_of_documents(setup["folds"], list(judge))
        tot = cross_fitted_totals(fold_judge, strata, sampled, {b: fold_of[b] for b in sampled}, certain=certain,
                                  variance=VARIANCE)
        judge = {b: (vs[fold_of[b]] if b in sampled else np.mean(vs, axis=0)) for b, vs in fold_judge.items()}
        tot = unseen_moves(tot, judge, strata, sampled, movable, certain=certain)
        how = crossfit_text(setup)
    else:
        tot = same_totals = estimated_totals(judge, strata, sampled, certain=certain, movable=movable,
                                             variance=VARIANCE)
        how = setup["unavailable"] if setup else None
    so_far = view.audit.metrics
    covered = coverage({b.id for b in plan.blocks}, judge, sampled, certain)
    out = {}
    options = row["inputs"].get("options") or {}
    unmoved = _unmoved_by_kind(view, paths, kind, judge, options)
    for cell in task.headline:
        if "/".join(cell.path) in unmoved:
            continue
        if task.sampled_by(cell) == "median":
            out["/".join(cell.path)] = median_headline(view, plan, cell, sampled, certain, strata, options)
            out["/".join(cell.path)].update(coverage=covered, documents=covered["text"])
            continue
        if task.sampled_by(cell) is None:
            continue
        g = metric_of_totals(task, cell, paths, options)
        bounds = task.metric_bounds(cell)
        own = task.sampling_own_error_sizes
        est = metric_estimate(tot, g, bounds=bounds, own_errors=own)
        folds_judge = None
        if how and "folds" in setup and cell.value(row["original_metrics"]) is not None:
            # cross-fitted: the totals' judge side is the fold judges'; "judge only" is the run's own judge, the
            # number every other surface shows (and the bias is that judge's against the estimate)
            folds_judge = est.judge_only
            est = replace(est, judge_only=float(cell.value(row["original_metrics"])))
        h = headline(est, cell.value(so_far))
        if folds_judge is not None:
            h["folds_judge_only"] = folds_judge
        tuned, lam = tuned_estimate(judge, strata, sampled, g, certain=certain, bounds=bounds, variance=VARIANCE,
                                    own_errors=own, full=same_totals, movable=movable)
        h["power_tuned"] = {"estimate": tuned.estimate, "ci": list(tuned.ci) if tuned.ci is not None else None,
                            "lambda": lam, "note": tuned.note or ("" if lam is not None else
                                                                  "nothing to tune on yet: the difference estimate")}
        h["n_documents_sampled"] = len(sampled)
        h["n_documents_known"] = len(certain)
        h["n_documents_planned"] = len(plan.blocks)
        h["coverage"] = covered  # n_reviewed counts documents without decisions too: say what was sampled
        h["documents"] = covered["text"]
        h["label"] = cell.label
        h["strata"] = {name: s.assumption for name, s in tot.strata.items()}  # what each stratum's variance rests on
        h["interval"] = "fixed-n"  # `ci`: valid for a sample size fixed in advance
        if how:
            h["estimator"] = how  # the judge was improved on reviews this run counts: said wherever it is shown
            h["note"] = f"{h['note']}; {how}" if h.get("note") else how
        h["anytime"] = _anytime_json(anytime_estimate(est, planned_n=planned_n_for(len(plan.blocks)),
                                                      bounds=bounds), planned_n_for(len(plan.blocks)))
        if not cell.reviewable:
            h = _exact(h, cell.value(so_far))
        out["/".join(cell.path)] = h
    for key in unmoved:
        out[key] = unmoved[key]
    reviewable = {"/".join(c.path) for c in task.headline if c.reviewable and "/".join(c.path) not in unmoved}
    for key, h in out.items():  # the median's entry too; an exact number waits for nobody
        h["waiting_for_adjudication"] = waiting if key in reviewable else []
        if waiting and key in reviewable:
            h["note"] = "; ".join(n for n in (h.get("note"), waiting_text(waiting, estimate=True)) if n)
    return out


def kind_moves(view: RunView, paths: list[tuple], kind: str, *, max_docs: int = 40) -> np.ndarray:
    """Which counts along `paths` reviews of `kind` decisions can move: documents holding such decisions (up to
    `max_docs`) recounted with every one of them given each label of the kind's scheme, the other decisions the
    judge's, against the judge's own labels."""
    return kept(_KIND_MOVES, view.db, (*run_key(view.row), kind, tuple(paths)),
                lambda: _kind_moves(view, paths, kind, max_docs))


_KIND_MOVES: LRUCache = LRUCache(8)  # judge-side only: kept per run, kind and paths (each estimate of a kind's plan)


def _kind_moves(view: RunView, paths: list[tuple], kind: str, max_docs: int) -> np.ndarray:
    task, db = view.task, view.db
    labels = task.label_schemes[kind].labels
    moved = np.zeros(len(paths), dtype=bool)
    flat = row_flattener(paths)
    every = sorted({d for d, in db.execute("SELECT doc_id FROM decisions WHERE run_id = ? AND kind = ?",
                                           [view.id, kind])})
    docs = every[::max(1, -(-len(every) // max_docs))]  # spread over the run, not its first ids
    for doc in docs:
        payload = json.loads(db.execute("SELECT payload FROM documents WHERE run_id = ? AND doc_id = ?",
                                        [view.id, doc]).fetchone()[0])
        judged = {(k, t, a, b): j for k, t, a, b, j in db.execute(
            "SELECT kind, type, left, right, judge_label FROM decisions WHERE run_id = ? AND doc_id = ?",
            [view.id, doc])}
        base = flat(task.sampling_counts(task.counts(payload, judged)))
        for label in labels:
            trial = {q: (label if q[0] == kind else j) for q, j in judged.items()}
            moved |= flat(task.sampling_counts(task.counts(payload, trial))) != base
    return moved


def _unmoved_by_kind(view: RunView, paths: list[tuple], kind: str | None, judge: Mapping[str, np.ndarray],
                     options: Mapping) -> dict[str, dict]:
    """A plan of one decision kind, in a family of several: the headline numbers reviews of that kind cannot move
    (ideation's consistency under a plan of ratings), each as an entry that says so instead of an estimate (they
    read "fully reviewed: exact" at the judge's value, the other kinds' decisions never reviewed)."""
    task = view.task
    if kind is None or len(task.label_schemes) < 2:
        return {}
    moved = kind_moves(view, paths, kind)
    total = np.sum(np.stack(list(judge.values())), axis=0) if judge else np.zeros(len(paths))
    nudge = moved * np.random.default_rng(0).uniform(1, 3, len(paths))
    out = {}
    for cell in task.headline:
        if task.sampled_by(cell) != "totals" or not cell.reviewable:
            continue
        g = metric_of_totals(task, cell, paths, options)
        a, b, c = g(total), g(total + nudge), g(total + 2 * nudge)
        if all(x == a or (np.isnan(x) and np.isnan(a)) for x in (b, c)):
            why = (f"not estimated by this plan: reviews of its {kind} decisions do not move this number (those of "
                   "other kinds may: a plan of every kind covers them)")
            none = {"estimate": None, "ci": None, "note": why}
            nothing = Estimate(None, None, None, cell.value(view.row["original_metrics"]), 0, 0, 0, "none", why)
            out["/".join(cell.path)] = headline(nothing, cell.value(view.audit.metrics)) | {
                "n_reviewed": None, "n_total": None, "label": cell.label, "documents": "", "interval": "fixed-n",
                "power_tuned": none | {"lambda": None}, "anytime": none | {"interval": "anytime"},
                "not_estimated": why}
    return out


def _exact(h: dict, value: float | None) -> dict:
    """A headline entry of a number no review can change (`MetricCell.reviewable` false: CHIMERA's classification
    F1): its value at every sample size, with zero-width intervals, rather than withheld below the sample's minimum
    like the numbers reviews move (every surface and the JSON showed "exact" intervals around no value)."""
    ci = None if value is None else [value, value]
    return h | {"estimate": value, "ci": ci, "bias": None if value is None else h["judge_only"] - value,
                "bias_ci": None if value is None else [h["judge_only"] - value] * 2, "note": NOT_REVIEWABLE,
                "power_tuned": {"estimate": value, "ci": ci, "lambda": None, "note": NOT_REVIEWABLE},
                "anytime": h["anytime"] | {"estimate": value, "ci": ci, "note": NOT_REVIEWABLE}}


def _anytime_json(est: Estimate, planned_n: int) -> dict:
    """The anytime-valid interval of a headline number, labelled (docs/anytime.md)."""
    return {"interval": "anytime", "estimate": est.estimate, "ci": list(est.ci) if est.ci is not None else None,
            "planned_n": planned_n, "note": est.note or ("valid whenever you stop reviewing (confidence sequence)"
                                                          if est.ci is not None else "")}


def median_rule(task: TaskFamily, cell: MetricCell) -> MedianRule:
    """The family's median of a `median` cell (`TaskFamily.median_of_documents`), as the estimator takes it: every
    sampled median (`estimate`, a board's plan, the benches) targets the number the family's scorer reports."""
    return lambda dists: task.median_of_documents(cell, dists)


def median_headline(view: RunView, plan: Plan, cell: MetricCell, sampled: Mapping, certain: Mapping,
                    strata: Mapping[str, str], options: Mapping) -> dict:
    """The `estimate` entry of a `median` cell (`TaskFamily.sampled_by`): the difference-estimated distribution
    function's median with a stratified bootstrap interval and an anytime one (the confidence sequence inverted on
    the distribution function, `scoring.stats.quantile`); a complete review gives the family's own value."""

    task = view.task
    judge_counts = _original_doc_counts(view)
    changed = view.audit.doc_counts or {}
    human_counts = {doc: changed.get(doc) or c for doc, c in judge_counts.items()}

    def dist(counts: Mapping):
        return task.document_distribution(cell, counts, options)

    complete = set(sampled) | set(certain) >= set(judge_counts)
    planned_n = planned_n_for(len(plan.blocks))
    est, anytime = median_estimates({d: dist(c) for d, c in judge_counts.items()}, strata,
                                    {d: dist(human_counts[d]) for d in sampled},
                                    certain={d: dist(human_counts[d]) for d in certain}, seed=plan.seed % 2**32,
                                    judge_only=cell.value(view.row["original_metrics"]),
                                    exact=cell.value(view.audit.metrics) if complete else None, planned_n=planned_n,
                                    rule=median_rule(task, cell), own_errors=task.sampling_own_error_sizes)
    h = headline(est, cell.value(view.audit.metrics))
    h.update(label=cell.label, method=METHOD, n_documents_sampled=len(sampled), n_documents_known=len(certain),
             n_documents_planned=len(plan.blocks),
             power_tuned=None, interval="fixed-n (bootstrap)", anytime=_anytime_json(anytime, planned_n),
             how="median of the difference-estimated distribution function (PPI for quantiles, stratified); "
                 "fixed-n interval: stratified bootstrap of the plan's sample (percentile); anytime: the confidence "
                 "sequence inverted on the distribution function; no power tuning (no λ) for a median")
    return h


def target_cell(task: TaskFamily, metric: str | None = None) -> MetricCell:
    """The headline cell the sample queue targets: `metric` (its path joined by `/`, as `estimate` keys it), else
    the first headline cell reviews can move (`MetricCell.reviewable`).

    Raises:
        AuditError: `metric` is not one of the family's headline cells, or names one no review moves.
    """
    cells = {"/".join(c.path): c for c in task.headline}
    if metric is None:
        return next((c for c in task.headline if c.reviewable and task.sampled_by(c) == "totals"), task.headline[0])
    if metric in cells and task.sampled_by(cells[metric]) != "totals":
        raise AuditError(f"metric {metric!r} ({cells[metric].label}) is not a function of summed counts: the sample "
                         "queue aims at one that is (its stopping advice linearises the metric)")
    if metric not in cells:
        raise AuditError(f"metric {metric!r} is not a headline metric of {task.title}; use one of {', '.join(cells)}")
    if not cells[metric].reviewable:
        raise AuditError(f"metric {metric!r} ({cells[metric].label}) is not moved by any review: a queue aimed at it "
                         "would never narrow its interval")
    return cells[metric]


def changeable_decisions(view: RunView, plan: Plan, kind: str | None = None) -> Mapping[str, int]:
    """Block (document) of the plan -> its decisions of `kind` whose answer is not certain by construction
    (`TaskFamily.trivial`): judge-side information, read before any review (`planning_variance`). Counted once,
    when the plan is made (`Plan.changeable`); read from the decisions only for a plan stored before that."""
    if plan.changeable is not None:
        return plan.changeable
    q = ("SELECT doc_id, kind, type, left, right, judge_label FROM decisions WHERE run_id = ?"
         + ("" if kind is None else " AND kind = ?"))
    in_plan = plan.stratum_of()
    out = dict.fromkeys(in_plan, 0)
    trivial = view.task.trivial
    for doc, k, typ, left, right, judge in view.db.execute(q, [view.id] if kind is None else [view.id, kind]):
        if doc in in_plan and not trivial({"kind": k, "type": typ, "left": left, "right": right, "judge": judge}):
            out[doc] += 1
    return out


def next_sample(db: Database, run: RunRef, kind: str | None = None, *, half_width: float = 0.03,
                metric: str | None = None) -> dict | None:
    """The next block (document) the sample queue serves, why, and how many more reviews reach ±`half_width` on
    the target metric (`target_cell`). None when every block is reviewed. Which block: `next_unit` on a planning
    variance from judge-side information only (`changeable_decisions`), so the order depends on which documents
    were reviewed, never on what the reviews said; the advice (`more_to_target`) reads the reviews.

    Raises:
        AuditError: no plan, an unknown target metric, or a half-width that is not a number above 0 (at most 1 for
            a proportion).
    """
    view = as_view(db, run)
    plan = require_plan(db, view, kind)
    row, task = view.row, view.task
    cell = target_cell(task, metric)
    check_half_width(half_width, bounds=task.metric_bounds(cell), label=cell.label)
    judge, sampled, certain, paths, waiting = _blocks_state(view, plan)
    options = row["inputs"].get("options") or {}
    g = metric_of_totals(task, cell, paths, options)
    base = judge.in_order_sum()
    # residual of a block: its first-order effect on the headline metric, grad g . (c_H - c_J)
    grad = np.zeros(len(paths))
    for i in range(len(paths)):
        h = 1e-6 * max(1.0, abs(base[i]))
        up, down = base.copy(), base.copy()
        up[i] += h
        down[i] -= h
        grad[i] = (g(up) - g(down)) / (2 * h)
    stratum_of = plan.stratum_of()
    residuals = {b: float(grad @ (sampled[b] - judge[b])) for b in sampled if b in stratum_of}
    known = [b for b in certain if b in stratum_of]
    pick = next_unit(plan, [*residuals, *waiting], certain=known,
                     planning=planning_variance(changeable_decisions(view, plan, kind)))
    if pick is None and waiting:  # nothing else left: the waiting documents, not "every document is reviewed"
        first = plan.blocks_by_id()[waiting[0]]
        pick = Pick(first.id, first.stratum, first.units, first.rank, "waiting for an adjudicator")
    if pick is None:
        return None
    # the reviewer stops when the advice says so: optional stopping, so the advice aims at the anytime interval the
    # estimate shows, and says 0 only once that interval exists and is narrow enough
    strata = _block_strata(plan, judge)
    movable = movable_vectors(view, paths, kind, sampling=True, docs=documents_to_recount(plan, sampled))
    tot = estimated_totals(judge, strata, sampled, certain=certain, movable=movable, variance=VARIANCE)
    fixed = metric_estimate(tot, g, bounds=task.metric_bounds(cell), own_errors=task.sampling_own_error_sizes)
    now = anytime_estimate(fixed, planned_n=planned_n_for(len(plan.blocks)), bounds=task.metric_bounds(cell))
    now_half = None if now.ci is None else (now.ci[1] - now.ci[0]) / 2  # the interval `estimate` shows
    se = now.se
    if se is None and tot.total is not None and tot.cov is not None and not tot.complete:
        # withheld below the minimum, but it calibrates the projection; linearised with the gradient above (a
        # second numerical gradient costs 2 evaluations of g per count path)
        se = float(np.sqrt(max(float(grad @ tot.cov @ grad), 0.0)))
    target = stopping_advice(plan, residuals, half_width, now_half_width=now_half, now_se=se,
                             min_sampled=MIN_SAMPLED_BLOCKS, certain=known, pending=waiting)
    decisions = [int(u) for u in pick.units]
    conflicted = [i for i in decisions if (e := view.effective.get(i)) is not None and e.conflicted]
    why = "; ".join(w for w in (pick.why, conflicted and conflicted_why(len(conflicted)), waiting_text(waiting)) if w)
    return {"doc": pick.block, "stratum": pick.stratum, "decisions": decisions,
            "numbers": view.decision_tags(decisions),  # `review --decision` takes either
            "conflicted": conflicted,
            "waiting_for_adjudication": waiting,
            "rank": pick.rank, "why": why, "more_to_target": target.get("more"),
            "more_decisions_to_target": target.get("more_units"),
            "target_half_width": half_width, "target_interval": target["interval"],
            "target_metric": "/".join(cell.path), "target_label": cell.label, "waiting_for": target["waiting_for"],
            "sampled_documents": len(residuals)}
