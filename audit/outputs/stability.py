"""Judge stability checks: re-ask a seeded sample of a run's judge questions, bypassing the answer cache.

Caching makes a run reproducible but hides how stable the judge is. A *check* re-asks the questions behind a
seeded sample of the run's decisions (the family's `questions_for`) K times, with the run's judge or another
judge spec (another model, prompt version or temperature), calling the transport's `ask_many` directly so no
cached answer is reused and nothing is written to the cache. Every answer is stored in `stability_answers`
with its check name and attempt number (1..K).

The report (`stability_report`) gives per decision the label of every attempt (the family's
`label_from_answers(decision, answers)`, by default the single question's answer; the answers joined with `|`
when it has no rule for them) and its distribution, and per run the flip rate (share of decisions whose label is not the
same in every attempt of the selected checks) and the share whose re-asked label differs from the run's judge
label, with Wilson intervals, by decision kind, type and run judge label (`scoring/stats/stability.py`).
A `missing` answer (request failed) leaves that attempt out. `unstable_decisions` lists the decision ids a
review-queue filter shows. Works for every family whose `questions_for` is not empty.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from sqlite_utils import Database

from audit.errors import AuditError
from audit.store.database import dumps, now, run_row, transaction
from audit.views import RunRef, RunView
from scoring.errors import JudgeFailed
from scoring.families import get_task
from scoring.families.base import TaskFamily
from scoring.judges.answer import INVALID, MISSING
from scoring.judges.registry import JudgeOptions
from scoring.stats.stability import distribution, flipped, rates_by

DEFAULT_SAMPLE = 100
"""Decisions re-asked when no sample size is given (0 = every decision with questions)."""
GROUPS = ("kind", "type", "run_label")
Progress = Callable[[int, int], None]


def _decision_rows(db: Database, run_id: int) -> list[dict]:
    return [dict(r) for r in db.query(
        "SELECT id, doc_id AS doc, kind, type, left, right, judge_label FROM decisions WHERE run_id = ? ORDER BY id",
        [run_id])]


def _payloads(db: Database, run_id: int, doc_ids: set[str]) -> dict[str, dict]:
    out = {}
    for doc_id, payload in db.execute("SELECT doc_id, payload FROM documents WHERE run_id = ?", [run_id]):
        if doc_id in doc_ids:
            out[doc_id] = json.loads(payload)
    return out


def sample_decisions(db: Database, run: str, sample: int | None = DEFAULT_SAMPLE, seed: int = 0,
                     task: TaskFamily | None = None) -> list[tuple[dict, list]]:
    """(decision row, its questions) for a seeded sample of the run's decisions that have questions.

    The sample is `random.Random(seed).sample` over those decisions in id order, returned in id order: the same
    run, size and seed give the same sample, whichever judge is asked (so a second judge spec is asked the
    same questions). `sample` None or 0: every such decision.
    """
    row = run_row(db, run)
    task = task or get_task(row["task"])
    decs = _decision_rows(db, row["id"])
    payloads = _payloads(db, row["id"], {d["doc"] for d in decs})
    with_q = [(d, qs) for d in decs if (qs := task.questions_for(payloads[d["doc"]], d))]
    if not with_q:
        raise AuditError(f"run {run!r} has no decision an LLM judge answers (the {task.name} family re-asks no "
                         "questions), so there is nothing to check")
    if sample and sample < len(with_q):
        picked = set(random.Random(seed).sample(range(len(with_q)), sample))
        with_q = [x for i, x in enumerate(with_q) if i in picked]
    return with_q


def _public_spec(spec: str) -> str:
    name, _, arg = spec.partition(":")
    return f"replay:{Path(arg).name}" if name == "replay" else spec


def _check_name(db: Database, run_id: int, base: str) -> str:
    taken = {r[0] for r in db.execute("SELECT DISTINCT check_name FROM stability_answers WHERE run_id = ?",
                                      [run_id])}
    if base not in taken:
        return base
    n = 2
    while f"{base} ({n})" in taken:
        n += 1
    return f"{base} ({n})"


def run_check(db: Database, run: str, *, repeats: int = 3, temperature: float | None = None,
              judge_spec: str | None = None, sample: int | None = DEFAULT_SAMPLE, seed: int = 0,
              name: str | None = None, judge_options: JudgeOptions | None = None,
              progress: Progress | None = None) -> dict:
    """Re-ask the sample's questions `repeats` times and store every answer; returns the check's summary.

    Args:
        judge_spec: the judge to ask (default: the run's own judge spec).
        temperature: sampling temperature for judges that have one (`openai:`); None keeps the judge's.
        sample, seed: which decisions (`sample_decisions`).
        name: the check's name (default from judge, temperature, repeats and sample; made unique).
        judge_options: how to reach the judge (endpoint, key, concurrency); the judge is built by the run's
            family (`make_judge`), as for scoring.
        progress: (answers received, answers to get) over all attempts.

    A check is stored whole or not at all: a judge that fails for good (bad key, server gone, every attempt an
    error), or whose answers are mostly missing (more than half: every request failed, or none was sent), is a
    failed job that stores nothing.

    Raises:
        AuditError: bad arguments (a temperature that is not a finite number >= 0 among them), a named check that
            exists, or a judge that cannot answer these questions.
        JudgeFailed: the judge failed for good, or most answers are missing; nothing is stored.
    """
    if repeats < 1:
        raise AuditError(f"--repeats must be at least 1, got {repeats}")
    if temperature is not None and not (isinstance(temperature, int | float) and math.isfinite(temperature)
                                        and temperature >= 0):
        raise AuditError(f"--temperature must be a finite number >= 0, got {temperature!r}")
    if sample is not None and sample < 0:
        raise AuditError(f"--sample must be 0 (all) or more, got {sample}")
    row = run_row(db, run)
    task = get_task(row["task"])
    spec = judge_spec or row["judge_spec"]
    options = judge_options or JudgeOptions()
    if temperature is not None:
        options = replace(options, temperature=float(temperature))
    judge = task.make_judge(spec, options)
    if temperature is not None and judge.temperature is None:
        raise AuditError(f"judge {_public_spec(spec)!r} has no sampling temperature; --temperature applies to "
                         "LLM judges (openai:MODEL)")
    chosen = sample_decisions(db, run, sample, seed, task)
    # One ask per distinct question per attempt, as scoring asks them (a CHIMERA pair of two equal spans has
    # one prompt for both orders); its answer is stored for every place it stands.
    index: dict[tuple, int] = {}
    questions = []
    for _, qs in chosen:
        for q in qs:
            if tuple(q.key) not in index:
                index[tuple(q.key)] = len(questions)
                questions.append(q)
    temp = judge.temperature
    base = name or (f"{_public_spec(spec)}" + (f" T={temp:g}" if temp is not None else "") +
                    f" x{repeats} n={len(chosen)} seed={seed}")
    if name is not None and list(db.query("SELECT 1 FROM stability_answers WHERE run_id = ? AND check_name = ? "
                                          "LIMIT 1", [row["id"], name])):
        raise AuditError(f"run {run!r} already has a stability check named {name!r}; pick another --name")
    check = name or _check_name(db, row["id"], base)
    identity = {k: v for k, v in judge.identity().items() if k != "spec"}
    params = dumps({"identity": identity, "temperature": temp, "repeats": repeats, "sample": sample, "seed": seed,
                    "deterministic": not judge.cacheable})
    total, done = len(questions) * repeats, 0
    counts = {"answers": 0, "missing": 0, "invalid": 0}
    rows: list[tuple] = []
    for attempt in range(1, repeats + 1):
        def _progress(k: int, _n: int, base_done: int = done) -> None:
            if progress:
                progress(base_done + k, total)

        try:
            answers = judge.ask_many(questions, _progress)
        except (TypeError, AttributeError, NotImplementedError) as e:  # a judge that only reads recorded answers
            raise AuditError(f"judge {_public_spec(spec)!r} cannot be asked these questions again ({e}); give "
                             "--judge SPEC with an LLM judge") from None
        done += len(questions)
        created = now()
        for a in answers:
            counts["answers"] += 1
            counts["missing"] += a.value == MISSING
            counts["invalid"] += a.value == INVALID
        for d, qs in chosen:
            for q in qs:
                a = answers[index[tuple(q.key)]]
                rows.append((row["id"], check, d["id"], dumps(list(q.key)), spec, attempt, a.value, a.raw,
                             a.rationale, params, created))
        fatal = judge.fatal
        if fatal:
            raise JudgeFailed(f"judge {_public_spec(spec)!r} failed in attempt {attempt} of {repeats}: {fatal}; "
                              "nothing was stored (no check): run the same command again once the judge answers")
    if counts["missing"] * 2 > counts["answers"]:
        why = (first.rationale or "no answer") if (first := next((a for a in answers if a.value == MISSING), None)) \
            else "no answer"
        raise JudgeFailed(f"judge {_public_spec(spec)!r}: {counts['missing']} of {counts['answers']} answers are "
                          f"missing ({why}); nothing was stored (no check): run the same command again once the "
                          "judge answers")
    with transaction(db):
        db.conn.executemany(
            "INSERT INTO stability_answers (run_id, check_name, decision_id, question, judge, attempt, value, raw, "
            "rationale, params, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    return {"check": check, "run": run, "judge": _public_spec(spec), "temperature": temp, "repeats": repeats,
            "decisions": len(chosen), "questions": len(questions), **counts}


def _run_row(db: Database, run: RunRef) -> dict:
    return run.row if isinstance(run, RunView) else run_row(db, run)


def list_checks(db: Database, run: RunRef) -> list[dict]:
    """The run's stability checks, oldest first: name, judge, attempts, decisions, answers, parameters."""
    row = _run_row(db, run)
    out = []
    for r in db.query("SELECT check_name, judge, MAX(attempt) AS attempts, COUNT(DISTINCT decision_id) AS decisions, "
                      "COUNT(*) AS answers, MIN(params) AS params, MIN(created) AS created, MIN(id) AS first "
                      "FROM stability_answers WHERE run_id = ? GROUP BY check_name ORDER BY first", [row["id"]]):
        out.append({"name": r["check_name"], "judge": _public_spec(r["judge"]), "attempts": r["attempts"],
                    "decisions": r["decisions"], "answers": r["answers"], "created": r["created"],
                    "params": json.loads(r["params"]) if r["params"] else {}})
    return out


def _attempt_label(task: TaskFamily, decision: dict, values: list[str]) -> tuple[str | None, bool]:
    """(label of one attempt, whether it is comparable with the run's judge label); None if an answer is missing."""
    if any(v == MISSING for v in values):
        return None, False
    label = task.label_from_answers(decision, values)
    if label is not None:
        return label, True
    return "|".join(values), False


def stability_report(db: Database, run: RunRef, checks: Sequence[str] | None = None) -> dict:
    """Per-decision answer distributions and the run's flip rates over the selected checks (default: all).

    Returns:
        `checks` (as `list_checks`, each with its own within-check flip rate), `decisions` (one per re-asked
        decision: id, doc, kind, type, left, right, `run_label`, `labels` {check: [label per attempt]},
        `distribution` {label: n}, `answers` {question: {answer: n}}, `flipped` (labels differ over every attempt
        of the selected checks; None with fewer than two), `changed_vs_run` (some attempt's label differs from the
        run's judge label; None when not comparable)), `flip_rate`, `changed_vs_run` and `question_flip_rate`
        (share of questions whose answer changed), each `rates_by` overall and by kind, type and run label.
    """
    row = _run_row(db, run)
    task = run.task if isinstance(run, RunView) else get_task(row["task"])
    known = list_checks(db, run)
    names = [c["name"] for c in known]
    selected = list(checks) if checks else names
    unknown = [c for c in selected if c not in names]
    if unknown:
        raise AuditError(f"run {row['name']!r} has no stability check {unknown[0]!r}; its checks: "
                         f"{', '.join(names) or 'none (run `python -m audit stability` first)'}")
    decs = {d["id"]: d for d in _decision_rows(db, row["id"])}
    # (decision, check, attempt) -> [answer value per question, in the order asked]
    asked: dict[int, dict[str, dict[int, list[str]]]] = {}
    per_question: dict[tuple[int, str], list[str]] = {}
    marks = ",".join("?" * len(selected))
    for r in db.query(f"SELECT decision_id, check_name, attempt, question, value FROM stability_answers WHERE "
                      f"run_id = ? AND check_name IN ({marks}) ORDER BY id", [row["id"], *selected]):
        asked.setdefault(r["decision_id"], {}).setdefault(r["check_name"], {}).setdefault(r["attempt"], []).append(
            r["value"])
        per_question.setdefault((r["decision_id"], r["question"]), []).append(r["value"])
    out_decs = []
    for dec_id in sorted(asked):
        d = decs[dec_id]
        decision = {k: d[k] for k in ("doc", "kind", "type", "left", "right")}
        labels: dict[str, list[str | None]] = {}
        all_labels: list[str] = []
        comparable = True
        for check in selected:
            for attempt in sorted(asked[dec_id].get(check, {})):
                label, ok = _attempt_label(task, decision, asked[dec_id][check][attempt])
                labels.setdefault(check, []).append(label)
                if label is not None:
                    all_labels.append(label)
                    comparable = comparable and ok
        answers = {q: distribution(v for v in vals if v != MISSING) for (i, q), vals in per_question.items()
                   if i == dec_id}
        q_flips = [flipped([v for v in vals if v != MISSING]) for (i, q), vals in per_question.items()
                   if i == dec_id and sum(v != MISSING for v in vals) >= 2]
        out_decs.append({
            "id": dec_id, **decision, "run_label": d["judge_label"], "labels": labels,
            "distribution": distribution(all_labels), "answers": answers,
            "flipped": flipped(all_labels) if len(all_labels) >= 2 else None,
            "changed_vs_run": (any(x != d["judge_label"] for x in all_labels) if all_labels and comparable
                               else None),
            "_question_flips": q_flips,
        })
    questions = [{"kind": d["kind"], "type": d["type"], "run_label": d["run_label"], "flipped": f}
                 for d in out_decs for f in d.pop("_question_flips")]
    for c in known:
        c["flip_rate"] = _within_check_rate(task, decs, asked, c["name"])
    return {"run": run, "checks": [c for c in known if c["name"] in selected], "decisions": out_decs,
            "flip_rate": rates_by(out_decs, "flipped", GROUPS),
            "changed_vs_run": rates_by(out_decs, "changed_vs_run", GROUPS),
            "question_flip_rate": rates_by(questions, "flipped", GROUPS)}


def _within_check_rate(task: TaskFamily, decs: dict, asked: dict, check: str) -> dict:
    flags = []
    for dec_id, by_check in asked.items():
        attempts = by_check.get(check)
        if not attempts:
            continue
        d = decs[dec_id]
        decision = {k: d[k] for k in ("doc", "kind", "type", "left", "right")}
        labels = [lab for a in sorted(attempts) if (lab := _attempt_label(task, decision, attempts[a])[0]) is not None]
        if len(labels) >= 2:
            flags.append({"flipped": flipped(labels)})
    return rates_by(flags, "flipped")["all"]


def unstable_decisions(db: Database, run: str, checks: Sequence[str] | None = None, *,
                       include_changed: bool = True) -> list[int]:
    """Ids of the run's decisions whose judge label is not stable, for a review-queue filter (id order).

    A decision is unstable when its re-asked labels over the selected checks (default: all) are not all equal,
    or (with `include_changed`) when a re-asked label differs from the label the judge gave in the run.
    A run without checks has none.
    """
    if not list_checks(db, run):
        return []
    rep = stability_report(db, run, checks)
    return [d["id"] for d in rep["decisions"] if d["flipped"] or (include_changed and d["changed_vs_run"])]
