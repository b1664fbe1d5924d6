"""The board's table: every system's judge-only and audited metrics, ranks, pairwise differences and rank sets —
the `board show` JSON that the CLI prints, the exports render and the Leaderboard page shows.

Values are read, never recomputed another way: a system's judge-only and audited metrics are its run's stored
metrics and `RunView.audit` under the policy (what the Scores page and `export` show), through the family's
`board_cells` (and `system_metrics` for systems inside one run). Intervals come from one of three places
(`interval` says which):

- every decision of every run reviewed: everything is exact (zero-width intervals; a rank set is one rank, or the
  ranks tied systems share);
- a board sampling plan (`audit.board.joint.board_estimates`): the joint estimates, differences and rank sets;
  for systems inside one run (ideation), the run's own plan (`audit.board.one_run.one_run_estimates`);
- neither: no valid interval exists, so none is given (`ci`, `rank_set` null) and `interval` says why.

Ranks, rank sets and the sentences on which pairs are settled come from `scoring.stats.board`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import combinations

from cachetools import LRUCache
from sqlite_utils import Database

from audit.board.store import get_board, judges_differ
from audit.effective import DEFAULT_POLICY
from audit.store.kept import kept
from audit.views import RunView, load_view
from scoring.families.base import MetricCell, TaskFamily
from scoring.stats.board import Board, PairDifference, competition_ranks, rank_sets, settled
from scoring.stats.estimators import Estimate

LEVEL = 0.95
EXACT = "exact"
JOINT = "joint plan"
RUN_PLAN = "run plan"
NONE = "none"
SAMPLED = (JOINT, RUN_PLAN)
"""The modes whose values and intervals are a sample's estimates."""
PAIRS_PAIRED = ("Each difference is estimated on the plan's documents with the systems' answers paired document by "
                "document (what narrows its interval), so it can differ slightly from the difference of the two "
                "systems' estimates, each made on the documents where that system asks a question.")
"""Why, with a sample, A − B need not equal the difference of the estimates shown (`board_table`'s
`pairs_explained`, which every surface showing both says)."""
INTERVAL_WORDS = {
    EXACT: "exact: every decision of every system reviewed, so every interval has zero width and every rank set is "
           "one rank (tied systems share theirs)",
    JOINT: "the board's sampling plan: 95% intervals of two kinds, fixed-n (valid if the number of documents to "
           "review was fixed in advance) and anytime (valid whenever you decide to stop reviewing); rank sets at "
           "95% confidence for all systems at once (Bonferroni over the pairs, docs/board.md)",
    RUN_PLAN: "the run's own sampling plan (its systems are compared inside one run, so the run's sample serves "
              "them all): 95% intervals of two kinds, fixed-n (valid if the number of documents to review was "
              "fixed in advance) and anytime (valid whenever you decide to stop reviewing); rank sets at 95% "
              "confidence for all systems at once (Bonferroni over the pairs, docs/board.md)",
    NONE: "none: the board has no sampling plan and not every decision is reviewed, so no interval is valid (draw "
          "the board's sample and review it, or review every decision); audited values are reviewed so far",
}
NONE_ONE_RUN = ("none: the run has no sampling plan and not every decision is reviewed, so no interval is valid (draw "
                "the run's sample and review it, or review every decision); audited values are reviewed so far")
"""`INTERVAL_WORDS[NONE]` for a board of one run's systems, whose sample is the run's own."""


@dataclass(frozen=True)
class System:
    """One row of the board: a run (or a system inside the one run) and its metrics."""

    name: str
    run: str
    judge_metrics: Mapping
    audited_metrics: Mapping


def metric_key(cell: MetricCell) -> str:
    """How a board keys a metric: its path joined by `/` (as `audit.review.sampling.estimate` keys a run's)."""
    return "/".join(cell.path)


def primary_cell(task: TaskFamily, cells: Sequence[MetricCell]) -> MetricCell:
    """The metric a board ranks by: the first cell reviews can move and a sample can estimate from totals (the
    sample queue's default target), else the first."""
    return next((c for c in cells if c.reviewable and task.sampled_by(c) == "totals"), cells[0])


def board_systems(views: Sequence[RunView], systems: Sequence[str] | None) -> list[System]:
    """The board's rows: one per run, or (a family with systems inside one run) one per system of that run."""
    if systems is None:
        return [System(v.name, v.name, v.original_metrics, v.audit.metrics) for v in views]
    view = views[0]
    task = view.task
    return [System(s, view.name, task.system_metrics(view.original_metrics, s),
                   task.system_metrics(view.audit.metrics, s)) for s in systems]


def _joint_estimates(db: Database, name: str, policy: str, views: Sequence[RunView] = ()) -> dict | None:
    """The board plan's estimates (`audit.board.joint`), None when the board has no plan."""
    from audit.board.joint import board_estimates

    return board_estimates(db, name, policy=policy, views=views)


def _sample_estimates(db: Database, board: Mapping, policy: str, views: Sequence[RunView] = ()) -> dict | None:
    """The estimates of the board's sample, None without one: the board's joint plan, or for systems inside one
    run the run's own plan (`audit.board.one_run`: one plan per run, so the Scores page and the board agree)."""
    if board["systems"] is None:
        return _joint_estimates(db, board["name"], policy, views)
    from audit.board.one_run import one_run_estimates

    return one_run_estimates(db, board["name"], board["runs"][0], board["systems"], policy=policy)


@dataclass(frozen=True)
class Structure:
    """What a board's runs ask, independent of reviews: distinct questions, documents with a decision, questions
    two or more runs share."""

    questions: int
    documents: int
    shared: int


_STRUCTURE: LRUCache = LRUCache(64)
"""`structure` per database file and runs (id, name, creation time, decision count): a run's decisions change only
when a review makes the family re-decide a document, which updates its count, so a cached entry never goes stale;
the scans it saves take most of a board's time at 5 x 10,000 documents."""


def structure(db: Database, views: Sequence[RunView]) -> Structure:
    """The board's `Structure` (kept, see `_STRUCTURE`)."""
    key = tuple((v.id, v.name, v.row["created"], v.row["n_decisions"]) for v in views)
    return kept(_STRUCTURE, db, key, lambda: _read_structure(db, views))


def _read_structure(db: Database, views: Sequence[RunView]) -> Structure:
    ids = [v.id for v in views]
    marks = ",".join("?" * len(ids))
    keyed, unkeyed = db.execute(f"SELECT COUNT(DISTINCT qkey), SUM(qkey IS NULL) FROM decisions WHERE run_id IN "
                                f"({marks})", ids).fetchone()
    docs: set[str] = set()
    for v in views:
        docs.update(d for d, in db.execute("SELECT DISTINCT doc_id FROM decisions WHERE run_id = ?", [v.id]))
    shared = 0 if len(ids) < 2 else db.execute(
        f"SELECT COUNT(*) FROM (SELECT qkey FROM decisions WHERE run_id IN ({marks}) AND qkey IS NOT NULL GROUP BY "
        "qkey HAVING COUNT(DISTINCT run_id) > 1)", ids).fetchone()[0]
    return Structure(int(keyed or 0) + int(unkeyed or 0), len(docs), shared)


def reviewed_counts(db: Database, views: Sequence[RunView]) -> dict:
    """What the board's reviews cover: `decisions` questions settled by humans of `of_decisions` distinct
    questions the runs ask (a question shared by several runs counts once: one review settles it in all), and
    `documents` fully settled of `of_documents` documents with any decision; `conflicted` questions reviewed but
    not settled (reviewers disagree and nobody adjudicated: the judge's label stands, `audit.effective`)."""
    settled_q: set = set()
    conflicted_q: set = set()
    done_by_run: list[dict[str, int]] = []
    for v in views:
        ids_settled = [i for i, e in v.effective.items() if e.settled_by_humans]
        per_doc: dict[str, int] = {}
        for i in ids_settled:
            doc = v.reviewed.rows[i]["doc_id"]
            per_doc[doc] = per_doc.get(doc, 0) + 1
        settled_q |= _questions(db, ids_settled)
        conflicted_q |= _questions(db, [i for i, e in v.effective.items() if e.conflicted])
        done_by_run.append(per_doc)
    touched = set().union(*done_by_run) if done_by_run else set()
    complete = set(touched)
    for v, per_doc in zip(views, done_by_run, strict=True):
        docs = sorted(touched)
        for chunk in range(0, len(docs), 900):
            part = docs[chunk:chunk + 900]
            for doc, n in db.execute(f"SELECT doc_id, COUNT(*) FROM decisions WHERE run_id = ? AND doc_id IN "
                                     f"({','.join('?' * len(part))}) GROUP BY doc_id", [v.id, *part]):
                if per_doc.get(doc, 0) < n:
                    complete.discard(doc)
    shape = structure(db, views)
    return {"decisions": len(settled_q), "of_decisions": shape.questions, "documents": len(complete),
            "of_documents": shape.documents, "conflicted": len(conflicted_q - settled_q)}


def _questions(db: Database, decision_ids: Sequence[int]) -> set:
    """The questions the decisions ask (their key; a decision without one is its own question)."""
    found: set = set()
    for chunk in range(0, len(decision_ids), 900):
        part = list(decision_ids[chunk:chunk + 900])
        for i, q in db.execute(f"SELECT id, qkey FROM decisions WHERE id IN ({','.join('?' * len(part))})", part):
            found.add(q if q is not None else ("id", i))
    return found


def conflicted_text(reviewed: Mapping) -> str:
    """The clause that follows a board's reviewed count when reviewers disagree on some questions ("" otherwise):
    those are reviewed but not counted as settled, so a board whose reviews all conflict does not read as unread."""
    n = reviewed.get("conflicted", 0)
    return (f" ({n:,} more reviewed but conflicted: the judge's label stands until adjudicated)" if n else "")


def shared_questions(db: Database, views: Sequence[RunView]) -> int:
    """Question keys asked by two or more of the board's runs (one review settles each in all of them)."""
    return structure(db, views).shared


def _point(v: float | None) -> dict | None:
    return None if v is None else {"value": v, "ci": [v, v], "anytime": {"ci": [v, v]}}


def _joint_pair(joint: Mapping, a: str, b: str) -> dict | None:
    """The joint plan's difference a − b (a pair stored as b − a is turned round)."""
    for p in joint.get("pairs", []):
        if (p["a"], p["b"]) == (a, b):
            return dict(p)
        if (p["a"], p["b"]) == (b, a):
            def neg(ci: Sequence[float] | None) -> list[float] | None:
                return None if ci is None else [-ci[1], -ci[0]]
            d = p.get("difference")
            return {**p, "a": a, "b": b, "difference": None if d is None else -d, "ci": neg(p.get("ci")),
                    "ci_simultaneous": neg(p.get("ci_simultaneous"))}
    return None


def _estimate(value: float | None, ci: Sequence[float] | None, note: str) -> Estimate:
    return Estimate(value, None if ci is None else (ci[0], ci[1]), None, value or 0.0, 0, 0, 0,
                    "exact" if ci is not None and ci[0] == ci[1] else "board", note)


def board_table(db: Database, name: str, *, policy: str = DEFAULT_POLICY) -> dict:
    """The `board show` JSON of board `name` under an effective-label `policy` (see the module docstring).

    Raises:
        AuditError: no such board, or one of its runs is unknown.
    """
    board = get_board(db, name)
    views = [load_view(db, r, policy) for r in board["runs"]]
    task = views[0].task
    rows = board_systems(views, board["systems"])
    cells = task.board_cells(views[0].original_metrics)
    primary = primary_cell(task, cells)
    key, higher = metric_key(primary), primary.higher_is_better
    reviewed = reviewed_counts(db, views)
    joint = None
    if reviewed["decisions"] >= reviewed["of_decisions"]:
        mode = EXACT
    else:
        joint = _sample_estimates(db, board, policy, views)  # the views read once, shared
        mode = NONE if joint is None else RUN_PLAN if joint.get("plan") == "run" else JOINT
    names = [s.name for s in rows]
    judge = {s.name: {metric_key(c): c.value(s.judge_metrics) for c in cells} for s in rows}
    audited = {s.name: {metric_key(c): c.value(s.audited_metrics) for c in cells} for s in rows}
    estimate: dict[str, dict | None] = {}
    bias: dict[str, dict | None] = {}
    for s in names:
        if mode == EXACT:
            estimate[s] = {k: _point(v) for k, v in audited[s].items() if v is not None}
            bias[s] = {k: _point(judge[s][k] - v) for k, v in audited[s].items()
                       if v is not None and judge[s][k] is not None}
        elif mode in SAMPLED:
            mine = dict((joint or {}).get("systems", {}).get(s) or {})
            bias[s] = mine.pop("bias", None)
            estimate[s] = mine or None
        else:
            estimate[s] = bias[s] = None

    def ranked_value(s: str) -> float | None:
        if mode in SAMPLED:
            return ((estimate[s] or {}).get(key) or {}).get("value")
        return audited[s][key]

    values = {s: ranked_value(s) for s in names}
    pairs, sim = [], {}
    for a, b in combinations(names, 2):
        va, vb = values[a], values[b]
        d = None if va is None or vb is None else va - vb
        if mode == EXACT:
            pair = {"a": a, "b": b, "difference": d, "ci": None if d is None else [d, d],
                    "ci_simultaneous": None if d is None else [d, d]}
        elif mode in SAMPLED:
            got = _joint_pair(joint or {}, a, b) or {}
            pair = {"a": a, "b": b, "difference": got.get("difference", d), "ci": got.get("ci"),
                    "ci_simultaneous": got.get("ci_simultaneous") or got.get("ci")}
        else:
            pair = {"a": a, "b": b, "difference": d, "ci": None, "ci_simultaneous": None}
        pairs.append(pair)
        sim[(a, b)] = pair["ci_simultaneous"]
    ranks_judge = competition_ranks({s: judge[s][key] for s in names}, higher_is_better=higher)
    ranks_audited = competition_ranks(values, higher_is_better=higher)
    sets = (rank_sets(names, {k: None if v is None else (v[0], v[1]) for k, v in sim.items()}, higher_is_better=higher)
            if mode != NONE else None)
    one_run = board["systems"] is not None
    note = (f"no {'sampling' if one_run else 'board'} plan and not every decision reviewed" if mode == NONE else "")
    board_words = Board(
        names, {s: _estimate(values[s], None, note) for s in names},
        [PairDifference(p["a"], p["b"], _estimate(p["difference"], p["ci"], note),
                        _estimate(p["difference"], p["ci_simultaneous"], note)) for p in pairs],
        ranks_judge or dict.fromkeys(names, 0), ranks_audited,
        sets, higher, LEVEL)
    words = settled(board_words)
    missing = [s for s in names if values[s] is None]
    if mode in SAMPLED and missing:  # say why, so the page can tell the reviewer what the sample still needs
        why = next((n for s in missing if (n := ((estimate[s] or {}).get(key) or {}).get("note"))), "")
        why = f" ({why})" if why else ""
        if sets is None:
            words = [f"no estimate yet for {', '.join(missing)}, so nothing can be said about the ranking{why}"]
        else:  # the paired differences still order the board: say what they settle, in their rank sets' order
            words = [f"no estimate yet for {', '.join(missing)}{why}, so no ranks; the paired differences say:",
                     *settled(replace(board_words, rank_audited={s: sets[s][0] for s in names}))]
    systems = [{"run": s.run, "system": s.name, "judge_only": judge[s.name], "audited": audited[s.name],
                "estimate": estimate[s.name], "bias": bias[s.name], "rank_judge": (ranks_judge or {}).get(s.name),
                "rank_audited": (ranks_audited or {}).get(s.name),
                "rank_set": list(sets[s.name]) if sets is not None else None} for s in rows]
    return {"board": board["name"], "family": board["family"], "runs": board["runs"], "metric": key,
            "metrics": [{"key": metric_key(c), "label": c.label, "higher_is_better": c.higher_is_better,
                         "unit": c.unit} for c in cells],
            "systems": systems, "shared_questions": shared_questions(db, views), "pairs": pairs, "policy": policy,
            "settled": words, "reviewed": reviewed, "interval": mode,
            "interval_explained": NONE_ONE_RUN if mode == NONE and one_run else INTERVAL_WORDS[mode],
            "pairs_explained": PAIRS_PAIRED if mode in SAMPLED else None,
            "judges_differ": judges_differ([v.row for v in views]),
            "level": LEVEL, "more_documents": (joint or {}).get("more_documents"),
            "waiting_note": (joint or {}).get("waiting_note", "")}
