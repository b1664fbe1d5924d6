"""Judge vs judge: two runs of the same inputs compared decision by decision."""

from __future__ import annotations

from sqlite_utils import Database

from audit.errors import AuditError
from audit.outputs.agreement_rule import apply_kappa_rule
from audit.store.database import list_runs
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


def comparable_runs(db: Database, run: str) -> list[str]:
    """The other runs `compare_runs` accepts beside `run` (same task, same gold / first input): the choices for run
    B. Runs on the same inputs (another judge: what the page compares) come first, then the other prediction sets,
    each most recent first."""
    rows = list_runs(db)
    mine = next((r for r in rows if r["name"] == run), None)
    if mine is None:
        return []
    sha = _first_input_sha(mine)
    same = [r for r in rows if r["name"] != run and r["task"] == mine["task"] and _first_input_sha(r) == sha]
    return [r["name"] for r in sorted(same, key=lambda r: _input_shas(r) != _input_shas(mine))]


def compare_runs(db: Database, run_a: RunRef, run_b: RunRef, *, n_resamples: int = 2000) -> dict:
    """Agreement between the judges of two runs on the decisions both made (matched by doc, kind, type, spans).

    Returns `{"a", "b", "shared", "only_a", "only_b", "stats", "differ": [rows where the labels differ]}`;
    `stats` is `scoring.stats.agreement.pair_stats` with run A as rows and run B as columns.

    Raises:
        AuditError: the runs are of different tasks or were scored on different gold files.
    """
    va, vb = as_view(db, run_a), as_view(db, run_b)
    ra, rb = va.row, vb.row
    name_a, name_b = va.name, vb.name
    if ra["task"] != rb["task"]:
        raise AuditError(f"runs {name_a!r} and {name_b!r} are of different tasks ({ra['task']}, {rb['task']})")
    task = va.task
    first = task.inputs[0].name
    if (ra["inputs"].get(first) or {}).get("sha256") != (rb["inputs"].get(first) or {}).get("sha256"):
        raise AuditError(f"runs {name_a!r} and {name_b!r} were scored on different {task.inputs[0].title.lower()}s")
    positives = {s.positive for s in task.label_schemes.values()}
    positive = positives.pop() if len(positives) == 1 else None

    def key(d: dict) -> tuple:
        return (d["doc"], d["kind"], d["type"], d["left"], d["right"])

    da = {key(d): d for d in va.decisions()}
    db_ = {key(d): d for d in vb.decisions()}
    shared = [k for k in da if k in db_]
    differ = [{"doc": k[0], "kind": k[1], "type": k[2], "left": k[3], "right": k[4], "a_id": da[k]["id"],
               "b_id": db_[k]["id"], "a": da[k]["judge"], "b": db_[k]["judge"]}
              for k in shared if da[k]["judge"] != db_[k]["judge"]]
    kinds = {k[1] for k in shared}
    ordinal = bool(kinds) and all(task.label_schemes[k].scale == "ordinal" for k in kinds)
    scales = {task.label_schemes[k].labels for k in kinds}
    stats = pair_stats([da[k]["judge"] for k in shared], [db_[k]["judge"] for k in shared],
                       clusters=[k[0] for k in shared], n_resamples=n_resamples, positive=None if ordinal else positive,
                       ordinal=ordinal, labels=list(scales.pop()) if ordinal and len(scales) == 1 else None,
                       ) if shared else {}
    apply_kappa_rule(stats, ordinal=ordinal, row_name=f"judge A ({name_a})", col_name=f"judge B ({name_b})")
    return {"a": {"run": name_a, "judge": ra["judge_spec"], "metrics": ra["original_metrics"]},
            "b": {"run": name_b, "judge": rb["judge_spec"], "metrics": rb["original_metrics"]},
            "shared": len(shared), "only_a": len(da) - len(shared), "only_b": len(db_) - len(shared),
            "stats": stats, "differ": differ}


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
