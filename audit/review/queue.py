"""Review queues: which decision to look at next, how far each reviewer has got, and what one review changed.

The queue page asks for decision ids once (`queue_ids`, a few SQL queries even at 10,000 documents) and then
reads one decision at a time (`decision_view`), so a key press re-reads one decision, not the run. Which
decisions are conflicted follows the run view's effective-label policy (`audit.views.RunView`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence

from sqlite_utils import Database

from audit.effective import labels_by
from audit.errors import AuditError
from audit.numbers import format_delta
from audit.rescoring import document_drawn
from audit.review.sampling import load_plan
from audit.views import RunRef, RunView, as_view, judge_side_totals, kept_per_run, reviewer_tallies
from scoring.families.base import Certainty, TaskFamily, certainty

QUEUES = {
    "unreviewed": "not labelled by you yet",
    "conflicted": "reviewers disagree",
    "invalid": "judge answer unreadable",
    "disagree": "human ≠ judge",
    "all": "every decision",
    "sample": "the run's sampling plan, in its order (partial audit)",
}
REL_TOL, ABS_TOL = 1e-9, 1e-12
"""Tolerance of the change strip: a metric cell counts as changed beyond it."""
BLIND_QUEUES = ("unreviewed", "all", "sample")
"""Queues that reveal nothing of the judge's or other reviewers' labels (offered in blind review)."""


SAMPLE_TAKES_NO_FILTER = ("The sample queue takes no filter: it serves the sampling plan's documents whole, in the "
                          "plan's random order, so that its reviews are a random draw (a filtered one would be "
                          "hand-picked). Use another queue to filter.")


def queue_ids(db: Database, run: RunRef, reviewer: str, mode: str, *, types: Iterable[str] = (),
              judge_labels: Iterable[str] = (), doc: str = "", skip_trivial: bool = False,
              blind: bool = False, share: Collection[int] = (), adjudicator: bool = False,
              suggested: Iterable[int] = ()) -> list[int]:
    """Ids of the decisions in queue `mode` for `reviewer` (the same set as `queue` over `audit.views.decisions`,
    read with a few queries instead of building every decision): in id order, except that certain decisions the
    judge contradicted (`scoring.families.base.certainty`, e.g. two identical strings it called no match) come first,
    as the judge's plainest errors; the sample queue keeps its plan's order. `skip_trivial` leaves out the certain
    decisions the judge answered as certain (and only those). A `blind` queue does neither, in id order: which
    decisions come first or are left out would tell a blind reviewer the judge's answers. `share`: the reviewer's
    assigned decisions, which the sample queue serves even once settled by a co-reviewer. An `adjudicator`'s sample
    queue serves the sample's conflicted decisions first (a drawn document waits for them: it is no draw until
    settled: `_drawn_conflicts`), their own earlier label on them notwithstanding; then come the `suggested` ones
    (the sample's next document, `next_sample`), then the rest in the plan's order."""
    if mode not in QUEUES:
        raise ValueError(f"unknown queue {mode!r}; use one of {', '.join(QUEUES)}")
    if mode == "sample" and (list(types) or list(judge_labels) or doc):
        raise AuditError(SAMPLE_TAKES_NO_FILTER)
    view = as_view(db, run)
    ids = _queue_ids(view, reviewer, mode, types=types, judge_labels=judge_labels, doc=doc, share=share,
                     adjudicator=adjudicator, suggested=suggested)
    if mode == "sample":  # the plan's order, led by what the sample waits for (`_sample_ids`)
        return ids
    if blind or not view.task.certain_decisions:
        return ids
    state = certain_decisions(view)
    ids = [i for i in ids if not (skip_trivial and state.get(i) == "agreed")]
    return [i for i in ids if state.get(i) == "contradicted"] + [i for i in ids if state.get(i) != "contradicted"]


def certain_decisions(run: RunView) -> dict[int, Certainty]:
    """The run's certain decisions by id, each `agreed` or `contradicted` (`scoring.families.base.certainty`): of
    the judge's labels alone, so kept per run and process (`audit.views.kept_per_run`; read-only): the queue page
    read every decision for it on each render (1.8 s at 100,000 abstracts, #38)."""
    def read() -> dict[int, Certainty]:
        out = {}
        for i, kind, typ, left, right, judge in run.db.execute(
                "SELECT id, kind, type, left, right, judge_label FROM decisions WHERE run_id = ?", [run.id]):
            state = certainty(run.task, {"kind": kind, "type": typ, "left": left, "right": right, "judge": judge})
            if state is not None:
                out[i] = state
        return out
    return kept_per_run(run.db, run.row, "certain decisions", read)


def _queue_ids(view: RunView, reviewer: str, mode: str, *, types: Iterable[str], judge_labels: Iterable[str],
               doc: str, share: Collection[int] = (), adjudicator: bool = False,
               suggested: Iterable[int] = ()) -> list[int]:
    db, run_id = view.db, view.id
    q = "SELECT id, doc_id, type, judge_label FROM decisions WHERE run_id = ?"
    args: list = [run_id]
    types, judge_labels = sorted(set(types)), sorted(set(judge_labels))
    if types:
        q += f" AND type IN ({','.join('?' * len(types))})"
        args += types
    if judge_labels:
        q += f" AND judge_label IN ({','.join('?' * len(judge_labels))})"
        args += judge_labels
    if doc:
        q += " AND instr(doc_id, ?) > 0"
        args.append(doc)
    rows = db.execute(q + " ORDER BY id", args).fetchall()
    if mode == "sample":
        return _sample_ids(view, reviewer, {r[0] for r in rows}, share, adjudicator=adjudicator, suggested=suggested)
    if mode == "all":
        return [r[0] for r in rows]
    if mode == "invalid":
        return [r[0] for r in rows if r[3] == "invalid"]
    effective = view.effective
    if mode == "unreviewed":
        return [r[0] for r in rows if r[0] not in effective or reviewer not in effective[r[0]].labels_by()]
    out = []
    for dec_id, _, _, judge in rows:
        e = effective.get(dec_id)
        if e is None:
            continue
        if mode == "disagree" and any(lab != judge for lab in e.human_labels.values()):
            out.append(dec_id)
        elif mode == "conflicted" and e.conflicted:
            out.append(dec_id)
    return out


def suggested_first(ids: list[int], suggested: Iterable[int]) -> list[int]:
    """The queue's ids with the suggested decisions (the sample queue's next document) first, in queue order."""
    first = set(suggested)
    return [i for i in ids if i in first] + [i for i in ids if i not in first]


def decision_types(db: Database, run: RunRef) -> list[str]:
    """The decision types of a run (for the queue's type filter)."""
    view = as_view(db, run)  # from the per-kind totals kept per process (a scan of 683k decisions took 1.7 s, #38)
    return sorted({typ for _, typ, _, _ in judge_side_totals(view.db, view.row)})


def decision_view(db: Database, run: RunRef, decision_id: int) -> dict:
    """One decision as `audit.views.decisions` yields it (judge and effective label, humans, reviews, detail), read
    now through `db` (a key press re-reads one decision)."""
    return as_view(db, run).decision(decision_id)


def progress_text(done: int, total: int, in_queue: int) -> str:
    """The reviewer's progress line, worded once for both review cards (the classic one and the one in the browser)."""
    return f"You have labelled {done:,} of {total:,} decisions · {in_queue:,} in this queue"


def labelled_count(db: Database, run: RunRef, reviewer: str) -> int:
    """Decisions that carry `reviewer`'s current label, an adjudication of theirs included (`Effective.labels_by`),
    from the tallies kept with the run's reviewed decisions (`audit.views.reviewer_tallies`: the reviewer's reviews
    read through `run_reviews` took 1.7 s of each queue render at a million reviews, #38)."""
    return reviewer_tallies(as_view(db, run))[0][reviewer]


def reviewer_progress(decs: Iterable[dict], *, with_judge: bool = True) -> list[dict]:
    """Per reviewer: decisions currently labelled, how many agree with the judge (unless `with_judge` is False:
    blind review), and reviews written."""
    labelled: Counter[str] = Counter()
    agree: Counter[str] = Counter()
    rows: Counter[str] = Counter()
    total = 0
    for d in decs:
        total += 1
        adjudicator = d.get("adjudicator")
        for who, lab in labels_by(d["human"], adjudicator, d["effective"] if adjudicator else "").items():
            labelled[who] += 1
            agree[who] += lab == d["judge"]
        for r in d["reviews"]:
            rows[r["reviewer"]] += 1
    return _progress_rows(labelled, agree, rows, total, with_judge)


def _progress_rows(labelled: Counter, agree: Counter, rows: Counter, total: int, with_judge: bool) -> list[dict]:
    return [{"reviewer": who, "labelled": labelled[who], "of": total,
             **({"agree with judge": agree[who]} if with_judge else {}), "review rows": rows[who]}
            for who in sorted(rows)]


def reviewer_progress_db(db: Database, run: RunRef, *, with_judge: bool = True) -> list[dict]:
    """`reviewer_progress` over the run view's reviewed decisions (the review queue's table at any run size), from
    the tallies kept with them (`audit.views.reviewer_tallies`), of the run's decisions."""
    view = as_view(db, run)
    return _progress_rows(*reviewer_tallies(view), view.row["n_decisions"], with_judge)


def _is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def changed(before: float, after: float, *, rel_tol: float = REL_TOL, abs_tol: float = ABS_TOL) -> bool:
    """True when a metric cell moved by more than the tolerance (floating-point noise of a re-score is not a
    change; a mean 3.0204 → 3.0000 is)."""
    return not math.isclose(before, after, rel_tol=rel_tol, abs_tol=abs_tol)


def _pair(before: float, after: float) -> str:
    """`70→71` for whole numbers (LitXBench stores counts as floats), else as many decimals as tell them apart."""
    if float(before).is_integer() and float(after).is_integer():
        return f"{int(before)}→{int(after)}"
    for digits in range(4, 10):
        a, b = f"{before:.{digits}f}", f"{after:.{digits}f}"
        if a != b:
            return f"{a}→{b}"
    return f"{before!r}→{after!r}"


def metric_changes(task: TaskFamily, before: Mapping, after: Mapping) -> list[str]:
    """Every numeric cell of the family's metric rows that changed beyond the tolerance, as `where column a→b`:
    counts first (columns whose values are all whole numbers), then scores, then interval bounds; macro-average
    rows are left to the headline cells."""
    rows = [(o, a) for o, a in zip(task.metric_rows(before), task.metric_rows(after), strict=False)
            if o.get("type") not in ("macro average", "avg")]
    fractional = {k for o, _ in rows for k, v in o.items() if _is_number(v) and not float(v).is_integer()}
    counts, scores, bounds = [], [], []
    for o, a in rows:
        where = " ".join(str(x) for x in (o.get("section"), o.get("type")) if x)
        for k, v in o.items():
            w = a.get(k)
            if not (_is_number(v) and _is_number(w) and changed(v, w)):
                continue
            group = (bounds if "ci_" in k or k.endswith(("_low", "_high")) else
                     scores if k in fractional or not float(w).is_integer() else counts)
            group.append(f"{where} {k} {_pair(v, w)}")
    return counts + scores + bounds


def describe_change(task: TaskFamily, decision_id: int, label: str | None, before: Mapping, after: Mapping,
                    *, max_parts: int = 4, number: int | None = None) -> str:
    """What one review stored and what it changed, in one line, e.g.
    `#7 → no match · entities comb-element tp 70→71 · entity F1 (macro avg) +0.0011`.

    `label` is the label title stored (None: the reviewer's label was withdrawn); `before`/`after` are the audited
    metrics around the write. Every numeric cell of the family's metric rows is compared (`metric_changes`, at most
    `max_parts` listed, then how many more), then its headline cells' differences; "no score changed" only when
    no cell moved beyond the tolerance. `number` is the decision's number in its run, which the pages show (the
    CLI shows the id it takes).
    """
    parts = [f"#{number if number is not None else decision_id} → {label if label is not None else 'label withdrawn'}"]
    cells = metric_changes(task, before, after)
    scores = []
    for cell in task.headline:
        o, a = cell.value(before), cell.value(after)
        if o is not None and a is not None and _is_number(o) and _is_number(a) and changed(o, a):
            scores.append(f"{cell.label} {format_delta(a - o, cell.unit)}")
    listed = cells[:max_parts] + ([f"… {len(cells) - max_parts} more"] if len(cells) > max_parts else [])
    parts += listed + scores
    if len(parts) == 1:
        parts.append("no score changed")
    return " · ".join(parts)


def change_strip(view: RunView, decision_id: int, title: str | None, before: Mapping, verb: str, *,
                 blind: bool) -> str:
    """The strip both cards show after a label or an undo: `verb #n → label` and what it changed in the scores
    (`describe_change`), or only the label while the reviewer reviews blind (what a label changed would tell them
    what the judge and the others had said)."""
    number = view.decision_numbers([decision_id])[decision_id]
    if blind:
        return f"{verb} #{number} → {title or 'no label of yours'}"
    return f"{verb} " + describe_change(view.task, decision_id, title, before, view.audit.metrics, number=number)


def _drawn_conflicts(view: RunView, ids: Iterable[int]) -> list[int]:
    """Of `ids`, the conflicted decisions of documents the sample queue drew: their draw waits for an adjudicator (a
    conflict in a document reviewed by hand is no draw, and the sample queue would refuse its label as one)."""
    conflicted = [i for i in ids if (e := view.effective.get(i)) is not None and e.conflicted]
    docs = {view.reviewed.rows[i]["doc_id"] for i in conflicted}
    drawn = {doc for doc in docs if document_drawn(view.db, view.id, doc)}
    return [i for i in conflicted if view.reviewed.rows[i]["doc_id"] in drawn]


def _sample_ids(view: RunView, reviewer: str, allowed: set[int], keep: Collection[int] = (), *,
                adjudicator: bool = False, suggested: Iterable[int] = ()) -> list[int]:
    """The plan's blocks in the order it serves them (take-all strata first, then the seeded random rank), each
    block's decisions the reviewer has not labelled yet, leaving out the blocks humans have settled whole (drawn
    and settled, or reviewed by hand: the sample needs nothing more of them; a new reviewer's card went through
    every drawn document again after the suggested one) unless they hold a decision of `keep` (an assigned
    share: its double-coded documents are settled by the first label); [] without a plan. An `adjudicator` is
    served the drawn documents' conflicted decisions also where they labelled them, first; then come the
    `suggested` ones."""

    plan = load_plan(view.db, view)
    if plan is None:
        return []
    effective = view.effective
    mine = {i for i, e in effective.items() if reviewer in e.labels_by()}
    kept = set(keep)

    def open_block(units: Sequence[str]) -> bool:
        return any((e := effective.get(int(u))) is None or not e.settled_by_humans or int(u) in kept for u in units)
    waiting = set(_drawn_conflicts(view, allowed)) if adjudicator else set()

    def wanted(i: int) -> bool:  # an adjudicator's waiting conflicts whatever they labelled
        return i in allowed and (i not in mine or i in waiting)
    ids = [int(u) for b in plan.serving_order() if open_block(b.units) for u in b.units if wanted(int(u))]
    return suggested_first(suggested_first(ids, suggested), waiting)
