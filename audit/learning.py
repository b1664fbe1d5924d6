"""Whether a run's judge learnt from reviews that have since been withdrawn or changed (issue #37: "withdrawing a
review it learnt from marks it stale (shown, never silently used)"). One rule, read by every surface that shows a
run's judge: the Runs page and `runs`, the Scores and Improve the judge pages, the JSON/CSV/LaTeX exports and the
report's header (through `export_json`'s `judge_learning` and its warnings).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from audit.effective import DEFAULT_POLICY, current_rows, effective_label
from audit.errors import UnknownRun
from audit.numbers import count_noun
from audit.store.database import query_in, run_row, runs_of_decisions

if TYPE_CHECKING:
    from sqlite_utils import Database


NOT_IMPROVED = "improve-judge showed no improvement for this judge and advised keeping the run's judge"
"""Said wherever a judge scored from such a result is shown (and by `score` when it takes one)."""


def learning_status(db: Database, identity: dict) -> dict | None:
    """For a run whose judge was improved on reviews (`learnt_from` in its judge identity): how many of those
    reviews still hold (the reviewer's current label on that question is the one the judge learnt), which were
    withdrawn or changed since (`stale` when any), and a sentence saying so. None for any other judge.

    The reviews are found by uid (`review_uids`, which export-reviews / import-reviews keep, so a judge moved to
    another database with its reviews checks there), by database id for a result from before uids were kept. A
    review given again with the same label leaves the judge current: it learnt that label, and it still holds."""
    learnt = identity.get("learnt_from")
    if not isinstance(learnt, dict):
        return None
    from audit.rescoring import reviews_by_decision  # (re-scoring code: not for a list of runs without one, #38)

    keys, rows = _learnt_reviews(db, learnt)
    try:
        source = run_row(db, learnt.get("run", ""))
    except UnknownRun:
        return {"run": learnt.get("run"), "learnt_from": len(keys), "withdrawn": sorted(keys), "stale": True,
                "text": f"this judge learnt from {count_noun(len(keys), 'review')} of run {learnt.get('run')!r}, "
                        "which is no longer in this database: it cannot be checked"}
    decision_runs = runs_of_decisions(db, sorted({r["decision_id"] for r in rows.values()}))
    current: dict[tuple[int, str, str], str | None] = {}
    now: dict[int, list[dict]] = {}
    for run_id in sorted(set(decision_runs.values())):
        mine = [d for d, r in decision_runs.items() if r == run_id]
        for dec, revs in reviews_by_decision(db, run_id, mine).items():
            now[dec] = revs
            for r in current_rows(revs):
                current[(dec, r["role"], r["reviewer"])] = r["label"]
    withdrawn = sorted(k for k in keys if k not in rows or current.get(
        (rows[k]["decision_id"], rows[k]["role"], rows[k]["reviewer"]), object()) != rows[k]["label"])
    moved = _moved_decisions(db, learnt, rows, set(withdrawn), now)
    text = (f"this judge learnt from {count_noun(len(keys), 'review')} of run {source['name']!r} (seed "
            f"{learnt.get('seed')}, {learnt.get('folds')} folds)")
    if learnt.get("improved") is False:
        text += f"; {NOT_IMPROVED}"
    if withdrawn:
        text += (f"; {len(withdrawn)} of them {'was' if len(withdrawn) == 1 else 'were'} withdrawn or changed since: "
                 "it is stale, improve it again")
    if moved:
        text += (f"; {count_noun(len(moved), 'decision')} it learnt {'has' if len(moved) == 1 else 'have'} another "
                 "human label now (adjudicated the other way, or conflicted): "
                 + ("it is stale, improve it again" if not withdrawn else "improve it again"))
    return {"run": source["name"], "learnt_from": len(keys), "withdrawn": withdrawn, "changed_decisions": moved,
            "stale": bool(withdrawn or moved), "not_improved": learnt.get("improved") is False, "text": text}


def _moved_decisions(db: Database, learnt: dict, rows: dict, withdrawn: set, now: dict[int, list[dict]]) -> list[int]:
    """The decisions of the learnt reviews whose effective human label (the audit's, under the learnt policy, over
    every current review) is no longer the one the learnt reviews gave, though each of their learnt reviews still
    holds (a withdrawn one is said as such): adjudicated the other way, or made conflicted by another label. A label
    given again, blind or sighted, moves nothing. The decisions are those the reviews were found on, in this
    database (a judge moved with its reviews is checked where it is)."""
    policy = learnt.get("effective_label_policy") or DEFAULT_POLICY
    learnt_by_decision: dict[int, list[tuple[object, dict]]] = {}
    for k, r in rows.items():
        learnt_by_decision.setdefault(r["decision_id"], []).append((k, r))
    held = [d for d, mine in learnt_by_decision.items() if not any(k in withdrawn for k, _ in mine)]
    judge = {r["id"]: r["judge_label"]
             for r in query_in(db, "SELECT id, judge_label FROM decisions WHERE id IN ({marks})", held)}
    out = []
    for d in held:
        then = effective_label(judge[d], [r for _, r in learnt_by_decision[d]], policy)
        after = effective_label(judge[d], now.get(d, []), policy)
        if then.settled_by_humans and (after.label != then.label or not after.settled_by_humans):
            out.append(d)
    return sorted(out)


def learnt_decisions(db: Database, learnt: dict) -> list[int]:
    """The decisions, in this database, of the reviews a judge learnt from (`learnt_from`; found as
    `learning_status` finds them, so a judge moved with its reviews is read where it is)."""
    return sorted({r["decision_id"] for r in _learnt_reviews(db, learnt)[1].values()})


def _learnt_reviews(db: Database, learnt: dict) -> tuple[list, dict]:
    """(the keys `learnt_from` names its reviews by, the stored review rows by key): by uid (`review_uids`, which
    export-reviews / import-reviews keep), by database id for a result from before uids were kept."""
    by_uid = learnt.get("review_uids") is not None
    keys = list(learnt.get("review_uids") if by_uid else learnt.get("review_ids") or [])
    return keys, _reviews(db, "uid" if by_uid else "id", keys)


def _reviews(db: Database, column: str, keys: list) -> dict:
    """Review rows by `column` (uid or id) for the given keys."""
    return {r[column]: r for r in query_in(
        db, f"SELECT id, uid, decision_id, reviewer, role, label FROM reviews WHERE {column} IN ({{marks}})", keys)}


def learning_warning(status: dict | None) -> str | None:
    """The one-line warning every surface shows for an improved judge that is stale, or that improve-judge showed no
    improvement for, or None."""
    if not status or not (status["stale"] or status.get("not_improved")):
        return None
    return f"{'stale judge' if status['stale'] else 'improved judge'}: {status['text']}"


def learning_by_run(db: Database) -> dict[str, dict]:
    """`learning_status` of every run whose judge learnt from reviews, by run name (one query for the list)."""
    out = {}
    for r in db.query("SELECT name, judge_identity FROM runs WHERE judge_identity LIKE '%\"learnt_from\"%'"):
        status = learning_status(db, json.loads(r["judge_identity"]))
        if status is not None:
            out[r["name"]] = status
    return out
