"""Scoring a run: load inputs, ask the judge (through the cache), store everything in one transaction."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path

from sqlite_utils import Database

from audit.errors import RunExists
from audit.store import SqliteAnswerCache, dumps, now, run_row, transaction
from scoring.decisions import Decision
from scoring.families import get_task
from scoring.families.base import TaskFamily, sum_nested
from scoring.judges.base import Judge, JudgeStats

Progress = Callable[[int, int], None]


def _file_info(path: str, label: str | None = None) -> dict:
    p = Path(path)
    return {"path": str(path), "name": label or p.name, "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
            "bytes": p.stat().st_size}


def default_run_name(db: Database, task: str, pred_name: str, judge_spec: str) -> str:
    judge = judge_spec.split(":", 1)[0]
    base = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{task}-{Path(pred_name).stem}-{judge}").strip("-")
    taken = {r["name"] for r in db.query("SELECT name FROM runs WHERE name LIKE ?", [base + "%"])}
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


def score_run(db: Database, task_name: str, gold: str, pred: str, judge_spec: str, *, run: str | None = None,
              text: str | None = None, progress: Progress | None = None,
              input_names: dict[str, str] | None = None, stats: JudgeStats | None = None,
              judge_log: str | Path | None = None, judge: Judge | None = None) -> dict:
    """Score predictions against gold with a judge and store the run with every decision.

    Nothing is stored when loading fails; judge answers already received stay in the cache.

    Args:
        stats: updated live while the judge is asked (for progress displays).
        judge_log: where to write the run's judge log (replay format), so it can be re-scored offline.
        judge: a judge built by the caller (e.g. with an endpoint and key typed in the dashboard); `judge_spec`
            is then only recorded.

    Returns:
        The run's row: name, metrics (original), summary (judge counts, warnings).
    Raises:
        InputError, JudgeSpecError: bad input (file and line named).
        RunExists: `run` is taken.
    """
    task = get_task(task_name)
    names = input_names or {}
    if run and list(db.query("SELECT 1 FROM runs WHERE name = ?", [run])):
        raise RunExists(f"run {run!r} already exists in this database; pick another name with --run")
    loaded = task.load(gold, pred, text)
    judge = judge or task.make_judge(judge_spec)
    cache = SqliteAnswerCache(db, judge.spec, judge.identity())
    decisions, stats = task.decide(loaded, judge, cache, progress, stats)
    inputs = {"gold": _file_info(gold, names.get("gold")), "pred": _file_info(pred, names.get("pred"))}
    if text:
        inputs["text"] = _file_info(text, names.get("text"))
    name = run or default_run_name(db, task.name, inputs["pred"]["name"], judge.spec)
    warnings = list(loaded.warnings)
    if stats.missing:
        warnings.append(f"{stats.missing} judge answer(s) were not available (pairs missing from the judge log, or "
                        "requests that failed); those decisions are labelled 'invalid', count as no match as in the "
                        "paper, and are in the review queue 'invalid'")
    if stats.invalid:
        warnings.append(f"{stats.invalid} judge answer(s) could not be read; those decisions are labelled "
                        "'invalid' unless the other span order said no")
    summary = {"judge": stats.as_dict(), "warnings": warnings, "notes": loaded.notes[:50],
               "n_notes": len(loaded.notes), **loaded.extra}
    if judge_log:
        lines = task.judge_log(decisions)
        Path(judge_log).parent.mkdir(parents=True, exist_ok=True)
        Path(judge_log).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), encoding="utf-8")
        summary["judge_log"] = {"path": str(judge_log), "lines": len(lines)}
    _store(db, task, name, judge, loaded, decisions, inputs, summary)
    return run_row(db, name)


def _store(db: Database, task: TaskFamily, name: str, judge: object, loaded: object, decisions: list[Decision],
           inputs: dict, summary: dict) -> None:
    by_doc: dict[str, dict] = {}
    for d in decisions:
        by_doc.setdefault(d.doc, {})[(d.kind, d.type, d.left, d.right)] = d.judge
    doc_rows = []
    all_counts = []
    for idx, doc in enumerate(loaded.docs):  # type: ignore[attr-defined]
        doc_id = task.doc_id(doc)
        payload = task.payload(doc)
        counts = task.counts(payload, by_doc.get(doc_id, {}))
        all_counts.append(counts)
        doc_rows.append((doc_id, idx, dumps(payload), dumps(counts), task.outcome(payload, counts)))
    total = sum_nested(all_counts)
    metrics = task.metrics(total)
    with transaction(db):
        if list(db.query("SELECT 1 FROM runs WHERE name = ?", [name])):
            raise RunExists(f"run {name!r} already exists in this database; pick another name with --run")
        cur = db.conn.execute(
            "INSERT INTO runs (name, task, judge_spec, judge_identity, created, inputs, summary, original_metrics, "
            "original_counts, n_docs, n_decisions) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (name, task.name, judge.spec, dumps(judge.identity()), now(), dumps(inputs), dumps(summary),  # type: ignore[attr-defined]
             dumps(metrics), dumps(total), len(doc_rows), len(decisions)))
        run_id = cur.lastrowid
        db.conn.executemany(
            "INSERT INTO documents (run_id, doc_id, idx, payload, counts, outcome) VALUES (?, ?, ?, ?, ?, ?)",
            [(run_id, *r) for r in doc_rows])
        db.conn.executemany(
            "INSERT INTO decisions (run_id, doc_id, kind, type, left, right, judge_label, detail) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(run_id, d.doc, d.kind, d.type, d.left, d.right, d.judge, dumps(d.detail)) for d in decisions])
