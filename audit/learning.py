"""Whether a run's judge learnt from reviews that have since been withdrawn or changed (issue #37: "withdrawing a
review it learnt from marks it stale (shown, never silently used)"). One rule, read by every surface that shows a
run's judge: the Runs page and `runs`, the Scores and Improve the judge pages, the JSON/CSV/LaTeX exports and the
report's header (through `export_json`'s `judge_learning` and its warnings).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from audit.effective import current_rows
from audit.errors import UnknownRun
from audit.store.database import run_row

if TYPE_CHECKING:
    from sqlite_utils import Database


def learning_status(db: Database, identity: dict) -> dict | None:
    """For a run whose judge was improved on reviews (`learnt_from` in its judge identity): how many of those
    reviews are still current in the run they came from, which were withdrawn or changed since (`stale` when any),
    and a sentence saying so. None for any other judge."""
    learnt = identity.get("learnt_from")
    if not isinstance(learnt, dict):
        return None
    from audit.rescoring import reviews_by_decision  # (re-scoring code: not for a list of runs without one, #38)

    ids = set(learnt.get("review_ids") or [])
    try:
        source = run_row(db, learnt.get("run", ""))
    except UnknownRun:
        return {"run": learnt.get("run"), "learnt_from": len(ids), "withdrawn": sorted(ids), "stale": True,
                "text": f"this judge learnt from {len(ids)} reviews of run {learnt.get('run')!r}, which is no longer "
                        "in this database: it cannot be checked"}
    current = {r["id"] for revs in reviews_by_decision(db, source["id"], list(learnt.get("decisions") or [])).values()
               for r in current_rows(revs)}
    withdrawn = sorted(ids - current)
    text = (f"this judge learnt from {len(ids)} reviews of run {source['name']!r} (seed {learnt.get('seed')}, "
            f"{learnt.get('folds')} folds)")
    if withdrawn:
        text += f"; {len(withdrawn)} of them were withdrawn or changed since: it is stale, improve it again"
    return {"run": source["name"], "learnt_from": len(ids), "withdrawn": withdrawn, "stale": bool(withdrawn),
            "text": text}


def stale_warning(status: dict | None) -> str | None:
    """The one-line warning every surface shows for a stale improved judge, or None."""
    if not status or not status["stale"]:
        return None
    return f"stale judge: {status['text']}"


def learning_by_run(db: Database) -> dict[str, dict]:
    """`learning_status` of every run whose judge learnt from reviews, by run name (one query for the list)."""
    out = {}
    for r in db.query("SELECT name, judge_identity FROM runs WHERE judge_identity LIKE '%\"learnt_from\"%'"):
        status = learning_status(db, json.loads(r["judge_identity"]))
        if status is not None:
            out[r["name"]] = status
    return out
