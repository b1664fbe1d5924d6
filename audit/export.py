"""Exports of a run: JSON (original and audited metrics, review counts, judge, inputs) and CSV of decisions."""

from __future__ import annotations

import csv
import io
import json

from sqlite_utils import Database

from audit.agreement import agreement
from audit.errors import AuditError
from audit.rescoring import audit_run
from audit.store import run_row
from audit.views import decisions
from scoring.families import get_task

FORMATS = ("json", "csv", "latex", "judgelog")


def export_json(db: Database, run: str, *, with_agreement: bool = True) -> dict:
    """Original and audited metrics, review counts, agreement with intervals, judge spec and prompt hash, inputs."""
    row = run_row(db, run)
    audit = audit_run(db, run)
    out = {
        "run": row["name"], "task": row["task"], "created": row["created"],
        "original": row["original_metrics"], "audited": audit.metrics,
        "reviews": audit.review_counts,
        "judge": {"spec": row["judge_spec"], **row["judge_identity"], "stats": row["summary"].get("judge", {})},
        "inputs": row["inputs"], "warnings": row["summary"].get("warnings", []),
    }
    if with_agreement:
        out["agreement"] = agreement(db, run)
    return out


def export_csv(db: Database, run: str) -> str:
    """One row per decision: judge label, each reviewer's label, effective label and where it came from."""
    rows = list(decisions(db, run))
    reviewers = sorted({r["reviewer"] for d in rows for r in d["reviews"]})
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["id", "doc", "kind", "type", "left", "right", "judge", *[f"human:{r}" for r in reviewers],
                "effective", "source", "notes"])
    for d in rows:
        notes = " | ".join(f"{r['reviewer']}: {r['note']}" for r in d["reviews"] if r["note"])
        w.writerow([d["id"], d["doc"], d["kind"], d["type"], d["left"], d["right"], d["judge"],
                    *[d["human"].get(r, "") for r in reviewers], d["effective"], d["source"], notes])
    return buf.getvalue()


_TEX = str.maketrans({"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "_": r"\_", "#": r"\#", "$": r"\$",
                      "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"})


def _tex(s: str) -> str:
    return s.translate(_TEX)


def export_latex(db: Database, run: str) -> str:
    """A booktabs table of original vs audited P / R / F1 per section and type."""
    data = export_json(db, run, with_agreement=False)
    lines = [r"\begin{tabular}{llrrrrrr}", r"\toprule",
             r" & & \multicolumn{3}{c}{Original} & \multicolumn{3}{c}{Audited} \\",
             r"Section & Type & P & R & F1 & P & R & F1 \\", r"\midrule"]
    for section, per_type in data["original"].items():
        if not isinstance(per_type, dict) or "avg" not in per_type:
            continue
        for t, o in per_type.items():
            a = data["audited"][section][t]
            lines.append(f"{_tex(section)} & {_tex(t)} & " + " & ".join(
                f"{100 * x:.1f}" for x in (o["precision"], o["recall"], o["f1"], a["precision"], a["recall"], a["f1"]))
                + r" \\")
    rc = data["reviews"]
    lines += [r"\bottomrule", r"\end{tabular}",
              f"% run {data['run']}; judge {data['judge']['spec']}; {rc['reviewed']} decisions reviewed, "
              f"{rc['overruled']} overruled, {rc['conflicted']} conflicted"]
    return "\n".join(lines) + "\n"


def export_run(db: Database, run: str, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(export_json(db, run), indent=1, ensure_ascii=False) + "\n"
    if fmt == "csv":
        return export_csv(db, run)
    if fmt == "latex":
        return export_latex(db, run)
    if fmt == "judgelog":
        task = get_task(run_row(db, run)["task"])
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in task.judge_log(list(decisions(db, run))))
    raise AuditError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
