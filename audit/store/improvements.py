"""Stored `improve-judge` results (`judge_improvements`, migration m017): every fit is kept with its folds, so the
page and the CLI show the same folds and the last result reads back without refitting (an LLM strategy needs its
server to fit, not to be shown)."""

from __future__ import annotations

import json

from sqlite_utils import Database

from audit.store.database import dumps, now, transaction


def save_improvement(db: Database, run_id: int, result: dict) -> int:
    """Store one result (its folds apart, for queries); its id."""
    with transaction(db):
        cur = db.execute("INSERT INTO judge_improvements (run_id, strategy, seed, folds, result, created) "
                         "VALUES (?, ?, ?, ?, ?, ?)",
                         [run_id, result["strategy"], result["judge_after"]["learnt_from"]["seed"],
                          dumps(result["folds"]), dumps(result), now()])
    return int(cur.lastrowid)  # type: ignore[arg-type]


def stored_improvements(db: Database, run_id: int, strategy: str | None = None) -> list[dict]:
    """The run's stored results, newest first: {id, strategy, seed, folds, created, result}; each result carries its
    `stored_as` (the id), as `improve_judge` returned it (it was stored before the id existed)."""
    where, args = "run_id = ?", [run_id]
    if strategy is not None:
        where, args = where + " AND strategy = ?", [*args, strategy]
    return [{"id": r["id"], "strategy": r["strategy"], "seed": r["seed"], "folds": json.loads(r["folds"]),
             "created": r["created"], "result": json.loads(r["result"]) | {"stored_as": r["id"]}}
            for r in db.query(f"SELECT * FROM judge_improvements WHERE {where} ORDER BY id DESC", args)]
