"""A board's one sampling plan: documents drawn once for every system, estimates per system and per difference
from that one sample, and the queue that serves where a review does most for the table (issue 36 §3; docs/board.md).

- Blocks are documents by gold content (`TaskFamily.gold_key`): the runs of a board share their gold, and a block
  holds every run's documents with that gold (one each, unless a gold document is repeated). A sampled block is
  reviewed for the union of the questions every run asked about it: one review settles a question in every run
  that asks it (`run_reviews`), so one reviewed block gives every system its human counts there.
- Strata are the single-run plan's: the family's `sampling_stratum` of the block's questions, here the union over
  the runs (judge-side only), unreadable answers and the family's declared strata take-all (`build_plan`).
- A block is a sample draw of the board when the board's queue served it (`board_draws`, stored when served) and
  every decision of every run in it has a human label; a block reviewed whole without being served counts exactly
  (hand-picked), as in the single-run plan.
- Per system, the estimate is the single-run estimator on that run's vectors with the board's strata and sample
  (its population: the blocks where the run asks a question; a block where it asks none is known exactly, as a
  document without decisions is in the run's own plan), so it equals what the run's own plan would give on the
  same sample. Differences come from the joint vectors (`scoring.stats.board`), Bonferroni over the pairs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from cachetools import LRUCache
from sqlite_utils import Database

from audit.board.median import board_median, median_cells
from audit.effective import DEFAULT_POLICY, conflicted_why
from audit.errors import AuditError
from audit.numbers import count_noun
from audit.review.count_vectors import row_flattener
from audit.review.movable import movable_leaves, movable_vectors, path_mask
from audit.review.sampling import (
    MIN_SAMPLED_BLOCKS,
    _original_doc_counts,
    leaf_paths,
    metric_of_totals,
    plan_summary,
    target_cell,
    waiting_text,
)
from audit.store.database import dumps, now, run_row, transaction
from audit.store.kept import kept, run_key
from audit.store.limits import check_seed
from audit.views import RunView
from scoring.families import get_task
from scoring.families.base import MetricCell, TaskFamily
from scoring.stats.board import Board, anytime, board_estimate, rank_sets, rank_sets_listed
from scoring.stats.confidence_sequence import planned_n_for, stopping_advice
from scoring.stats.difference import estimated_totals
from scoring.stats.estimators import VARIANCE, Estimate, delta_method, headline
from scoring.stats.sampling import Pick, Plan, PlanBlock, Unit, build_plan, gain, next_unit

LEVEL = 0.95
NO_DECISIONS = "no decisions"
"""Stratum of a block no run asks a question about (it is known exactly: never sampled)."""


@dataclass(frozen=True)
class StoredPlan:
    board: str
    runs: list[str]
    seed: int
    created: str
    plan: Plan
    documents: dict[str, dict[str, list[str]]]
    """block -> run -> that run's document ids with the block's gold (every block, with decisions or not)."""
    movable: dict[str, dict] = field(default_factory=dict)
    """run -> {"stamp": the run's identity when planned, "sets": distinct sets of count paths, "blocks": block -> the
    index of the set a review can move in some document of the block (blocks where none can move are left out)}:
    judge-side, so computed once with the plan (`_plan_movable`); a plan without it, or a run whose stamp no longer
    matches, is recounted on read (`movable.movable_vectors`)."""


# ---------------------------------------------------------------- the plan


def _gold_groups(db: Database, name: str, runs: Sequence[str]) -> tuple[TaskFamily, dict[str, dict[str, list[str]]]]:
    """(the runs' family, block -> run -> doc ids): the runs must be one family on the same gold documents.

    Raises:
        AuditError: fewer than two runs, a run twice, another family, or another gold, naming the run.
    """
    if len(runs) < 2:
        raise AuditError(f"board {name!r}: a joint plan needs at least two runs (a board of one run, systems "
                         "inside one run, uses that run's own plan: `python -m audit plan`)")
    twice = sorted({r for r in runs if list(runs).count(r) > 1})
    if twice:
        raise AuditError(f"board {name!r}: run {twice[0]!r} is listed twice")
    rows = {r: run_row(db, r) for r in runs}
    first = runs[0]
    task_name = rows[first]["task"]
    for r in runs[1:]:
        if rows[r]["task"] != task_name:
            raise AuditError(f"board {name!r}: run {r!r} is a {rows[r]['task']} run, {first!r} a {task_name} run; "
                             "a board compares runs of one family")
    task = get_task(task_name)
    per_run: dict[str, dict[str, list[str]]] = {}
    for r in runs:
        groups: dict[str, list[str]] = {}
        for doc_id, payload in db.execute("SELECT doc_id, payload FROM documents WHERE run_id = ? ORDER BY idx",
                                          [rows[r]["id"]]):
            groups.setdefault(task.gold_key(json.loads(payload)), []).append(doc_id)
        per_run[r] = groups
    ref = per_run[first]
    for r in runs[1:]:
        extra = [g for g in per_run[r] if g not in ref]
        missing = [g for g in ref if g not in per_run[r]]
        if extra or missing:
            where = (f"document {per_run[r][extra[0]][0]!r} has gold that {first!r} lacks" if extra else
                     f"it lacks the gold of {first!r}'s document {ref[missing[0]][0]!r}")
            raise AuditError(f"board {name!r}: run {r!r} is not on the same gold as {first!r}: {where}")
    blocks = {docs[0]: {r: per_run[r][g] for r in runs} for g, docs in ref.items()}
    return task, blocks


def create_board_plan(db: Database, name: str, runs: Sequence[str], *, seed: int = 0) -> dict:
    """Build and store the board's one sampling plan over `runs` (one family, the same gold).

    Units are the distinct questions of a block (a question asked by several runs is one unit: one review settles
    it), so the queue's cost per block is the union of the questions. Strata: the family's `sampling_stratum` of
    that union, and its take-all strata, exactly as the single-run plan makes them.

    Raises:
        AuditError: a plan for the board exists (plans are fixed before review), a bad seed, runs that are not one
            family on one gold, or a family whose headline metrics cannot be estimated from a sample.
    """
    check_seed(seed)
    if not isinstance(name, str) or not name.strip():
        raise AuditError("a board plan needs the board's name")
    if db.execute("SELECT 1 FROM board_plans WHERE board = ?", [name]).fetchone():
        raise AuditError(f"board {name!r} already has a sampling plan; a plan is fixed before review")
    task, blocks = _gold_groups(db, name, runs)
    if not any(task.sampled_by(c) == "totals" for c in task.headline):
        raise AuditError(f"sampled estimates are not available for {task.title} boards: none of its headline "
                         "metrics is a function of summed counts; review everything instead")
    block_of = {(r, d): b for b, per in blocks.items() for r, docs in per.items() for d in docs}
    questions: dict[str, dict[str, Unit]] = {}  # block -> qkey -> one unit per question
    run_ids = {run_row(db, r)["id"]: r for r in runs}
    marks = ",".join("?" * len(run_ids))
    for dec_id, run_id, doc, kind, typ, left, right, judge, detail, qkey in db.execute(
            f"SELECT id, run_id, doc_id, kind, type, left, right, judge_label, detail, qkey FROM decisions WHERE "
            f"run_id IN ({marks}) ORDER BY id", list(run_ids)):
        block = block_of[(run_ids[run_id], doc)]
        key = qkey or f"decision {dec_id}"
        seen = questions.setdefault(block, {}).get(key)
        if seen is not None:
            if judge in ("invalid",) and seen.judge != "invalid":  # an unreadable answer in any run: take-all
                questions[block][key] = replace(seen, judge=judge)
            continue
        info = {"kind": kind, "type": typ, "left": left, "right": right, "judge": judge,
                "detail": json.loads(detail)}
        questions[block][key] = Unit(str(dec_id), block, judge, {"decision": info})

    def stratum_of(units: list[Unit]) -> str:
        return task.sampling_stratum([u.info["decision"] for u in units])

    plan = build_plan([u for qs in questions.values() for u in qs.values()], stratum_of, seed)
    declared = sorted(task.sampling_take_all(set(plan.strata())))
    design = (f"board of {len(runs)} runs; blocks = documents by gold content, reviewed for the union of the runs' "
              f"questions; strata = {task.name} sampling_stratum of that union (judge-side only); unreadable answers")
    if declared:
        design += f" and the strata {task.name} reviews whole ({', '.join(declared)})"
    plan = replace(plan, take_all=plan.take_all | frozenset(declared), design=design + " take-all")
    body = {"plan": plan.to_json(), "documents": blocks, "movable": _plan_movable(db, task, runs, block_of)}
    with transaction(db):
        if db.execute("SELECT 1 FROM board_plans WHERE board = ?", [name]).fetchone():
            raise AuditError(f"board {name!r} already has a sampling plan; a plan is fixed before review")
        db.execute("INSERT INTO board_plans (board, runs, seed, created, plan) VALUES (?, ?, ?, ?, ?)",
                   [name, dumps(list(runs)), seed, now(), dumps(body)])
    return _summary(load_board_plan(db, name))  # type: ignore[arg-type]


_PLANS: LRUCache = LRUCache(8)


def load_board_plan(db: Database, name: str) -> StoredPlan | None:
    """The board's stored plan, None without one. A plan is never changed once stored (it is fixed before review;
    deleting a run deletes it), so it is decoded once per database file and plan (its `created` time, to the
    microsecond): 0.1 s of every read of a 5 x 10,000 board. Treat it as read-only."""
    row = db.execute("SELECT rowid, created FROM board_plans WHERE board = ?", [name]).fetchone()
    if row is None:
        return None
    return kept(_PLANS, db, (name, row[0], row[1]), lambda: _read_board_plan(db, row[0]))


def _read_board_plan(db: Database, rowid: int) -> StoredPlan:
    name, runs, seed, created, plan = db.execute(
        "SELECT board, runs, seed, created, plan FROM board_plans WHERE rowid = ?", [rowid]).fetchone()
    body = json.loads(plan)
    return StoredPlan(name, json.loads(runs), int(seed), created, Plan.from_json(body["plan"]), body["documents"],
                      body.get("movable") or {})


def _stamp(row: dict) -> list:
    """What identifies a run's judge side when the plan stores it (`run_key`, as JSON)."""
    return list(run_key(row))


def _plan_movable(db: Database, task: TaskFamily, runs: Sequence[str], block_of: dict[tuple[str, str], str]
                  ) -> dict[str, dict]:
    """`StoredPlan.movable` for the plan's runs: per block, the union of its documents' `movable.movable_leaves`."""
    out = {}
    for r in runs:
        row = run_row(db, r)
        per_block: dict[str, set[tuple]] = {}
        for doc, leaves in movable_leaves(db, task, row["id"]):
            if leaves:
                per_block.setdefault(block_of[(r, doc)], set()).update(leaves)
        sets: dict[tuple, int] = {}  # blocks share a few distinct sets (9-10 in 3,200 at the board bench): stored once
        blocks = {b: sets.setdefault(tuple(sorted(ls)), len(sets)) for b, ls in per_block.items()}
        out[r] = {"stamp": _stamp(row), "sets": [list(map(list, ls)) for ls in sets], "blocks": blocks}
    return out


def _summary(stored: StoredPlan) -> dict:
    return plan_summary(stored.plan) | {"board": stored.board, "runs": stored.runs, "created": stored.created,
                                        "documents": len(stored.documents)}


def board_plan(db: Database, name: str) -> dict | None:
    """The board's plan as `plan_summary` gives a run's (seed, design, blocks, strata, take-all), with its runs and
    documents; None when the board has none."""
    stored = load_board_plan(db, name)
    return None if stored is None else _summary(stored)


def _require(db: Database, name: str, runs: Sequence[str] | None = None) -> StoredPlan:
    stored = load_board_plan(db, name)
    if stored is None:
        raise AuditError(f"board {name!r} has no sampling plan; create one with `python -m audit board plan {name}`")
    if runs is not None and list(runs) != stored.runs:
        raise AuditError(f"board {name!r}: its plan covers the runs {', '.join(stored.runs)}, not "
                         f"{', '.join(runs)}; a plan is fixed with its runs")
    return stored


# ---------------------------------------------------------------- the state of the board's sample


@dataclass
class BoardState:
    stored: StoredPlan
    task: TaskFamily
    views: dict[str, RunView]
    paths: dict[str, list[tuple]]
    judge: dict[str, dict[str, np.ndarray]]
    """run -> block -> judge-side count vector (the sum over the run's documents of the block)."""
    human: dict[str, dict[str, np.ndarray]]
    """run -> block -> count vector under the effective labels."""
    asks: dict[str, set[str]]
    """run -> the blocks where it asks a question."""
    labelled: set[str]
    """Blocks of the plan whose every decision, in every run, has a human label."""
    open_of: dict[str, set[str]]
    """run -> the blocks where some decision of the run has no human label yet."""
    drawn: set[str]
    """Blocks the board's queue served."""
    strata: dict[str, str]
    base: dict[str, np.ndarray]
    """run -> the judge totals of all its counts (the counts no review moved keep them)."""
    active: dict[str, np.ndarray]
    """run -> the indices (in `paths`) of the counts the vectors keep."""
    movable: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    """run -> block -> which kept counts a review can move there (`movable.movable_vectors`;
    `difference.unseen_moves`)."""
    _totals: dict = field(default_factory=dict)
    sample_key: dict[str, bytes] = field(default_factory=dict)
    """run -> `_sample_key`: with the run's judge side and `active` it fixes every number of the run's own estimate
    (`system_estimate` keeps them across states by it)."""
    waiting: set[str] = field(default_factory=set)
    """Served blocks whose every decision, in every run, is reviewed, some of them conflicted: drawn, their value
    waits for an adjudicator (the queue moves on past them, as the sample queue does)."""

    @property
    def sampled(self) -> set[str]:
        return self.labelled & self.drawn

    @property
    def known(self) -> set[str]:
        """Blocks of the plan reviewed whole without being served: counted exactly, never as draws."""
        return self.labelled - self.drawn

    def system_sample(self, run: str) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """(sampled, certain) human vectors of one run, as the run's own plan would see them: a block where the run
        asks nothing is known exactly; one whose every decision of this run has a human label is a draw if the
        queue served it, else known (the other runs' questions there may still be open)."""
        own, done = self.asks[run], self.open_of[run]
        sampled = {b: self.human[run][b] for b in own - done if b in self.drawn}
        certain = {b: self.human[run][b] for b in self.human[run]
                   if b not in own or (b not in done and b not in self.drawn)}
        return sampled, certain


def board_state(db: Database, stored: StoredPlan, policy: str = DEFAULT_POLICY,
                views: Sequence[RunView] = ()) -> BoardState:
    """The plan's runs read under `policy` (`views`: some already read under it, e.g. by `board_table`, reused)."""
    given = {v.name: v for v in views if v.db is db and v.policy == policy}
    views = {r: given.get(r) or RunView(db, run_row(db, r), policy) for r in stored.runs}
    task = get_task(views[stored.runs[0]].row["task"])
    in_plan = stored.plan.stratum_of()
    paths, judge, human, asks, base, active, movable = {}, {}, {}, {}, {}, {}, {}
    reviewed: dict[str, dict[str, np.ndarray]] = {}
    open_of: dict[str, set[str]] = {}
    unreviewed: set[str] = set()  # blocks where some decision of some run has no human label at all
    conflicted_in: set[str] = set()
    for r, view in views.items():
        audit = view.audit
        paths[r] = list(dict.fromkeys([*leaf_paths(view.row["original_counts"] or {}),
                                       *leaf_paths(audit.counts or {})]))
        changed = audit.doc_counts or {}
        run = _run_blocks(view, paths[r], stored)
        hr = {}  # the blocks reviews changed (every other keeps its judge vector)
        flat = _human_flattener(run, paths[r])
        for b in dict.fromkeys(run.block_of[d] for d, c in changed.items() if c and d in run.block_of):
            h = None
            for doc_id, j in run.docs[b]:  # the same sum, in the same order, as the judge vector's
                v = flat(doc_id, changed[doc_id]) if changed.get(doc_id) else j
                h = v if h is None else h + v
            hr[b] = h
        judge[r], human[r], base[r], active[r] = _active(run, hr)
        reviewed[r] = hr
        movable[r] = _movable_at(run, active[r])
        asks[r] = set(run.asks)  # the state's own: the kept one is never handed out
        settled: dict[str, int] = {}
        reviewed_n: dict[str, int] = {}
        for dec_id, e in view.effective.items():  # the reviewed decisions; every other one carries the judge's
            b = run.decision_block.get(dec_id)
            if b is not None and e.settled_by_humans:
                settled[b] = settled.get(b, 0) + 1
            if b is not None and e.reviewed:
                reviewed_n[b] = reviewed_n.get(b, 0) + 1
                if e.conflicted:
                    conflicted_in.add(b)
        open_of[r] = {b for b, n in run.decisions_in.items() if settled.get(b, 0) < n}
        unreviewed |= {b for b, n in run.decisions_in.items() if reviewed_n.get(b, 0) < n}
    drawn = {b for b, in db.execute("SELECT block FROM board_draws WHERE board = ?", [stored.board])}
    labelled = set(in_plan) - set().union(*open_of.values())
    strata = {b: in_plan.get(b, NO_DECISIONS) for b in stored.documents}
    drawn &= set(in_plan)
    waiting = (drawn & conflicted_in) - labelled - unreviewed
    return BoardState(stored, task, views, paths, judge, human, asks, labelled, open_of, drawn, strata, base, active,
                      movable, sample_key={r: _sample_key(reviewed[r], open_of[r], drawn) for r in views},
                      waiting=waiting)


def _sample_key(changed: dict[str, np.ndarray], open_blocks: set[str], drawn: set[str]) -> bytes:
    """A digest of what a run's own estimate reads beyond its judge side: the human vectors of the blocks its reviews
    changed, its open blocks and the draws."""
    digest = hashlib.blake2b(digest_size=16)
    for b in sorted(changed):
        digest.update(f"{b}\0".encode())
        digest.update(np.ascontiguousarray(changed[b], dtype=float).tobytes())
    for part in (open_blocks, drawn):
        digest.update(b"\1" + "\0".join(sorted(part)).encode())
    return digest.digest()


_KEEP = 8
_JUDGE_VECTORS: LRUCache = LRUCache(_KEEP)


@dataclass(frozen=True)
class RunBlocks:
    """What one run of a board's plan holds per block, whatever the reviews: read once per database file, run,
    paths and plan (`_run_blocks`), so a render after a review only re-adds the blocks reviews changed."""

    judge: dict[str, np.ndarray]
    """block -> the sum of the run's judge vectors of its documents (in the documents' stored order)."""
    movable: dict[str, np.ndarray]
    """block -> which counts a review can move in some document of it."""
    docs: dict[str, list[tuple[str, np.ndarray]]]
    """block -> (doc id, judge vector) of the run's documents in it, in that order."""
    block_of: dict[str, str]
    """doc id -> its block."""
    asks: set[str]
    """Blocks where the run has a decision."""
    decisions_in: dict[str, int]
    """block -> the run's decisions in it."""
    decision_block: dict[int, str]
    """decision id -> its block."""
    matrix: np.ndarray
    """The judge vectors as one matrix, a row per block in `judge`'s order (`row_of`)."""
    row_of: dict[str, int]
    can_move: np.ndarray
    """Which counts a review can move in some block."""
    judge_total: np.ndarray
    judge_at: dict[bytes, dict[str, np.ndarray]] = field(default_factory=dict, compare=False)
    """Kept counts (`_active`'s indices, as bytes) -> block -> the judge vector at them: read-only, shared by the
    states whose reviews keep the same counts (most do: a review seldom moves a count none could move before)."""
    movable_at: dict[bytes, dict[str, np.ndarray]] = field(default_factory=dict, compare=False)
    """The same for `movable`."""
    human_flat: dict[str, tuple[Mapping, np.ndarray]] = field(default_factory=dict, compare=False)
    """doc id -> (its counts under the reviews when last flattened, their vector): a render flattens again only the
    documents whose counts changed (equal counts compare in C, ten times faster than flattening them)."""


_RUN_BLOCKS: LRUCache = LRUCache(_KEEP)


def _run_blocks(view: RunView, paths: list[tuple], stored: StoredPlan) -> RunBlocks:
    """The run's `RunBlocks` under the plan (kept as the judge vectors are, also keyed by the run's decision count
    and the plan: a run's decisions change only when the family re-decides a document, which changes the count)."""
    key = (*run_key(view.row), tuple(paths), stored.board, stored.created)
    return kept(_RUN_BLOCKS, view.db, key, lambda: _read_run_blocks(view, paths, stored))


def _read_run_blocks(view: RunView, paths: list[tuple], stored: StoredPlan) -> RunBlocks:
    r = view.name
    block_of = {d: b for b, per in stored.documents.items() for d in per.get(r, ())}
    planned = stored.movable.get(r)
    if planned is not None and planned["stamp"] == _stamp(view.row):
        mask = path_mask(paths)
        masks = [mask(map(tuple, leaves)) for leaves in planned["sets"]]
        for m in masks:
            m.setflags(write=False)  # shared by the blocks with that set
        can_move = None
        movable = {b: masks[i] for b, i in planned["blocks"].items()}
    else:
        can_move = movable_vectors(view, paths)
        movable = {}
    judge: dict[str, np.ndarray] = {}
    docs: dict[str, list[tuple[str, np.ndarray]]] = {}
    for doc_id, j in _judge_vectors(view, paths).items():
        b = block_of[doc_id]
        judge[b] = judge[b] + j if b in judge else j
        if can_move is not None:
            movable[b] = movable[b] | can_move[doc_id] if b in movable else can_move[doc_id]
        docs.setdefault(b, []).append((doc_id, j))
    for b in judge:
        if b not in movable:
            movable[b] = np.zeros(len(paths), dtype=bool)
    decisions_in: dict[str, int] = {}
    decision_block: dict[int, str] = {}
    for dec_id, doc in view.db.execute("SELECT id, doc_id FROM decisions WHERE run_id = ?", [view.id]):
        b = decision_block[dec_id] = block_of[doc]
        decisions_in[b] = decisions_in.get(b, 0) + 1
    blocks = list(judge)
    matrix = np.array([judge[b] for b in blocks]).reshape(len(blocks), len(paths))
    can = (np.any(np.array([movable[b] for b in blocks]).reshape(len(blocks), len(paths)), axis=0) if movable
           else np.zeros(len(paths), dtype=bool))
    return RunBlocks(judge, movable, docs, block_of, set(decisions_in), decisions_in, decision_block, matrix,
                     {b: i for i, b in enumerate(blocks)}, can, matrix.sum(axis=0))


def _judge_vectors(view: RunView, paths: list[tuple]) -> dict[str, np.ndarray]:
    """doc id -> the run's judge-side count vector (stored once when scored, never changed: kept per database file,
    run and paths, so a queue step flattens only the documents reviews changed)."""

    def read() -> dict[str, np.ndarray]:
        flat = row_flattener(paths)  # the paths indexed once for every document
        # Documents with the same stored counts share one vector, decoded and flattened once (each run of the board
        # bench holds 81-87 distinct counts in 10,000 abstracts); read-only, so no reader can change another's.
        # The run's counts as the sample's state reads them (kept per run, from the counts index, in document id
        # order; equal counts are one object), not every document's row (#38).
        by_counts: dict[int, np.ndarray] = {}
        out = {}
        for doc, c in _original_doc_counts(view).items():
            v = by_counts.get(id(c))
            if v is None:
                v = by_counts[id(c)] = flat(c)
                v.setflags(write=False)
            out[doc] = v
        return out

    return kept(_JUDGE_VECTORS, view.db, (*run_key(view.row), tuple(paths)), read)


def _human_flattener(run: RunBlocks, paths: list[tuple]):
    """`row_flattener(paths)` of a document's reviewed counts, kept in `run.human_flat` while they stay equal."""
    flat, memo = row_flattener(paths), run.human_flat

    def of(doc_id: str, counts: Mapping) -> np.ndarray:
        seen = memo.get(doc_id)
        if seen is not None and seen[0] == counts:
            return seen[1]
        v = flat(counts)
        v.setflags(write=False)
        memo[doc_id] = (counts, v)
        return v
    return of


def _movable_at(run: RunBlocks, active: np.ndarray) -> dict[str, np.ndarray]:
    """block -> which kept counts (`active`) a review can move there, kept per kept-count set as `judge_at` is."""
    return _at_kept_counts(run.movable_at, active, lambda: {b: m[active] for b, m in run.movable.items()})


def _at_kept_counts(memo: dict, active: np.ndarray, build):
    """`build()`, kept in `memo` per kept-count set (a few at a time; a board's stay the same for long)."""
    key = active.tobytes()
    found = memo.get(key)
    if found is None:
        if len(memo) >= 4:
            memo.clear()
        found = memo[key] = build()
    return found


def _active(run: RunBlocks, changed: dict[str, np.ndarray]
            ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """The counts some review moved (in some block the human count differs from the judge's) or can move
    (`movable`: `difference.unseen_moves` gives them a variance), and the totals of all.

    A count no review moved and none can move is the same in every block under both labels, so every estimator gives
    it its judge total exactly, with no variance: the vectors keep only the others (the metric reads the rest from
    the totals), which is what makes a board's numerical gradients affordable (CHIMERA: ~130 counts per run, a few
    dozen kept). `changed`: the human vector of each block a review changed; the others are the judge's."""
    blocks, full_j = list(run.judge), run.matrix
    moved = run.can_move.copy()
    if changed:
        rows = [run.row_of[b] for b in changed]
        moved |= np.any(full_j[rows] != np.array(list(changed.values())).reshape(len(rows), -1), axis=0)
    moved = np.flatnonzero(moved)
    if moved.size == 0:
        moved = np.array([0])
    def judge_at() -> dict[str, np.ndarray]:
        kept_j = full_j[:, moved]
        kept_j.setflags(write=False)
        return {b: kept_j[i] for i, b in enumerate(blocks)}
    judge = _at_kept_counts(run.judge_at, moved, judge_at)
    human = dict(judge)
    for b, h in changed.items():
        human[b] = h[moved]
    return judge, human, run.judge_total, moved


# ---------------------------------------------------------------- estimates


def _metric(state: BoardState, run: str, cell: MetricCell):
    """The cell's value from the run's kept counts (the others at their totals)."""
    options = state.views[run].row["inputs"].get("options") or {}
    full = metric_of_totals(state.task, cell, state.paths[run], options)
    base, active = state.base[run], state.active[run]

    def g(vec: np.ndarray) -> float:
        total = base.copy()
        total[active] = vec
        return full(total)
    return g


_JUDGE_GRADIENTS: LRUCache = LRUCache(8 * _KEEP)


def _judge_gradient(state: BoardState, run: str, cell: MetricCell) -> np.ndarray:
    """The gradient of the run's cell at its judge-only totals (kept counts): a function of the run's judge side and
    which counts are kept, so it is kept across states (per database file, run, paths, cell and kept counts)."""
    view, active = state.views[run], state.active[run]

    def compute() -> np.ndarray:
        at = state.base[run][active]
        return delta_method(_metric(state, run, cell), at, np.zeros((at.size, at.size)))[2]

    key = (*run_key(view.row), tuple(state.paths[run]), cell.path,
           active.tobytes())
    return kept(_JUDGE_GRADIENTS, view.db, key, compute)


_SYSTEM_ESTIMATES: LRUCache = LRUCache(16 * _KEEP)


def system_estimate(state: BoardState, run: str, cell: MetricCell) -> tuple[Estimate, Estimate]:
    """(fixed-n, anytime) estimate of one run's cell: the single-run estimator on its vectors, the board's sample.

    Kept across states while what it reads is unchanged (the run's judge side and kept counts, the plan, the human
    vectors of the blocks its reviews changed, its open blocks and the draws): a review of a question one system asks
    re-estimates that system alone."""
    view = state.views[run]
    key = (*run_key(view.row), state.stored.board, state.stored.created, tuple(state.paths[run]), cell.path,
           state.active[run].tobytes(), state.sample_key[run])
    return kept(_SYSTEM_ESTIMATES, view.db, key, lambda: _system_estimate(state, run, cell))


def _system_estimate(state: BoardState, run: str, cell: MetricCell) -> tuple[Estimate, Estimate]:
    sampled, certain = state.system_sample(run)
    bounds = state.task.metric_bounds(cell)
    if run not in state._totals:  # every metric of the run reads the same totals: estimated once per state
        state._totals[run] = estimated_totals(state.judge[run], state.strata, sampled, certain=certain,
                                           movable=state.movable[run], variance=VARIANCE)
    one = board_estimate({run: state.judge[run]}, state.strata, {run: sampled}, {run: _metric(state, run, cell)},
                         certain={run: certain}, higher_is_better=cell.higher_is_better, bounds=bounds, level=LEVEL,
                         movable={run: state.movable[run]}, totals={run: state._totals[run]})
    per, _ = anytime(one, planned_n=planned_n_for(len(state.asks[run] & set(state.stored.plan.stratum_of()))),
                     bounds=bounds)
    return one.per_system[run], per[run]


def pairs_board(state: BoardState, cell: MetricCell, *, per_system: bool = True
                ) -> tuple[Board, dict[str, Estimate], list]:
    """The joint board of every run on `cell` (pairs from the joint vectors; population: the plan's blocks), its
    anytime per-system estimates (none with `per_system=False`: the caller estimates each system on its own
    population) and its anytime pairs."""
    runs = state.stored.runs
    drawn, known = state.sampled, state.known  # each a set built on every access: built once here
    sampled = {r: {b: state.human[r][b] for b in drawn} for r in runs}
    certain = {r: {b: state.human[r][b] for b in state.human[r] if b not in state.strata or
                   state.strata[b] == NO_DECISIONS or b in known} for r in runs}
    board = board_estimate({r: state.judge[r] for r in runs}, state.strata, sampled,
                           {r: _metric(state, r, cell) for r in runs}, certain=certain,
                           higher_is_better=cell.higher_is_better, bounds=state.task.metric_bounds(cell), level=LEVEL,
                           movable={r: state.movable[r] for r in runs}, per_system=per_system)
    per_any, pairs_any = anytime(board, planned_n=planned_n_for(len(state.stored.plan.blocks)),
                                 bounds=state.task.metric_bounds(cell))
    return board, per_any, pairs_any


def _ci(est: Estimate) -> list[float] | None:
    return list(est.ci) if est.ci is not None else None


def _half(ci: Sequence[float] | None) -> float | None:
    return None if ci is None else (ci[1] - ci[0]) / 2


def _cells(task: TaskFamily) -> list[MetricCell]:
    return [c for c in task.headline if task.sampled_by(c) == "totals"]


@dataclass
class Table:
    """The primary metric's estimates, pairs and ranking advice (what the queue and `board_estimates` share)."""

    cell: MetricCell
    per: dict[str, tuple[Estimate, Estimate]]
    board: Board
    pairs_any: list
    order: list[str]
    adjacent: list[dict]


def _value(fixed: Estimate) -> float:
    return fixed.estimate if fixed.estimate is not None else fixed.judge_only


def residuals(state: BoardState, cell: MetricCell, a: str, b: str | None = None) -> dict[str, float]:
    """First-order effect on θ_a (− θ_b) of each sampled block's review, grad · (c_H − c_J), the gradient at the
    judge-only totals as the single-run queue takes it: what the stopping advice reads (the board's allocation
    reads no review's outcome: `planned_pick`)."""
    terms = [(a, _judge_gradient(state, a, cell))] + ([] if b is None else [(b, -_judge_gradient(state, b, cell))])
    return {blk: float(sum(grad @ (state.human[r][blk] - state.judge[r][blk]) for r, grad in terms))
            for blk in state.sampled}


def _advice(state: BoardState, table_pair: dict, cell: MetricCell, n_pairs: int) -> dict:
    """How many more documents settle one pair: the single-run `stopping_advice` aimed at a simultaneous anytime
    half-width of |difference| (the interval then excludes 0), the minimum sample counted first."""
    a, b = table_pair["a"], table_pair["b"]
    res = residuals(state, cell, a, b)
    target = abs(table_pair["difference"])
    return stopping_advice(state.stored.plan, res, target, now_half_width=_half(table_pair["anytime"]["ci"]),
                           now_se=table_pair["se"], min_sampled=MIN_SAMPLED_BLOCKS,
                           certain=sorted(state.known), alpha=(1 - LEVEL) / max(1, n_pairs))


def primary_table(state: BoardState, *, own: bool = True) -> Table:
    """The primary metric's table. `own`: each system's estimate as its own plan would give it (its population: the
    blocks where it asks a question; what the board shows); else the joint board's (population: every planned
    block; the queue orders the systems by it, at half the cost)."""
    cell = target_cell(state.task)
    runs = state.stored.runs
    board, per_any, pairs_any = pairs_board(state, cell, per_system=not own)
    per = ({r: system_estimate(state, r, cell) for r in runs} if own else
           {r: (board.per_system[r], per_any[r]) for r in runs})
    sign = 1 if cell.higher_is_better else -1
    order = sorted(runs, key=lambda r: (-sign * _value(per[r][0]), runs.index(r)))
    by_pair = {(p.a, p.b): (p, q) for p, q in zip(board.pairs, pairs_any, strict=True)}
    adjacent = []
    for hi, lo in zip(order, order[1:], strict=False):
        p, q = by_pair[(hi, lo)] if (hi, lo) in by_pair else by_pair[(lo, hi)]
        flip = 1 if p.a == hi else -1
        est = p.simultaneous
        diff = est.estimate if est.estimate is not None else est.judge_only
        ci = None if q.simultaneous.ci is None else sorted((flip * q.simultaneous.ci[0], flip * q.simultaneous.ci[1]))
        adjacent.append({"a": hi, "b": lo, "difference": flip * diff, "se": est.se, "anytime": {"ci": ci}})
    for pair in adjacent:
        advice = _advice(state, pair, cell, len(board.pairs))
        pair["more_documents"] = int(advice["more"])
        pair["waiting_for"] = advice["waiting_for"]
        pair["unsettled"] = _unsettled(pair["anytime"]["ci"], pair["difference"])
    return Table(cell, per, board, pairs_any, order, adjacent)


def _unsettled(ci: Sequence[float] | None, difference: float) -> float:
    """How much of the interval lies on the other side of 0 from the difference, relative to its width (0: settled;
    0.5: centred on 0); no interval yet counts as the least settled."""
    if ci is None:
        return float("inf")
    lo, hi = ci
    width = hi - lo
    if width <= 0:
        return 0.0
    wrong = max(0.0, -lo) if difference >= 0 else max(0.0, hi)
    return min(wrong, width) / width


def board_estimates(db: Database, name: str, *, policy: str = DEFAULT_POLICY, views: Sequence[RunView] = ()
                    ) -> dict | None:
    """The board's table from its plan: None without a plan, else

    `{"systems": {run: {metric path: {"value", "ci", "anytime": {"ci", ...}, ...}, "bias": {metric path:
    {"value", "ci"}}}}, "pairs": [{"a", "b", "difference", "ci", "ci_simultaneous", "anytime": {"ci"}}], "metric",
    "more_documents", "least_settled", "rank_sets", "rank_sets_anytime", "interval", "waiting_for_adjudication",
    "waiting_note"}`: drawn documents waiting for an adjudicator are left out of every estimate until settled, and
    `waiting_note` says so (as the single-run `estimate` does).

    Per system, every headline metric estimated from summed counts: the single-run estimator with the board's sample
    (fixed-n `ci`, `anytime.ci`), the judge's bias (judge-only − estimate) and its interval. `pairs`: every pairwise
    difference of the primary metric from the joint vectors, `ci` the pair alone at 95%, `ci_simultaneous` over all
    pairs at once (Bonferroni, fixed-n: what rank sets read), `anytime.ci` simultaneous and anytime-valid.
    `more_documents`: how many more documents settle the ranking (the adjacent pair that needs most; 0 when every
    adjacent pair's simultaneous anytime interval excludes 0 or the review is complete).
    """
    stored = load_board_plan(db, name)
    if stored is None:
        return None
    state = board_state(db, stored, policy, views)
    table = primary_table(state)
    systems: dict[str, dict] = {r: {"bias": {}} for r in stored.runs}
    for cell in _cells(state.task):
        path = "/".join(cell.path)
        for r in stored.runs:
            fixed, anyt = table.per[r] if cell == table.cell else system_estimate(state, r, cell)
            h = headline(fixed, cell.value(state.views[r].audit.metrics))
            systems[r][path] = {
                "value": fixed.estimate, "ci": _ci(fixed), "se": fixed.se, "label": cell.label, "interval": "fixed-n",
                "anytime": {"interval": "anytime", "ci": _ci(anyt), "note": anyt.note},
                "judge_only": fixed.judge_only, "audited": h["reviewed_so_far"], "note": fixed.note,
                "n_documents_sampled": fixed.n_sampled, "n_documents_known": fixed.n_reviewed - fixed.n_sampled,
                "n_documents": fixed.n_total}
            systems[r]["bias"][path] = {"value": h["bias"], "ci": h["bias_ci"]}
    for cell in median_cells(state.task):
        for r in stored.runs:
            systems[r]["/".join(cell.path)], systems[r]["bias"]["/".join(cell.path)] = board_median(state, r, cell)
    pairs = [{"a": p.a, "b": p.b, "difference": p.simultaneous.estimate, "ci": _ci(p.estimate),
              "ci_simultaneous": _ci(p.simultaneous), "anytime": {"ci": _ci(q.simultaneous)}, "se": p.estimate.se,
              "note": p.simultaneous.note}
             for p, q in zip(table.board.pairs, table.pairs_any, strict=True)]
    sim_any = {(q.a, q.b): q.simultaneous.ci for q in table.pairs_any}
    least = max(table.adjacent, key=lambda p: p["more_documents"], default=None)
    waiting = [b.id for b in stored.plan.blocks if b.id in state.waiting]  # drawn, left out until adjudicated
    return {"board": name, "runs": stored.runs, "metric": "/".join(table.cell.path), "systems": systems,
            "pairs": pairs, "order": table.order,
            "adjacent": [{k: p[k] for k in ("a", "b", "difference", "anytime", "more_documents", "waiting_for")}
                         for p in table.adjacent],
            "more_documents": None if least is None else least["more_documents"],
            "least_settled": None if least is None else [least["a"], least["b"]],
            "rank_sets": rank_sets_listed(table.board.rank_sets),
            "rank_sets_anytime": rank_sets_listed(rank_sets(stored.runs, sim_any,
                                                   higher_is_better=table.cell.higher_is_better)),
            "interval": f"{LEVEL:.0%} per system; differences simultaneous over {count_noun(len(pairs), 'pair')} "
                        "(Bonferroni); anytime: valid whenever reviewing stops",
            "sampled_documents": len(state.sampled), "known_documents": len(state.known),
            "planned_documents": len(stored.plan.blocks), "waiting_for_adjudication": waiting,
            "waiting_note": waiting_text(waiting, estimate=True)}


# ---------------------------------------------------------------- the queue


def _open_served(state: BoardState) -> list:
    """Served blocks not yet reviewed whole, in the plan's order: the queue finishes them first (not those waiting
    for an adjudicator: a reviewer can do nothing there)."""
    return [b for b in state.stored.plan.blocks
            if b.id in state.drawn and b.id not in state.labelled and b.id not in state.waiting]


def _review_in(state: BoardState, block: str, prefer: Sequence[str]) -> list[dict]:
    """The runs to review a block in, and their decisions: each distinct question once, in the first run of
    `prefer` (then the board's order) that asks it."""
    order = [*prefer, *[r for r in state.stored.runs if r not in prefer]]
    seen: set[str] = set()
    out = []
    for r in order:
        docs = state.stored.documents[block][r]
        rows = state.views[r].db.execute(
            f"SELECT id, qkey FROM decisions WHERE run_id = ? AND doc_id IN ({','.join('?' * len(docs))}) ORDER BY id",
            [state.views[r].id, *docs]).fetchall()
        mine = []
        for dec_id, qkey in rows:
            key = qkey or f"decision {dec_id}"
            if key not in seen:
                seen.add(key)
                mine.append(dec_id)
        if mine:
            out.append({"run": r, "documents": docs, "decisions": mine, "numbers": state.views[r].decision_tags(mine)})
    return out



def planning_variance(state: BoardState, runs: Sequence[str]) -> dict[str, float]:
    """Block -> the planning variance of its review's effect on the metrics of `runs`, from judge-side information
    only: Σ_s q_sb / Q_s², with q_sb the run's decisions in the block whose answer is not certain by construction
    (`TaskFamily.trivial`) and Q_s the run's total of them. A review flips some of a block's questions, each
    moving a count of the run by about one, and a metric of summed counts (F1) moves by about 1/Q_s per count: so
    the variance of a block's effect grows with its changeable questions, weighted by each run's scale. It is
    fixed before any review, so the allocation it drives is a design, not a reading of the reviews' outcomes."""
    out: dict[str, float] = {}
    block_of = {(r, d): b for b, per in state.stored.documents.items() for r, docs in per.items() for d in docs}
    for r in runs:
        view = state.views[r]
        per: dict[str, int] = {}
        for doc, kind, typ, left, right, judge in view.db.execute(
                "SELECT doc_id, kind, type, left, right, judge_label FROM decisions WHERE run_id = ?", [view.id]):
            if not state.task.trivial({"kind": kind, "type": typ, "left": left, "right": right, "judge": judge}):
                b = block_of[(r, doc)]
                per[b] = per.get(b, 0) + 1
        total = sum(per.values())
        for b, q in per.items():
            out[b] = out.get(b, 0.0) + q / (total * total)
    return out


def planned_pick(state: BoardState, runs: Sequence[str]) -> Pick | None:
    """The next planned block for the aim `runs` (`next_board_document` says why a design): take-all strata, then
    `next_unit`'s minimum per stratum, then the largest Neyman gain M_h²S_h²[1/m_h − 1/(m_h + 1)]/c_h with S_h² the
    stratum's mean `planning_variance` and c_h its mean decisions per block; inside the stratum the lowest-ranked
    open block. Only the strata whose next open block the aim asks about (all, if none)."""
    plan = state.stored.plan
    asked = set().union(*(state.asks[r] for r in runs))
    heads: dict[str, PlanBlock] = {}
    for blk in plan.blocks:
        if blk.id not in state.labelled and blk.id not in state.waiting and blk.stratum not in heads:
            heads[blk.stratum] = blk
    strata = {h for h, blk in heads.items() if blk.id in asked} or set(heads)
    if not strata:
        return None
    sub = replace(plan, blocks=tuple(blk for blk in plan.blocks if blk.stratum in strata))
    ids = {blk.id for blk in sub.blocks}
    known = [k for k in state.known if k in ids]
    sampled = [k for k in state.sampled | state.waiting if k in ids]  # waiting: drawn, as an adjudication would leave
    # the rules before the Neyman step read only how many blocks each stratum has had; with no residual variance at
    # all `next_unit` falls back to proportional allocation, where the planned gain takes over
    first = next_unit(sub, dict.fromkeys(sampled, 0.0), certain=known)
    if first is None or first.why in ("take-all", "minimum"):
        return first
    var = planning_variance(state, runs)
    size: dict[str, int] = {}
    s2: dict[str, float] = {}
    cost: dict[str, float] = {}
    m: dict[str, int] = {}
    done = set(known)
    drawn = set(sampled)
    for blk in sub.blocks:
        if blk.id in done:
            continue
        h = blk.stratum
        size[h] = size.get(h, 0) + 1
        s2[h] = s2.get(h, 0.0) + var.get(blk.id, 0.0)
        cost[h] = cost.get(h, 0.0) + max(len(blk.units), 1)
        m[h] = m.get(h, 0) + (blk.id in drawn)
    open_ = [h for h in strata if h in size and m[h] < size[h]]
    gains = {h: gain(size[h], m[h], s2[h] / size[h], cost[h] / size[h]) for h in open_}
    if not gains or max(gains.values()) <= 0:
        return first
    best = max(open_, key=lambda h: (gains[h], size[h], h))
    b = heads[best]
    return Pick(b.id, best, b.units, b.rank, "neyman (planned)", gains[best])


def next_board_document(db: Database, name: str, runs: Sequence[str], *, focus: str | None = None) -> dict | None:
    """The document the board's queue serves next (stored as served: a served document reviewed whole is a draw),
    or None when every planned document is reviewed.

    Which stratum: the single-run allocation's rules (`next_unit`: take-all, then a minimum per stratum), then the
    largest Neyman gain on a planning variance read from judge-side information only (`planning_variance`: the
    aim's questions a review can change, per block), never from the reviews' outcomes: a stratum choice that read
    them (the former residual-driven Neyman gain) made each stratum's sample size depend on the errors found there,
    and the fixed-n intervals under-covered (0.92-0.93 on the clustered truth, docs/board.md). Inside a stratum the
    plan's order is kept, so every system's sample is a simple random one of that size. The aim: every system of
    the board (the whole table), or with `focus` the one run the user picks, among the strata whose next planned
    document the aim asks about. `pair` names the adjacent pair of the estimated ranking least settled (the
    largest share of its simultaneous anytime difference interval on the wrong side of 0; no interval yet first):
    its runs are reviewed first and `more_documents` counts for the ranking. A served document not yet reviewed
    whole comes first; one reviewed whole but conflicted waits for an adjudicator, and the queue moves on past it to
    what an immediate adjudication would give (label-blind), serving it again only when nothing else is left.

    Returns:
        `{"doc", "documents": {run: doc ids}, "review_in": [{"run", "documents", "decisions"}], "stratum", "rank",
        "why", "conflicted" (listed decisions reviewed but not settled), "waiting_for_adjudication" (served documents
        reviewed whole, some of it conflicted: the queue moves on past them and serves them when nothing else is
        left), "how" (how to review them), "pair", "focus", "more_documents", "more_text", "sampled_documents"}`.

    Raises:
        AuditError: no plan, runs other than the plan's, or a focus that is not one of them.
    """
    stored = _require(db, name, runs)
    if focus is not None and focus not in stored.runs:
        raise AuditError(f"board {name!r}: --focus {focus!r} is not one of its runs ({', '.join(stored.runs)})")
    state = board_state(db, stored)
    table = primary_table(state, own=False)
    if focus is not None:
        aim_runs = [focus]
        prefer = [focus]
        mine = [p for p in table.adjacent if focus in (p["a"], p["b"])]
        pair = None
        more = max((p["more_documents"] for p in mine), default=0)
        says = f"settle {focus}'s place in the ranking"
    else:
        pick_pair = max(table.adjacent, key=lambda p: (p["unsettled"], -abs(p["difference"])), default=None)
        if pick_pair is None:
            raise AuditError(f"board {name!r} has one run: nothing to rank")
        aim_runs = list(stored.runs)
        prefer = pair = [pick_pair["a"], pick_pair["b"]]
        more = max(p["more_documents"] for p in table.adjacent)
        says = "settle the ranking"
    served = _open_served(state)
    if served:
        b = served[0]
        pick = {"doc": b.id, "stratum": b.stratum, "rank": b.rank, "why": "served before, not yet reviewed whole"}
    else:
        chosen = planned_pick(state, aim_runs)
        waits = [b for b in state.stored.plan.blocks if b.id in state.waiting]
        if chosen is None and waits:  # nothing else left: the waiting documents, not "every document is reviewed"
            b = waits[0]
            pick = {"doc": b.id, "stratum": b.stratum, "rank": b.rank, "why": "waiting for an adjudicator"}
        elif chosen is None:
            return None
        else:
            pick = {"doc": chosen.block, "stratum": chosen.stratum, "rank": chosen.rank, "why": chosen.why}
            with transaction(db):
                db.execute("INSERT OR IGNORE INTO board_draws (board, block, served) VALUES (?, ?, ?)",
                           [name, chosen.block, now()])
    more_text = (f"{more} more document{'s' if more != 1 else ''} {says}" if more else
                 "the ranking is settled" if focus is None else f"{focus}'s place in the ranking is settled")
    review_in = _review_in(state, pick["doc"], prefer)
    conflicted = [d for item in review_in for d in item["decisions"]
                  if (e := state.views[item["run"]].effective.get(d)) is not None and e.conflicted]
    if served and conflicted:  # served again: say what keeps it open
        pick["why"] += f"; {conflicted_why(len(conflicted))}"
    waiting = [b.id for b in stored.plan.blocks if b.id in state.waiting]
    if waiting:
        pick["why"] += f"; {waiting_text(waiting)}"
    return pick | {"documents": stored.documents[pick["doc"]], "review_in": review_in, "conflicted": conflicted,
                   "waiting_for_adjudication": waiting,
                   "how": BOARD_REVIEW_HOW, "pair": pair, "focus": focus, "more_documents": more,
                   "more_text": more_text, "sampled_documents": len(state.sampled)}


BOARD_REVIEW_HOW = ("review every decision listed in `review_in` in its run, without --sampled (the board records "
                    "its draws itself; --sampled is for a run's own sampling plan); the document counts once all "
                    "are settled")


def draws(db: Database, name: str) -> list[str]:
    """The blocks the board's queue has served, oldest first."""
    return [b for b, in db.execute("SELECT block FROM board_draws WHERE board = ? ORDER BY served, rowid", [name])]

