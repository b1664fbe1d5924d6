"""Scoring a run: plan (validate the name, load the inputs, build the judge), then ask the judge (through the cache)
and store everything in one transaction. The CLI and the dashboard's new-run form both go through here.

A run's judge log is not a file beside the database: it is derived from the stored decisions
(`export --format judgelog`), so two databases in one folder or two racing runs of the same name cannot
overwrite each other's log. `--judge-log PATH` (CLI) writes a copy where the user asks.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from sqlite_utils import Database

from audit.errors import AuditError, RunExists
from audit.numbers import count_noun
from audit.output_paths import OutputRule, Staged, stage_output
from audit.rescoring import no_review_counts, rebuild_audit_state
from audit.store.counts_index import write_counts_index
from audit.store.database import SqliteAnswerCache, dumps, now, run_row, runs_of_decisions, transaction
from audit.store.plans import drop_run_from_boards
from audit.store.shared_reviews import SETTLES_SHARED, SHARED_FROM
from scoring.decisions import Decision
from scoring.errors import InputError, JudgeFailed
from scoring.families import get_task
from scoring.families.base import Loaded, TaskFamily, decision_qkeys, sum_nested
from scoring.jsonl import check_folder
from scoring.judges.answer import JudgeStats
from scoring.judges.registry import JudgeOptions
from scoring.judges.transport import Judge

Progress = Callable[[int, int], None]
MAX_RUN_NAME = 120


def check_run_name(name: str) -> str:
    """A run name is data, never a path: 1..120 printable characters, no path separators, not only spaces.

    Raises:
        AuditError: saying what is wrong.
    """
    if not isinstance(name, str) or not name.strip():
        raise AuditError("a run name must not be empty or only spaces")
    if len(name) > MAX_RUN_NAME:
        raise AuditError(f"run name is {len(name)} characters long; the limit is {MAX_RUN_NAME}")
    bad = [c for c in name if unicodedata.category(c)[0] == "C"]
    if bad:
        what = "a control or invisible character" if len(bad) == 1 else "control or invisible characters"
        raise AuditError(f"run name contains {what} "
                         f"{', '.join(repr(c) for c in bad[:3])}")
    if "/" in name or "\\" in name or name in (".", ".."):
        raise AuditError(f"run name {name!r} looks like a path; use letters, digits, spaces, '-', '_' or '.'")
    if name != name.strip():
        raise AuditError("a run name must not start or end with spaces")
    return name


def _file_digest(p: Path) -> bytes:
    with p.open("rb") as f:
        return hashlib.file_digest(f, "sha256").digest()


def hash_input(path: str) -> dict:
    """SHA-256 of a file (read in chunks), or of a folder's relative names and file digests.

    A folder is walked without following links (`scoring.jsonl.check_folder` refuses links that leave it first):
    a link to a file inside it is hashed by its content, a linked sub-folder is hashed where it really is.
    """
    p = Path(path)
    if p.is_dir():
        check_folder(p)
        h = hashlib.sha256()
        files = sorted(Path(here, name) for here, _, names in os.walk(p, followlinks=False) for name in names)
        files = [f for f in files if f.is_file()]
        for f in files:
            h.update(str(f.relative_to(p)).encode() + b"\0" + _file_digest(f))
        return {"sha256": h.hexdigest(), "files": len(files), "bytes": sum(f.stat().st_size for f in files)}
    return {"sha256": _file_digest(p).hex(), "bytes": p.stat().st_size}


def _file_info(path: str, label: str | None = None) -> dict:
    """What the run records of an input: its name (never the local path: exports go into papers) and hash."""
    return {"name": label or Path(path).name, **hash_input(path)}


def default_run_name(db: Database, task: str, pred_name: str, judge_spec: str) -> str:
    judge = judge_spec.split(":", 1)[0]
    base = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{task}-{Path(pred_name).stem}-{judge}").strip("-.")[:MAX_RUN_NAME - 8]
    taken = {r["name"] for r in db.query("SELECT name FROM runs WHERE name LIKE ?", [base + "%"])}
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


@dataclass
class RunPlan:
    """A run ready to score: inputs loaded and checked, judge built, name chosen."""

    task: TaskFamily
    name: str
    inputs: dict[str, str]
    input_names: dict[str, str]
    loaded: Loaded
    judge: Judge
    options: dict[str, str] = field(default_factory=dict)


def _main_input(task: TaskFamily, inputs: Mapping[str, str]) -> str:
    for spec in reversed(task.inputs):  # the predictions are the last required input of every family
        if spec.required and inputs.get(spec.name):
            return inputs[spec.name]
    return task.name


def plan_run(db: Database, task_name: str, inputs: Mapping[str, str], judge_spec: str, *, run: str | None = None,
             input_names: Mapping[str, str] | None = None, judge_options: JudgeOptions | None = None,
             options: Mapping[str, str] | None = None, allow_empty: bool = False) -> RunPlan:
    """Check the name, load and validate every input, build the judge through its family (`make_judge`, with the
    user's `judge_options`: endpoint, key, concurrency, prices). Stores nothing. Inputs where no gold item has a
    prediction (`check_matched`), or that give the judge nothing to score (the family's `nothing_to_score`), are
    refused unless `allow_empty`.

    Raises:
        InputError, JudgeSpecError: bad input (file and line named). AuditError: bad run name; RunExists.
    """
    task = get_task(task_name)
    inputs = {k: str(v) for k, v in inputs.items() if v}
    known = {s.name for s in task.inputs}
    unknown = sorted(set(inputs) - known)
    if unknown:
        raise AuditError(f"{task.name} takes no {', '.join('--' + u for u in unknown)} input; it takes "
                         f"{', '.join('--' + s.name for s in task.inputs)}")
    missing = [s.name for s in task.inputs if s.required and s.name not in inputs]
    if missing:
        raise AuditError(f"{task.name} needs {', '.join('--' + m for m in missing)}")
    names = {k: (input_names or {}).get(k) or Path(v).name for k, v in inputs.items()}
    if run is not None:
        check_run_name(run)
        if list(db.query("SELECT 1 FROM runs WHERE name = ?", [run])):
            raise RunExists(f"run {run!r} already exists in this database; pick another name with --run")
    loaded = task.load(inputs)
    check_matched(loaded, inputs.get("pred") or _main_input(task, inputs), allow_empty=allow_empty)
    judge = task.make_judge(judge_spec, judge_options)
    nothing = task.nothing_to_score(loaded, judge)
    if nothing and not allow_empty:
        raise InputError(_main_input(task, inputs), None, f"{nothing}: nothing to score. Nothing was stored; pass "
                                                          "--allow-empty to store the run anyway")
    name = run or default_run_name(db, task.name, names.get(_main_input_name(task, inputs), task.name), judge.spec)
    return RunPlan(task, name, inputs, names, loaded, judge, dict(options or {}))


def check_matched(loaded: Loaded, pred: str, *, allow_empty: bool = False) -> None:
    """Refuse a run in which no gold item has a prediction (an empty or wrong prediction file or folder, file
    names in another case): it would store a run of zeros. Families say which gold items have none in
    `loaded.extra["missing_predictions"]`; `allow_empty` keeps the rare intended case.

    Raises:
        InputError: at the predictions, saying why.
    """
    missing = loaded.extra.get("missing_predictions")
    if allow_empty or not loaded.docs or missing is None or len(missing) < len(loaded.docs):
        return
    unknown = [str(u) for u in loaded.extra.get("unknown_predictions") or []]
    gold = {str(m).casefold() for m in missing}
    if any(u.casefold() in gold for u in unknown):
        why = "; their file names differ from the gold names only in upper/lower case"
    elif unknown:
        why = (f"; its {count_noun(len(unknown), 'prediction')} name other documents (another run's, or another "
               "gold set's?)")
    else:
        why = "; it holds no prediction"
    raise InputError(pred, None, f"no prediction matches any of the {count_noun(len(loaded.docs), 'gold item')}"
                                 f"{why}. Nothing "
                                 "was stored; check the predictions, or pass --allow-empty to score them as empty")


def _main_input_name(task: TaskFamily, inputs: Mapping[str, str]) -> str:
    main = _main_input(task, inputs)
    return next((k for k, v in inputs.items() if v == main), "")


def check_answers(stats: JudgeStats, judge: Judge, task: TaskFamily, *, allow_partial: bool = False) -> None:
    """A run whose judge answers are mostly missing (more than half of its questions) is a failed job, not a run
    scored on missing answers: unless the user asks for a partial run (`allow_partial`).

    Raises:
        JudgeFailed: saying how many are missing, that the answers received are cached, and how to go on.
    """
    asked = stats.distinct_queries
    if allow_partial or not asked or stats.missing * 2 <= asked:
        return
    where = ("not in the judge log" if not judge.cacheable else
             "without an answer from the server (requests that failed)")
    resume = ("the answers received are cached: run the same command again to resume" if judge.cacheable else
              "check that the judge log belongs to these inputs")
    raise JudgeFailed(f"judge {judge.spec.partition(':')[0]!r}: {stats.missing} of {asked} judge answers are "
                      f"{where}; nothing was stored (no run). {resume[0].upper() + resume[1:]}, or pass "
                      f"--allow-partial to store a run scored without them (each counts as "
                      f"{task.unanswered_counts_as})")


def execute_run(db: Database, plan: RunPlan, *, progress: Progress | None = None,
                stats: JudgeStats | None = None, allow_partial: bool = False,
                before_store: Callable[[list[Decision]], None] | None = None,
                learnt_from: Mapping | None = None) -> dict:
    """Ask the judge (through the cache) and store the run with every decision, all or nothing.

    `before_store(decisions)` runs once the decisions are known and the name is free, before anything of the run
    is stored: when it raises, nothing is (`score --judge-log` writes its log there).

    Judge answers received stay in the cache even when the run is not stored (cancelled, failed, name taken, or
    mostly missing answers without `allow_partial`: `check_answers`).

    `learnt_from`: the judge was improved on reviews (`improve-judge`'s `judge_after.learnt_from`): stored in the
    run's judge identity, so withdrawing a review it learnt from can be shown (`audit.outputs.improve_judge`).

    Returns:
        The run's row (name, original metrics, summary with judge counts and warnings).
    """
    task, judge = plan.task, plan.judge
    cache = SqliteAnswerCache(db, judge.spec, judge.identity())
    decisions, stats = task.decide(plan.loaded, judge, cache, progress, stats)
    check_answers(stats, judge, task, allow_partial=allow_partial)
    warnings = list(plan.loaded.warnings)
    if stats.missing:
        where = "the server gave no answer" if judge.cacheable else "the questions are missing from the judge log"
        warnings.append(f"{count_noun(stats.missing, 'judge answer')} {'was' if stats.missing == 1 else 'were'} not "
                        f"available ({where}); those decisions are labelled 'invalid', each counts as "
                        f"{task.unanswered_counts_as}, and "
                        "are in the review queue 'invalid'")
    if stats.invalid:
        where = judge.unreadable_where()
        where = f" ({where})" if where else ""
        warnings.append(f"{count_noun(stats.invalid, 'judge answer')} could not be read{where}; those decisions are "
                        "labelled 'invalid' unless another answer settles them")
    summary = {"judge": stats.as_dict(), "warnings": warnings, "notes": plan.loaded.notes[:50],
               "n_notes": len(plan.loaded.notes), **plan.loaded.extra}
    inputs = {k: _file_info(v, plan.input_names.get(k)) for k, v in plan.inputs.items()}
    if plan.options:
        inputs["options"] = dict(plan.options)
    identity = judge.identity() | ({"learnt_from": dict(learnt_from)} if learnt_from else {})
    if before_store is not None:
        if list(db.query("SELECT 1 FROM runs WHERE name = ?", [plan.name])):
            raise RunExists(f"run {plan.name!r} already exists in this database; pick another name with --run")
        before_store(decisions)
    _store(db, task, plan.name, judge, identity, plan.loaded, decisions, inputs, summary, plan.options)
    return run_row(db, plan.name)


def score_run(db: Database, task_name: str, inputs: Mapping[str, str], judge_spec: str, *, run: str | None = None,
              progress: Progress | None = None, input_names: Mapping[str, str] | None = None,
              stats: JudgeStats | None = None, judge_options: JudgeOptions | None = None,
              options: Mapping[str, str] | None = None, learnt_from: Mapping | None = None) -> dict:
    """`plan_run` then `execute_run`: score inputs (paths by the family's input names) and store the run."""
    with _cycle_collector_paused():
        plan = plan_run(db, task_name, inputs, judge_spec, run=run, input_names=input_names,
                        judge_options=judge_options, options=options)
        return execute_run(db, plan, progress=progress, stats=stats, learnt_from=learnt_from)


@contextmanager
def _cycle_collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while a run is scored, back on afterwards (if it was on).

    Scoring allocates hundreds of thousands of containers that live until the run is stored, so the collector's
    full passes kept walking them for nothing (0.7–0.9 s of 10,000 CHIMERA abstracts' scoring; scoring makes
    almost no cycles). Reference counting still frees everything else as usual.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def judge_log_text(task: TaskFamily, decisions: Sequence[object]) -> tuple[str, int]:
    """The run's judge log (replay format) and its number of lines, from decisions or stored decision rows."""
    lines = task.judge_log(decisions)
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), len(lines)


def write_judge_log(task: TaskFamily, decisions: list, path: str | Path, rule: OutputRule | None = None) -> int:
    """Write the run's judge log (replay format) to a path the user chose, whole; returns the number of lines."""
    text, n = judge_log_text(task, decisions)
    (rule or OutputRule(force=True)).write(path, text, "--judge-log")
    return n


class JudgeLogWriter:
    """`score --judge-log`: the log is written (to a temporary file beside its target) from the decisions before
    the run is stored, and appears at its path once the run is stored; a log that cannot be written stores
    nothing."""

    def __init__(self, task: TaskFamily, path: str | Path, rule: OutputRule) -> None:
        self.task, self.path, self.rule = task, path, rule
        self.staged: Staged | None = None
        self.lines = 0

    def stage(self, decisions: Sequence[Decision]) -> None:
        text, self.lines = judge_log_text(self.task, decisions)
        self.staged = stage_output(self.path, text, "--judge-log", self.rule)

    def commit(self) -> int:
        if self.staged is not None:
            self.staged.commit()
        return self.lines

    def discard(self) -> None:
        if self.staged is not None:
            self.staged.discard()


def _shared(seen: dict[str, tuple[str, dict]], counts: dict) -> tuple[str, dict]:
    """A document's counts as stored (their JSON) and as aggregated: one object for every document whose counts spell
    the same JSON (100,000 CHIMERA abstracts have 114 distinct counts; a dict each held 590 MB more at the peak of
    `score`, #38). Equal JSON is equal values, types included (1 and 1.0 spell differently); nothing changes counts
    in place, as for the counts `audit.rescoring.original_counts` shares when it reads them."""
    text = dumps(counts)
    return seen.setdefault(text, (text, counts))


def _store(db: Database, task: TaskFamily, name: str, judge: Judge, identity: dict, loaded: Loaded,
           decisions: list[Decision], inputs: dict, summary: dict, options: Mapping[str, str]) -> None:
    # a document's labels are built when it is counted, and rows are encoded as they are inserted: all of a run's
    # label keys and row JSON at once held 300 MB more at 683k decisions (#38)
    positions = _positions_by_doc(decisions)
    qkeys: list[str] = [""] * len(decisions)
    doc_rows = []
    all_counts = []
    shared_counts: dict[str, tuple[str, dict]] = {}
    for idx, doc in enumerate(loaded.docs):
        doc_id = task.doc_id(doc)
        payload = task.payload(doc)
        idxs = positions.get(doc_id, ())
        labels, asked = _labels_and_questions(decisions, idxs)
        for i, q in zip(idxs, decision_qkeys(task, payload, asked, task.gold_key(payload)), strict=True):
            qkeys[i] = q
        text, counts = _shared(shared_counts, task.counts(payload, labels))
        all_counts.append(counts)
        doc_rows.append((doc_id, idx, payload, text, task.outcome(payload, counts)))
    unknown = positions.keys() - {r[0] for r in doc_rows}
    if unknown:
        raise KeyError(f"decisions of documents the run does not have: {sorted(unknown)[:5]}")
    total = sum_nested(all_counts)
    metrics = task.aggregate(all_counts, options, total=total)
    with _page_cache(db, BULK_CACHE_KIB), transaction(db):
        if list(db.query("SELECT 1 FROM runs WHERE name = ?", [name])):
            raise RunExists(f"run {name!r} already exists in this database; pick another name with --run")
        cur = db.conn.execute(
            "INSERT INTO runs (name, task, judge_spec, judge_identity, created, inputs, summary, original_metrics, "
            "original_counts, n_docs, n_decisions) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (name, task.name, judge.spec, dumps(identity), now(), dumps(inputs), dumps(summary),
             dumps(metrics), dumps(total), len(doc_rows), len(decisions)))
        run_id = cur.lastrowid
        count_texts = [text for _, _, _, text, _ in doc_rows]
        db.conn.executemany(
            "INSERT INTO documents (run_id, doc_id, idx, payload, counts, outcome) VALUES (?, ?, ?, ?, ?, ?)",
            ((run_id, doc_id, idx, dumps(payload), counts, outcome)
             for (doc_id, idx, payload, _, outcome), counts in zip(doc_rows, count_texts, strict=True)))
        write_counts_index(db, run_id, zip((r[0] for r in doc_rows), count_texts, strict=True))
        # rows made as they are inserted: a list of every row's detail JSON held 400 MB more at 683k decisions
        db.conn.executemany(
            "INSERT INTO decisions (run_id, doc_id, kind, type, left, right, judge_label, detail, qkey) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ((run_id, *row, q) for row, q in zip(_rows(decisions), qkeys, strict=True)))
        db.execute("INSERT INTO audit_state (run_id, last_review, total, review_counts) VALUES (?, 0, ?, ?)",
                   [run_id, dumps(total), dumps(no_review_counts())])


BULK_CACHE_KIB = 32 * 1024
"""SQLite's page cache while a run is stored: with the default 2 MB, inserting 683k decisions in key order of the
question-key index spilled and re-read its pages, 5 s more CPU (mostly system) at 10,000 retrieval queries (#38)."""


@contextmanager
def _page_cache(db: Database, kib: int) -> Iterator[None]:
    """The connection's page cache at least `kib` KiB inside the block (pages are allocated only as they are
    used), as it was after."""
    before, = db.conn.execute("PRAGMA cache_size").fetchone()
    size = before * db.conn.execute("PRAGMA page_size").fetchone()[0] // 1024 if before > 0 else -before
    if size >= kib:
        yield
        return
    db.conn.execute(f"PRAGMA cache_size = {-kib}")
    try:
        yield
    finally:
        db.conn.execute(f"PRAGMA cache_size = {before}")


# A family's decision sequence may make each `Decision` only when it is read (retrieval: 683k of them at 10,000
# queries). The store reads them three times (their documents, labels and question keys, the rows); such a sequence
# may also give, without making the decision:
#   fields(i) -> (doc, kind, type, left, right, judge)
#   detail_text(i, dumps) -> dumps(decision i's detail), the detail as the store spells it
Fields = tuple[str, str, str, str, str, str]


def _fields_reader(decisions: Sequence[Decision]) -> Callable[[int], Fields]:
    fields = getattr(decisions, "fields", None)
    if fields is not None:
        return fields

    def read(i: int) -> Fields:
        d = decisions[i]
        return d.doc, d.kind, d.type, d.left, d.right, d.judge
    return read


def _rows(decisions: Sequence[Decision]) -> Iterator[tuple[str, str, str, str, str, str, str]]:
    """Each decision's (doc, kind, type, left, right, judge, detail JSON), in order."""
    fields, detail_text = getattr(decisions, "fields", None), getattr(decisions, "detail_text", None)
    if fields is not None and detail_text is not None:
        return ((*fields(i), detail_text(i, dumps)) for i in range(len(decisions)))
    return ((d.doc, d.kind, d.type, d.left, d.right, d.judge, dumps(d.detail)) for d in decisions)


def _labels_and_questions(decisions: Sequence[Decision], idxs: Sequence[int]
                          ) -> tuple[dict[tuple[str, str, str, str], str], list[dict[str, str]]]:
    """One document's judge labels by (kind, type, left, right) and the decisions as `decision_qkeys` asks them,
    each decision read once."""
    fields = _fields_reader(decisions)
    labels: dict[tuple[str, str, str, str], str] = {}
    asked = []
    for i in idxs:
        _doc, kind, type_, left, right, judge = fields(i)
        labels[(kind, type_, left, right)] = judge
        asked.append({"kind": kind, "type": type_, "left": left, "right": right})
    return labels, asked


def _positions_by_doc(decisions: Sequence[Decision]) -> dict[str, list[int]]:
    """Document id -> the positions of its decisions in `decisions`, in order."""
    fields = getattr(decisions, "fields", None)
    doc_ids = getattr(decisions, "doc_ids", None)  # a family's decisions may list their documents directly
    docs = (doc_ids() if doc_ids is not None else (fields(i)[0] for i in range(len(decisions))) if fields is not None
            else (d.doc for d in decisions))
    by_doc: dict[str, list[int]] = {}
    for i, doc in enumerate(docs):
        by_doc.setdefault(doc, []).append(i)
    return by_doc


_MOVED_COLS = ("uid", "reviewer", "label", "role", "note", "blind", "created", "auth_subject", "auth_email",
               "auth_mode", "client_id")


def _move_reviews(db: Database, moves: Sequence[tuple[int, int, int]]) -> None:
    """Each (run, decision, review): the review written again as that run's review of that decision (not one of
    its sample draws), the old row taken out, in id order. Written again, not changed in place: a new row id is
    what tells every process's kept state (`reviews_version`: count and newest id) that the runs' reviews moved."""
    cols = ", ".join(_MOVED_COLS)
    for run_id, decision_id, review_id in sorted(moves, key=lambda m: m[2]):
        row = db.execute(f"SELECT {cols} FROM reviews WHERE id = ?", [review_id]).fetchone()
        db.execute("DELETE FROM reviews WHERE id = ?", [review_id])
        db.execute(f"INSERT INTO reviews (run_id, decision_id, sampled, {cols}) VALUES (?, ?, 0, "
                   f"{', '.join('?' * len(_MOVED_COLS))})", [run_id, decision_id, *row])


def export_marks(db: Database, name: str) -> tuple[int, int]:
    """The newest review and gold-erratum row of run `name`: an export read after this holds every row up to them
    (both tables are append-only), so `delete_run(exported=...)` can refuse rows written after it."""
    run_id = run_row(db, name)["id"]
    marks = [db.execute(f"SELECT COALESCE(MAX(id), 0) FROM {t} WHERE run_id = ?", [run_id]).fetchone()[0]
             for t in ("reviews", "errata")]
    return marks[0], marks[1]


def _check_nothing_since(db: Database, run_id: int, marks: tuple[int, int], moving: set[int], name: str) -> None:
    """Refuse a delete whose export missed rows written after it: reviews that would be deleted (not moved) and
    errata newer than `marks` (`export_marks`, read before the export)."""
    newer = [v for v, in db.execute("SELECT id FROM reviews WHERE run_id = ? AND id > ?", [run_id, marks[0]])
             if v not in moving]
    errata, = db.execute("SELECT COUNT(*) FROM errata WHERE run_id = ? AND id > ?", [run_id, marks[1]]).fetchone()
    if newer or errata:
        what = " and ".join(count_noun(n, noun) for n, noun in ((len(newer), "review"), (errata, "gold erratum row"))
                            if n)
        raise AuditError(f"run {name!r}: {what} {'was' if len(newer) + errata == 1 else 'were'} stored while it was "
                         "being exported and are not in the file; nothing was deleted: run the command again")


def delete_run(db: Database, name: str, *, force: bool = False, exported: tuple[int, int] | None = None) -> dict:
    """Delete a run with its documents, decisions and audited state.

    A review settles its question in every run that asks it, so a review whose question another run asks is not
    deleted: it moves to that run (the first decision asking it, by id), as that run's review, not one of its sample
    draws, and every other run keeps the labels it had (`reviews_moved` says how many went where). The reviews
    nothing else asks, and the gold errata, are deleted with the run: both append-only (every row counts, a
    withdrawal too), so that is refused unless they were exported first (`exported`: the `export_marks` the caller
    read before writing them out; a row newer than those marks was not in the file, and refuses the delete) or
    `force=True`. Cached judge answers are kept (another run may use them). A board holding
    the run keeps its other runs while two or more remain and is deleted otherwise; the plans of the boards it was
    on are deleted (`audit.store.plans.drop_run_from_boards`). What is counted, checked and deleted is read in the
    one write transaction: a review stored meanwhile waits for it, and is never deleted unchecked.

    Raises:
        UnknownRun; AuditError when reviews only this run asks, or errata, exist and neither `exported` nor `force`
        is given, or were written after the export.
    """
    row = run_row(db, name)
    with transaction(db):
        n_reviews, = db.execute("SELECT COUNT(*) FROM reviews WHERE run_id = ?", [row["id"]]).fetchone()
        n_errata, = db.execute("SELECT COUNT(*) FROM errata WHERE run_id = ?", [row["id"]]).fetchone()
        # each review whose question another run asks, and the first decision asking it there
        moves = db.execute(f"SELECT v.id, MIN(d2.id) FROM {SHARED_FROM} WHERE v.run_id = ?1 AND {SETTLES_SHARED} "
                           "AND d2.run_id != ?1 GROUP BY v.id", [row["id"]]).fetchall()
        n_lost = n_reviews - len(moves)
        if (n_lost or n_errata) and not (force or exported):
            held = " and ".join(count_noun(n, noun, plural) for n, noun, plural in (
                (n_lost, "review of a question no other run asks", "reviews of questions no other run asks"),
                (n_errata, "gold erratum row", None)) if n)
            kept = f" ({count_noun(len(moves), 'other review')} would move to the runs that ask their questions)" \
                if moves else ""
            raise AuditError(f"run {name!r} has {held}{kept}; export them first (`python -m audit delete-run --run "
                             f"{name!r} --exported FILE` writes the reviews to FILE and the errata beside it, then "
                             "deletes), or pass --force to delete them too")
        if exported and not force:
            _check_nothing_since(db, row["id"], exported, {v for v, _ in moves}, name)
        # runs that saw this run's reviews (a review settles its question in every run): re-counted after the move
        sharing = [n for n, in db.execute(
            f"SELECT DISTINCT r.name FROM {SHARED_FROM} CROSS JOIN runs r WHERE v.run_id = ? AND {SETTLES_SHARED} "
            "AND d2.run_id != ? AND r.id = d2.run_id",
            [row["id"], row["id"]])]
        run_of = runs_of_decisions(db, [d for _, d in moves])
        updates = [(run_of[d], d, v) for v, d in moves]
        names = dict(db.execute("SELECT id, name FROM runs").fetchall())
        moved = {names[r]: n for r, n in sorted(Counter(r for r, _, _ in updates).items())}
        plans = [k for k, in db.execute("SELECT kind FROM sampling_plans WHERE run_id = ?", [row["id"]])]
        draws, = db.execute("SELECT COUNT(*) FROM reviews WHERE run_id = ? AND sampled = 1", [row["id"]]).fetchone()
        _move_reviews(db, updates)
        for table in ("reviews", "errata", "sampling_plans", "stability_answers", "blind_assignments", "review_shares",
                      "review_assignments", "judge_improvements", "fold_labels", "effective", "doc_audit",
                      "audit_state", "decisions", "document_counts", "documents"):
            db.execute(f"DELETE FROM {table} WHERE run_id = ?", [row["id"]])
        db.execute("DELETE FROM runs WHERE id = ?", [row["id"]])
        # a board never names a run that is gone (audit/board/store.py)
        boards_kept, boards = drop_run_from_boards(db, name)
    for other in sharing:
        rebuild_audit_state(db, other)
    # its plans go with it, and its sample draws are draws of nothing any more: a moved review is hand-picked there
    return {"deleted": name, "reviews_deleted": n_lost, "reviews_moved": moved, "errata_deleted": n_errata,
            "sampling_plans_deleted": len(plans), "sample_draws_dropped": draws,
            "runs_recounted": sharing, "boards_deleted": boards, "boards_without_it": boards_kept}
