"""Judge vs judge: two runs of the same inputs compared decision by decision."""

from __future__ import annotations

from sqlite_utils import Database

from audit.errors import AuditError
from audit.outputs.agreement_rule import apply_kappa_rule
from audit.store.database import list_runs
from audit.store.shared_reviews import SAME_QUESTION
from audit.views import RunRef, as_view
from scoring.families import TASKS
from scoring.stats.agreement import pair_stats


def _first_input_sha(row: dict) -> str | None:

    task = TASKS.get(row["task"])
    if task is None or not task.inputs:
        return None
    return (row["inputs"].get(task.inputs[0].name) or {}).get("sha256")


def _input_shas(row: dict) -> dict[str, str | None]:
    return {k: (v or {}).get("sha256") for k, v in row["inputs"].items()}


def _same_questions(db: Database, run_a: int, run_b: int, *,
                    first: bool = False) -> tuple[list[tuple[int, int]], set[int], set[int]]:
    """(decision of A, decision of B) asking the same question (`shared_reviews.SAME_QUESTION`: same family, same
    gold content of the document, same judge question), once per question; and every decision of A, and of B, that
    asks a question the other run asks (a run's twin decisions of one question included). `first`: at most one pair
    (whether the runs share any)."""
    # `first` stops at the first shared question (no ORDER BY, which would read and sort every pair before the LIMIT)
    rows = db.execute(f"SELECT d1.qkey, d1.id, d2.id FROM decisions d1 CROSS JOIN decisions d2 WHERE d1.run_id = ? "
                      f"AND {SAME_QUESTION} AND d2.run_id = ?" + (" LIMIT 1" if first else " ORDER BY d1.id, d2.id"),
                      [run_a, run_b])
    pairs: dict[str, tuple[int, int]] = {}
    in_a: set[int] = set()
    in_b: set[int] = set()
    for qkey, a, b in rows:
        pairs.setdefault(qkey, (a, b))
        in_a.add(a)
        in_b.add(b)
    return list(pairs.values()), in_a, in_b


def comparable_runs(db: Database, run: str) -> list[str]:
    """The other runs `compare_runs` accepts beside `run`: of the same task, asking at least one of its questions
    (the same gold; retrieval's rankings carry their gold inside, so no input file names it). The choices for run B:
    runs on the same inputs (another judge: what the page compares) first, then the other prediction sets, each most
    recent first."""
    rows = list_runs(db)
    mine = next((r for r in rows if r["name"] == run), None)
    if mine is None:
        return []
    sha = _first_input_sha(mine)
    same = [r for r in rows if r["name"] != run and r["task"] == mine["task"]
            and (_input_shas(r) == _input_shas(mine) or _same_questions(db, mine["id"], r["id"], first=True)[0])]
    return [r["name"] for r in sorted(same, key=lambda r: (_input_shas(r) != _input_shas(mine),
                                                           _first_input_sha(r) != sha))]


def compare_runs(db: Database, run_a: RunRef, run_b: RunRef, *, n_resamples: int = 2000) -> dict:
    """Agreement between the judges of two runs on the questions both asked (the same question key: what one review
    settles in both, `audit.store.shared_reviews`); a decision not yet keyed is shared with none.

    Returns `{"a", "b", "shared", "only_a", "only_b", "stats", "differ": [rows where the labels differ]}`;
    `stats` is `scoring.stats.agreement.pair_stats` with run A as rows and run B as columns.

    Raises:
        AuditError: the runs are of different tasks or share no question (different gold).
    """
    va, vb = as_view(db, run_a), as_view(db, run_b)
    ra, rb = va.row, vb.row
    name_a, name_b = va.name, vb.name
    if ra["task"] != rb["task"]:
        raise AuditError(f"runs {name_a!r} and {name_b!r} are of different tasks ({ra['task']}, {rb['task']})")
    task = va.task
    pairs, in_a, in_b = _same_questions(va.db, va.id, vb.id)
    if not pairs:
        raise AuditError(f"runs {name_a!r} and {name_b!r} ask no question in common: they were scored on different "
                         "gold")
    positives = {s.positive for s in task.label_schemes.values()}
    positive = positives.pop() if len(positives) == 1 else None
    da = {d["id"]: d for d in va.decisions()}
    db_ = {d["id"]: d for d in vb.decisions()}
    shared = [(da[a], db_[b]) for a, b in pairs]
    differ = [{"doc": x["doc"], "kind": x["kind"], "type": x["type"], "left": x["left"], "right": x["right"],
               "a_id": x["id"], "b_id": y["id"], "a": x["judge"], "b": y["judge"]}
              for x, y in shared if x["judge"] != y["judge"]]
    kinds = {x["kind"] for x, _ in shared}
    ordinal = bool(kinds) and all(task.label_schemes[k].scale == "ordinal" for k in kinds)
    scales = {task.label_schemes[k].labels for k in kinds}
    stats = pair_stats([x["judge"] for x, _ in shared], [y["judge"] for _, y in shared],
                       clusters=[x["doc"] for x, _ in shared], n_resamples=n_resamples,
                       positive=None if ordinal else positive, ordinal=ordinal,
                       labels=list(scales.pop()) if ordinal and len(scales) == 1 else None)
    apply_kappa_rule(stats, ordinal=ordinal, row_name=f"judge A ({name_a})", col_name=f"judge B ({name_b})")
    return {"a": {"run": name_a, "judge": ra["judge_spec"], "metrics": ra["original_metrics"]},
            "b": {"run": name_b, "judge": rb["judge_spec"], "metrics": rb["original_metrics"]},
            "shared": len(shared), "only_a": len(da) - len(in_a), "only_b": len(db_) - len(in_b), "stats": stats,
            "differ": differ}


def what_differs(db: Database, run_a: RunRef, run_b: RunRef) -> str | None:
    """None when two runs differ in their judge only (what Compare judges is for); else in words what else
    differs, so a page never calls a comparison of two prediction sets one of two judges (LitXBench's demo runs
    share the official judge and differ in their predictions)."""
    ra, rb = as_view(db, run_a).row, as_view(db, run_b).row
    differ = [k for k in sorted(set(ra["inputs"]) | set(rb["inputs"]))
              if isinstance(ra["inputs"].get(k), dict) and "sha256" in ra["inputs"][k]
              and (rb["inputs"].get(k) or {}).get("sha256") != ra["inputs"][k]["sha256"]]
    same_judge = ra["judge_spec"] == rb["judge_spec"]
    if not differ and not same_judge:
        return None
    parts = []
    if differ:
        names = ", ".join(f"{k} ({ra['inputs'][k].get('name')} vs {(rb['inputs'].get(k) or {}).get('name')})"
                          for k in differ)
        parts.append(f"their inputs differ: {names}")
    parts.append("the judge is the same in both" if same_judge else "the judges differ too")
    what = "two prediction sets" if differ and same_judge else "more than the judge"
    return f"These runs compare {what}, not two judges: " + "; ".join(parts) + "."
