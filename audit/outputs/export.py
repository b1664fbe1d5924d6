"""Exports of a run: JSON (original and audited metrics, review counts, agreement, judge, inputs), CSV of decisions,
a paper-ready LaTeX table, and the judge log. Every format reads one `audit.views.RunView`, so all of them apply
the same effective-label policy (`--policy`) and record it.

Everything the product writes is safe to open: CSV cells that a spreadsheet would run as a formula are
neutralised with a leading quote (`audit.outputs.cells.csv_cell`), and every string that reaches a .tex file is
escaped (`cells.tex`), so no run name, judge spec or span can become live LaTeX. Inputs are named, never given as
local paths.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from sqlite_utils import Database

from audit.effective import POLICIES, current_rows
from audit.errors import AuditError
from audit.learning import learning_status, learning_warning
from audit.numbers import count_noun
from audit.outputs.agreement import agreement
from audit.outputs.agreement_rule import Statistic, statistic_of
from audit.outputs.cells import rejudge_version, tex, tex_metric_number, tex_number, write_csv
from audit.outputs.estimate_text import (
    INTERVALS_EXPLAINED,
    EstimateLine,
    estimate_lines,
    export_estimates,
    interval_text,
)
from audit.outputs.stability import list_checks, stability_report
from audit.outputs.tex_ascii import ascii_tex
from audit.review.reviews import UNDO_NOTE
from audit.review.sampling import ALL_KINDS, estimate, plans
from audit.views import RunRef, RunView, as_view
from scoring.families.base import MetricCell
from scoring.judges.redact import public_field, redact_url
from scoring.stats.sampling import Plan

FORMATS = ("json", "csv", "latex", "judgelog")


def export_json(db: Database, run: RunRef, *, with_agreement: bool = True, policy: str | None = None) -> dict:
    """Original and audited metrics, review counts, agreement with intervals, judge spec and prompt hash, inputs
    (names and hashes), the sampling plans, the judge-stability checks (`stability`, None without any), the
    Rejudge version, export time and the effective-label policy (`policy`, else the view's, else the default).
    A judge improved on reviews carries `judge_learning` (`audit.learning.learning_status`); when one of those
    reviews was withdrawn or a decision it learnt has another label since, or improve-judge showed no improvement for
    it, the first warning says so (`audit.learning.learning_warning`)."""
    view = as_view(db, run, policy)
    row, audit, policy = view.row, view.audit, view.policy
    out = {
        "run": row["name"], "task": row["task"], "created": row["created"],
        "exported": datetime.now(UTC).isoformat(timespec="seconds"), "rejudge_version": rejudge_version(),
        "effective_label_policy": {"name": policy, "rule": POLICIES[policy]},
        "original": row["original_metrics"], "audited": audit.metrics,
        "reviews": audit.review_counts,
        "judge": {"spec": _public_spec(row["judge_spec"]), **public_identity(row["judge_identity"]),
                  "stats": row["summary"].get("judge", {})},
        "inputs": {k: ({"name": v.get("name"), **{f: v[f] for f in ("sha256", "bytes", "files") if f in v}}
                       if isinstance(v, dict) and "sha256" in v else v) for k, v in row["inputs"].items()},
        "warnings": row["summary"].get("warnings", []),
    }
    learning = learning_status(view.db, row["judge_identity"])
    if learning is not None:
        out["judge_learning"] = learning
        warning = learning_warning(learning)
        out["warnings"] = ([warning] if warning else []) + out["warnings"]
    if with_agreement:
        out["agreement"] = agreement(view.db, view)
    out["sampling"] = _sampling(view)
    out["stability"] = _stability(view)
    return out


def _stability(view: RunView) -> dict | None:
    """The run's judge-stability checks (`audit.outputs.stability`): each check, the flip rates and the share changed vs
    the run's label with Wilson intervals (overall and by kind, type, run label), and the unstable decisions with
    their labels per attempt. None when the run has no check."""

    if not list_checks(view.db, view):
        return None
    rep = stability_report(view.db, view)
    unstable = [{k: d[k] for k in ("id", "doc", "kind", "type", "left", "right", "run_label", "labels",
                                   "distribution", "flipped", "changed_vs_run")}
                for d in rep["decisions"] if d["flipped"] or d["changed_vs_run"]]
    return {"checks": rep["checks"], "decisions": len(rep["decisions"]), "flip_rate": rep["flip_rate"],
            "changed_vs_run": rep["changed_vs_run"], "question_flip_rate": rep["question_flip_rate"],
            "unstable_decisions": unstable}


def _sampling(view: RunView) -> dict:
    """Every sampling plan of the run (strata, seed, random ranks) with the estimates it gives now."""

    out = {}
    for kind, plan in plans(view.db, view).items():
        out[kind] = {"plan": plan, "estimate": estimate(view.db, view, None if kind == ALL_KINDS else kind,
                                                        plan=Plan.from_json(plan))}
    return out


def _public_spec(spec: str) -> str:
    """A judge spec without local folders (`replay:/home/x/log.jsonl` -> `replay:log.jsonl`)."""
    kind, _, arg = spec.partition(":")
    if kind == "replay" and arg:
        from pathlib import Path

        return f"replay:{Path(arg).name}"
    return spec


def public_identity(identity: dict) -> dict:
    """The judge identity as exported and shown (the overview page): no local folders, and the endpoint and the
    replay log's metadata redacted again (`scoring.judges.redact`), so a run stored before they were redacted shows
    and exports none of their secrets."""

    out = dict(identity)
    if "spec" in out:
        out["spec"] = _public_spec(str(out["spec"]))
    if isinstance(out.get("base_url"), str):
        out["base_url"] = redact_url(out["base_url"])
    if isinstance(out.get("source"), dict):
        out["source"] = {str(k): public_field(v) for k, v in out["source"].items()}
    return out


def export_csv(db: Database, run: RunRef, *, policy: str | None = None) -> str:
    """One row per decision: judge label, each reviewer's label (`human:NAME`), effective label, where it came from,
    the notes reviewers typed, the effective-label policy that gave it, who adjudicated it (`adjudicated_by`) and
    whether each reviewer's label was given blind (`blind:NAME`: yes / no; blind-only agreement is recomputable).
    A judge improved on reviews adds a `judge_learning` column (the same on every row, so a filtered sheet keeps
    it): what it learnt from, or the warning every surface shows (`audit.learning.learning_warning`) once the judge
    is stale or showed no improvement."""
    view = as_view(db, run, policy)
    rows = view.decisions()
    reviewers = sorted({r["reviewer"] for d in rows for r in d["reviews"] if r["role"] != "adjudicator"})
    learning = learning_status(view.db, view.row["judge_identity"])
    extra = [] if learning is None else [learning_warning(learning) or learning["text"]]
    out = []
    for d in rows:
        notes = " | ".join(f"{r['reviewer']}: {r['note']}" for r in d["reviews"]
                           if r["note"] and r["note"] != UNDO_NOTE)  # the notes people typed, not the undo marker
        blind = {r["reviewer"]: "yes" if r["blind"] else "no" for r in current_rows(d["reviews"])
                 if r["role"] != "adjudicator"}
        out.append([d["id"], d["doc"], d["kind"], d["type"], d["left"], d["right"], d["judge"],
                    *[d["human"].get(r, "") for r in reviewers], d["effective"], d["source"], notes, view.policy,
                    d["adjudicator"] or "", *[blind.get(r, "") for r in reviewers], *extra])
    return write_csv(["id", "doc", "kind", "type", "left", "right", "judge", *[f"human:{r}" for r in reviewers],
                      "effective", "source", "notes", "policy", "adjudicated_by", *[f"blind:{r}" for r in reviewers],
                      *(["judge_learning"] if extra else [])], out)


def _kappa_note(agr: dict) -> str:
    """The caption's agreement clause under `audit.outputs.agreement_rule`: the family's statistic (weighted for ordinal
    kinds), an undefined one in words, never as 0."""
    hvj = agr.get("human_vs_judge", {})
    if not hvj.get("all"):
        return "no human-vs-judge agreement yet"
    # where the family has trivial decisions (always a match), they are apart, so they cannot inflate the number
    head = "non-trivial" if (hvj.get("non-trivial") or {}).get("n") else "all"
    kinds = [g for g in hvj if "/" not in g and g not in ("all", "trivial", "non-trivial")]
    if hvj[head].get("mixed_labels"):  # kinds with different labels have no pooled κ: one clause per kind
        groups = [g for g in kinds if (hvj[g] or {}).get("n")] or [head]
    else:
        groups = [head]
        if statistic_of(hvj["all"]).key != "weighted_kappa":  # ordinal kinds get their own weighted clause
            groups += [g for g in kinds if statistic_of(hvj[g]).key == "weighted_kappa"]
    return "; ".join(_kappa_clause(g, statistic_of(hvj[g])) for g in groups)


def _kappa_clause(group: str, stat: Statistic) -> str:
    name = tex(stat.name).replace("κ", r"$\kappa$")
    where = "" if group == "all" else " (non-trivial decisions)" if group == "non-trivial" else f" ({tex(group)})"
    if not stat.defined:
        return f"human--judge {name}{where} undefined: {tex(stat.undefined)} (n = {stat.n})"
    interval = f" [{stat.ci[0]:.2f}, {stat.ci[1]:.2f}]" if stat.ci else ""
    few = f", {tex(stat.warning)}" if stat.warning else ""
    return f"human--judge {name}{where} = {stat.value:.2f}{interval} (n = {stat.n}, {stat.n_documents} documents{few})"


def _is_prf(row: dict) -> bool:
    return all(isinstance(row.get(k), int | float) or row.get(k) is None for k in ("precision", "recall", "f1")) \
        and any(k in row for k in ("precision", "recall", "f1"))


def latex_body(orig: list[dict], aud: list[dict]) -> list[str]:
    """The tabulars of the paper table, each narrow enough for one column: the rows with P / R / F1 as
    Section & Type & P R F1 original & P R F1 audited (percent, 8 columns), every other number of the family's
    rows one line each as Section & Type & Measure & Original & Audited (5 columns)."""
    lines: list[str] = []
    prf = [(o, a) for o, a in zip(orig, aud, strict=True) if _is_prf(o)]
    other = [(o, a) for o, a in zip(orig, aud, strict=True) if not _is_prf(o)]
    if prf:
        lines += [r"\begin{tabular}{llrrrrrr}", r"\toprule",
                  r" & & \multicolumn{3}{c}{Original} & \multicolumn{3}{c}{Reviewed so far} \\",
                  r"\cmidrule(lr){3-5}\cmidrule(lr){6-8}",
                  r"Section & Type & P & R & F1 & P & R & F1 \\", r"\midrule"]
        for o, a in prf:
            vals = [r.get(k) for r in (o, a) for k in ("precision", "recall", "f1")]
            cells = " & ".join("--" if v is None else f"{100 * v:.1f}" for v in vals)
            lines.append(f"{tex(o.get('section', ''))} & {tex(o.get('type', ''))} & {cells} \\\\")
        lines += [r"\bottomrule", r"\end{tabular}"]
    if other:
        keys = list(dict.fromkeys(k for o, _ in other for k, v in o.items() if k not in ("section", "type")
                                  and (isinstance(v, int | float) or v is None) and not isinstance(v, bool)))
        count = {k: all(float(r[k]).is_integer() for pair in other for r in pair
                        if isinstance(r.get(k), int | float)) for k in keys}
        lines += ([r"\par\medskip"] if prf else []) + [
            r"\begin{tabular}{lllrr}", r"\toprule", r"Section & Type & Measure & Original & Reviewed so far \\",
            r"\midrule"]
        for o, a in other:
            for k in keys:
                if k in o and (o[k] is not None or a.get(k) is not None):
                    name = f"{tex(o.get('section', ''))} & {tex(o.get('type', ''))} & {tex(k.replace('_', ' '))}"
                    values = " & ".join(tex_number(r.get(k), count=count[k]) for r in (o, a))
                    lines.append(f"{name} & {values} \\\\")
        lines += [r"\bottomrule", r"\end{tabular}"]
    return lines


def latex_estimates(lines: list[EstimateLine]) -> list[str]:
    """The tabular of the estimated full-review scores: metric, judge only, reviewed so far, the estimate and its
    two labelled 95% intervals (6 columns; a number no review changes says so instead of a zero-width interval)."""
    if not lines:
        return []
    out = [r"\begin{tabular}{lrrrrr}", r"\toprule",
           r"Metric & Judge only & Reviewed so far & Estimate & 95\% fixed-n & 95\% anytime \\", r"\midrule"]
    for e in lines:
        def one(v: object, cell: MetricCell = e.cell) -> str:
            return tex_metric_number(cell, v)
        if e.reviewable:
            fixed = interval_text(e.fixed_n, one) if e.fixed_n else "--"
            anytime = interval_text(e.anytime, one) if e.anytime else "--"
        else:
            fixed = anytime = r"\multicolumn{1}{c}{exact}"
        out.append(f"{tex(e.label)} & {one(e.judge_only)} & {one(e.reviewed_so_far)} & {one(e.estimate)} & "
                   f"{fixed} & {anytime} \\\\")
    return out + [r"\bottomrule", r"\end{tabular}"]


def _estimate_note(lines: list[EstimateLine], n_decisions_reviewed: int) -> str:
    """The caption's clause on what the table's numbers are: reviewed-so-far keeps the judge's label on
    unreviewed decisions; the estimate (with both intervals, labelled) is what a full human review would give."""
    so_far = "reviewed so far: the reviewers' labels where given, the judge's elsewhere"
    if not lines:
        return (f"{so_far}; no sampling plan, so no estimate of a full human review" if n_decisions_reviewed
                else so_far)
    target = next((e for e in lines if e.reviewable and e.estimate is not None), lines[0])
    n = target.n_sampled
    return (f"{so_far}; estimated full human review from {n} sampled documents: "
            f"{tex(target.words(lambda v: tex_metric_number(target.cell, v)))}; {tex(INTERVALS_EXPLAINED)}")


def export_latex(db: Database, run: RunRef, *, policy: str | None = None) -> str:
    """A booktabs table (caption, label) of original vs reviewed-so-far P / R / F1 per section and type, macro
    averages labelled, then (with a sampling plan) the estimated full-review headline scores with both labelled
    intervals; the effective-label policy, the estimate and the human-judge agreement in the caption. ASCII only
    (`audit.outputs.tex_ascii`), so pdflatex compiles it whatever the text carries. Needs \\usepackage{booktabs}."""
    view = as_view(db, run, policy)
    data = export_json(view.db, view)
    task = view.task
    orig, aud = task.metric_rows(data["original"]), task.metric_rows(data["audited"])
    rc = data["reviews"]
    est = estimate_lines(task, export_estimates(data))
    label = "tab:rejudge-" + "".join(c if c.isascii() and c.isalnum() else "-" for c in data["run"])[:60]
    learnt = data.get("judge_learning") or {}
    stale = (" (STALE: improved on reviews that changed since)" if learnt.get("stale") else
             " (improved on reviews, but improve-judge showed no improvement)" if learnt.get("not_improved") else "")
    caption = (f"{tex(task.title)}: original (judge only) vs audited scores, judge {tex(data['judge']['spec'])}"
               f"{stale}; "
               f"{count_noun(rc['reviewed'], 'decision')} reviewed, {rc['overruled']} overruled (effective labels: "
               f"{tex(view.policy)} policy); {_estimate_note(est, rc['reviewed'])}; {_kappa_note(data['agreement'])}.")
    lines = [r"% Rejudge export. Needs \usepackage{booktabs}.", r"\begin{table}[t]", r"\centering",
             r"\small"]
    lines += latex_body(orig, aud)
    lines += ([r"\par\medskip"] if est else []) + latex_estimates(est)
    lines += [f"\\caption{{{caption}}}", f"\\label{{{label}}}", r"\end{table}"]
    return ascii_tex("\n".join(lines) + "\n")


def export_run(db: Database, run: RunRef, fmt: str, *, policy: str | None = None) -> str:
    """The run in format `fmt` (`FORMATS`) under the effective-label `policy` (else the view's, else the
    default)."""
    if fmt not in FORMATS:
        raise AuditError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
    view = as_view(db, run, policy)
    if fmt == "json":
        return json.dumps(export_json(view.db, view), indent=1, ensure_ascii=False) + "\n"
    if fmt == "csv":
        return export_csv(view.db, view)
    if fmt == "latex":
        return export_latex(view.db, view)
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in view.task.judge_log(view.decisions()))
