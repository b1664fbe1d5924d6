"""The audit report: one self-contained HTML file (and, for a paper, every figure as SVG and PDF beside the LaTeX
table) built from ONE run view and its JSON export, so the report's numbers are the export's.

Sections: 1 headline (judge only vs audited or estimated, with the judge's bias), 2 where the judge erred, 3
coverage, 4 agreement with the human-human ceiling, 5 the family's own panel (its view's `report_panel`, handed in
by the caller: the report names no family), 6 provenance. Figures come from `audit.outputs.figures`, the builders
the dashboard pages use.

Safety: the file loads nothing (Vega, Vega-Lite and vega-embed are inlined; a Content-Security-Policy refuses every
request and runs only the report's own two scripts, by hash), every text from the data goes through `html.escape`,
and the data embedded for the charts (and for a reader or test to parse back: `<script type="application/json"
id="rejudge-data">`) has `<`, `>` and `&` written as JSON escapes, so no text from the data can close the script
element.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from audit.board.report import board_parts, boards_estimating, boards_estimating_text
from audit.output_paths import OutputRule
from audit.outputs import figures
from audit.outputs.agreement import agreement as compute_agreement
from audit.outputs.agreement import raw_agreement_interval
from audit.outputs.agreement_rule import (
    MIN_DECISIONS,
    MIN_DOCUMENTS,
    MINIMUM_SOURCE,
    alpha_statistic,
    any_settled,
    group_title,
    statistic_of,
)
from audit.outputs.estimate_text import (
    ANYTIME,
    FIXED_N,
    INTERVALS_EXPLAINED,
    NOT_REVIEWABLE,
    estimate_lines,
    export_estimates,
)
from audit.outputs.export import export_json, export_latex
from audit.outputs.visible import visible
from audit.review.assigned_review import planned_overlap_text
from audit.review.sampling import ALL_KINDS, estimate, plans
from audit.views import RunView

DATA_ELEMENT_ID = "rejudge-data"
EXAMPLES = 8
"""Overruled decisions shown as examples."""


@dataclass
class Figure:
    name: str
    """A slug: the chart's element id (`fig-NAME`) and its file name under --figures."""
    title: str
    spec: dict
    """The Vega-Lite spec (`chart.to_dict()`), data inline."""
    caption: str = ""


@dataclass
class Section:
    title: str
    body: list[str] = field(default_factory=list)
    """HTML fragments, every data text already escaped; a figure is placed with `Figure` objects in `figures`."""
    figures: list[Figure] = field(default_factory=list)


@dataclass
class Report:
    run: str
    task_title: str
    data: dict
    """The run's JSON export (`audit.outputs.export.export_json`): every number the report shows comes from it."""
    sections: list[Section]

    @property
    def figures(self) -> list[Figure]:
        return [f for s in self.sections for f in s.figures]


# ---------------------------------------------------------------- small HTML helpers (everything escaped)


NOTE_CHARS = 400
"""Notes longer than this are cut in the report's tables (a 4,600-character note squeezed its row's other columns to
a few characters a line); the decisions CSV export holds them whole."""


def shortened(text: str, limit: int = NOTE_CHARS) -> str:
    """`text`, or its first `limit` characters and what was left out.

    >>> shortened("x" * 500)[-65:]
    '… (500 characters; the decisions CSV export holds the whole note)'
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters; the decisions CSV export holds the whole note)"


def esc(value: object) -> str:
    """Text from the data as HTML: escaped, its invisible and bidi-override characters shown (`visible`)."""
    return html.escape("" if value is None else visible(value), quote=True)


def num(value: object, digits: int = 4) -> str:
    if value is None or isinstance(value, float) and not math.isfinite(value):
        return "—"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return esc(value)
    return str(value) if isinstance(value, int) else f"{value:.{digits}f}"


def interval(ci: Sequence | None, digits: int = 4) -> str:
    return f"[{num(ci[0], digits)}, {num(ci[1], digits)}]" if ci else "—"


_NUMBER = re.compile(r"[-+]?\d[\d.,]*( %| pt)?")


def table(header: Sequence[str], rows: Sequence[Sequence[object]], *, numeric: bool = True) -> str:
    """An HTML table; numbers formatted by `num`, every other cell escaped."""
    def cell(v: object) -> str:
        return num(v) if numeric and isinstance(v, int | float) and not isinstance(v, bool) else esc(v)

    def td(v: object) -> str:
        text = cell(v)  # a number never breaks inside ("0.821 / 9" in a narrow column); other text may anywhere
        return f'<td class="num">{text}</td>' if _NUMBER.fullmatch(text) else f"<td>{text}</td>"

    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(td(v) for v in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def para(text: str) -> str:
    return f"<p>{esc(text)}</p>"


def _figure(name: str, title: str, chart: object, caption: str = "") -> Figure:
    # no JSON-schema validation: the charts are built by our own code, and validating them was a sixth of the
    # report's CPU (the spec is the same; #38)
    return Figure(name, title, chart.to_dict(validate=False), caption)  # type: ignore[attr-defined]


figure = _figure
"""A chart as a report `Figure` (public: a family view's `report_panel` draws with it)."""


# ---------------------------------------------------------------- building


def build_report(view: RunView, panel: FamilyPanel | None = None) -> Report:
    """The report of the run as `view` sees it (its policy): its JSON export read once, sections built from it and
    from the view's reviews (no second scoring, no second agreement computation). `panel`: the family's own
    section (its view's `report_panel`, `ui.families.report_panel(task)`); the report names no family."""
    data = export_json(view.db, view)
    sections = [_headline(view, data), _errors(view, data), _coverage(view, data), _agreement(view, data)]
    family = panel(view, data) if panel is not None else None
    if family is not None:
        sections.append(Section(f"5. {view.task.title}: {family.title}", family.body, family.figures))
    sections.append(_provenance(view, data, family))
    sections += [Section(f"{n}. {b.title}", b.body, [Figure(*f) for f in b.figures])
                 for n, b in enumerate(board_parts(view), start=7)]
    return Report(view.name, view.task.title, data, sections)


def _headline_estimates(data: Mapping) -> dict:
    """The sample estimates in an export (`audit.outputs.estimate_text.export_estimates`)."""
    return export_estimates(data)


def sample_estimates(view: RunView) -> dict:
    """The headline estimates the run's sampling plan gives now, chosen as `_headline_estimates` chooses them from
    the export (the plan over all decision kinds, else the first): {} without a plan."""

    found = plans(view.db, view)
    if not found:
        return {}
    kind = ALL_KINDS if ALL_KINDS in found else next(iter(found))
    return estimate(view.db, view, None if kind == ALL_KINDS else kind)


# ---------------------------------------------------------------- chart data, shared with the dashboard pages


def headline_points(view: RunView, estimates: Mapping | None = None) -> tuple[list[dict], list[dict]]:
    """(headline points, bias rows) of `figures.headline_intervals` and `figures.bias_intervals`: per headline
    metric the judge-only and audited values, and the sample estimate with its interval when the run has a sampling
    plan; the bias is judge only − estimate (with its interval) or judge only − audited.

    `estimates`: the plan's estimates when the caller has them already (the report: from the export; the Scores
    page: the ones it tabulates), else computed here (`sample_estimates`)."""
    estimates = sample_estimates(view) if estimates is None else estimates
    original, audited = view.row["original_metrics"], view.audit.metrics
    reviewed = view.audit.review_counts["reviewed"]
    points, bias = [], []
    for cell in view.task.headline:
        o, a = cell.value(original), cell.value(audited)
        if o is None and a is None:
            continue
        bounds = view.task.metric_bounds(cell)
        points.append({"label": cell.label, "series": "judge only", "value": o, "low": None, "high": None, "n": None,
                       "bounds": bounds})
        points.append({"label": cell.label, "series": "audited", "value": a, "low": None, "high": None,
                       "n": reviewed, "bounds": bounds})
        est = estimates.get("/".join(cell.path))
        if est and est.get("estimate") is not None:
            ci = est.get("ci") or (None, None)
            points.append({"label": cell.label, "series": "estimated", "value": est["estimate"], "low": ci[0],
                           "high": ci[1], "n": est.get("n_reviewed"), "bounds": bounds})
            if est.get("bias") is not None:
                bci = est.get("bias_ci") or (None, None)
                bias.append({"label": cell.label, "value": est["bias"], "low": bci[0], "high": bci[1],
                             "n": est.get("n_reviewed"), "against": "estimate"})
        elif o is not None and a is not None and reviewed:
            bias.append({"label": cell.label, "value": o - a, "low": None, "high": None,
                         "n": reviewed, "against": "audited (reviewed so far)"})
    return points, bias


def per_type_rows(view: RunView) -> pd.DataFrame:
    """section, type, f1, f1 audited of the family's metric rows that have an F1 (empty otherwise): the rows of
    `figures.original_vs_audited`."""
    orig, aud = view.task.metric_rows(view.row["original_metrics"]), view.task.metric_rows(view.audit.metrics)
    rows = [{"section": o.get("section", ""), "type": o.get("type", ""), "f1": o["f1"], "f1 audited": a.get("f1")}
            for o, a in zip(orig, aud, strict=True) if isinstance(o.get("f1"), int | float)
            and isinstance(a.get("f1"), int | float)]
    return pd.DataFrame(rows, columns=["section", "type", "f1", "f1 audited"])


def agreement_points(view: RunView, agreement: Mapping | None = None) -> list[dict]:
    """The rows of `figures.agreement_intervals`: human vs judge kappa (weighted kappa for ordinal kinds) per group,
    the human-human pairs' kappa and Krippendorff's alpha over all reviewers (the ceiling).

    `agreement`: `audit.outputs.agreement.agreement` of the view when the caller has it (the report: from the export;
    the
    Agreement page: its cached one), else computed here."""
    if agreement is None:

        agreement = compute_agreement(view.db, view)
    hvj = agreement.get("human_vs_judge", {})
    hvh = agreement.get("human_vs_human", {})
    def title(group: str) -> str:
        return group_title(view.task, group)

    rows = (figures.kappa_rows(hvj, "human vs judge", title)
            + figures.kappa_rows(hvh.get("pairs", {}), "human vs human"))
    for group, a in alpha_groups_of(agreement).items():
        stat = alpha_statistic(a)
        if stat.defined:
            rows.append({"label": f"{title(group)} ({stat.name}, all reviewers)", "series": "human vs human",
                         "value": stat.value, "low": None, "high": None, "n": stat.n})
    return rows


def alpha_groups_of(agreement: Mapping) -> dict[str, Mapping]:
    """Krippendorff's α per group (`alpha_by_group`), or the one pooled α of an older export."""
    hvh = agreement.get("human_vs_human", {})
    by_group = hvh.get("alpha_by_group")
    if by_group:
        return dict(by_group)
    alpha = hvh.get("alpha") or {}
    return {"all": alpha} if alpha else {}


def _headline(view: RunView, data: Mapping) -> Section:
    s = Section("1. Headline: judge only vs audited")
    estimates = _headline_estimates(data)
    points, bias = headline_points(view, estimates)
    rc = data["reviews"]
    lines = {e.label: e for e in estimate_lines(view.task, estimates)}
    estimated = any(p["series"] == "estimated" for p in points)
    basis = next((e["documents"] for e in estimates.values() if e.get("documents")), None)
    s.body.append(para(f"{rc['reviewed']} of {view.row['n_decisions']} decisions reviewed, {rc['overruled']} "
                       f"overruled. 'Audited' (reviewed so far) applies the reviewers' labels to the reviewed "
                       f"decisions and keeps the judge's label elsewhere" + (
                           "; the estimate is what a full human review would give, estimated from the sampled "
                           f"reviews, with two 95% intervals ({INTERVALS_EXPLAINED})." if lines else
                           "; the run has no sampling plan, so there is no estimate of a full human review (create "
                           "one with the command python -m audit plan, then review through the sample queue)" + (
                               f"; but {on_board}." if (on_board := boards_estimating_text(
                                   boards_estimating(view.db, view.name))) else "."))))
    target = next((e for e in lines.values() if e.reviewable and e.estimate is not None), None)
    if target is not None:
        rests_on = basis or f"{target.n_sampled} sampled documents"
        s.body.append(para(f"Estimated full review: {target.words()}, from {rests_on}."))
    by_label = {}
    for p in points:
        by_label.setdefault(p["label"], {})[p["series"]] = p
    rows = []
    for label, d in by_label.items():
        e = lines.get(label)
        b = next((x for x in bias if x["label"] == label), None)
        if e is None:
            fixed = anytime = "—"
        elif not e.reviewable:
            fixed = anytime = "exact"
        else:
            fixed = interval(e.fixed_n) if e.fixed_n else e.note or "—"
            anytime = interval(e.anytime) if e.anytime else e.note or "—"
        rows.append([label, d["judge only"]["value"], d["audited"]["value"],
                     "—" if e is None else num(e.estimate), fixed, anytime,
                     "—" if b is None else f"{num(b['value'])} (exact)" if e is not None and not e.reviewable
                     else num(b["value"]) + (f" {interval((b['low'], b['high']))}" if b["low"] is not None else "")])
    s.body.append(table(["metric", "judge only", "audited (reviewed so far)", "estimate", FIXED_N, ANYTIME,
                         "judge bias"], rows))
    exact = [e.label for e in lines.values() if not e.reviewable]
    if exact:
        s.body.append(para(f"Exact: {', '.join(exact)}: {NOT_REVIEWABLE.removeprefix('exact: ')}."))
    if points:
        s.figures.append(_figure("headline", "Headline metrics", figures.headline_intervals(points),
                                 "Judge only vs audited" + (" vs estimated (95% fixed-n interval)" if estimated
                                                            else "")))
    if bias:
        s.figures.append(_figure("bias", "The judge's bias", figures.bias_intervals(bias),
                                 "Judge only minus " + bias[0]["against"] + "; 0 = no bias."))
    rows_df = per_type_rows(view)
    for i, section in enumerate(dict.fromkeys(rows_df["section"])):
        s.figures.append(_figure(f"per-type-{i}", f"F1 per type: {section}",
                                 figures.original_vs_audited(rows_df, section), f"{section}: original vs audited F1"))
    return s


def _settled(view: RunView) -> list[tuple[dict, object]]:
    """(decision row, effective label) of every reviewed decision, in id order."""
    return [(view.reviewed.rows[i], e) for i, e in sorted(view.effective.items()) if e.reviewed]


settled_decisions = _settled
"""Public: the reviewed decisions with their effective labels, for a family view's `report_panel`."""


def _errors(view: RunView, data: Mapping) -> Section:
    s = Section("2. Where the judge erred")
    hvj = data["agreement"].get("human_vs_judge", {})
    kinds = [k for k in view.task.label_schemes if k in hvj]
    for i, kind in enumerate(kinds):
        conf = hvj[kind].get("confusion")
        if conf and conf.get("labels"):
            name = view.task.kind_title(kind)
            s.figures.append(_figure(f"confusion-{i}", f"Confusion: {name}", figures.confusion_heatmap(
                conf, row_title="human", col_title="judge", title=name),
                f"{name}: effective human label (rows) vs the judge's (columns), n = {hvj[kind]['n']}"))
    settled = _settled(view)
    overruled = [(d, e) for d, e in settled if e.label != d["judge_label"]]
    if not settled:
        s.body.append(para("No decision has been reviewed yet: nothing shows where the judge erred."))
        return s
    moves = Counter((d["kind"], d["judge_label"], e.label) for d, e in overruled)
    if moves:
        s.body.append("<h3>Overrules by direction</h3>")
        s.body.append(table(["decision kind", "judge said", "reviewers said", "decisions"],
                            [[view.task.kind_title(k), j, h, n] for (k, j, h), n in sorted(moves.items())]))
    strata = _unit_strata(data, {str(d["id"]) for d, _ in settled})
    if _stratum_sizes(data):
        per = Counter((strata.get(str(d["id"]), "not in the plan"), e.label == d["judge_label"]) for d, e in settled)
        names = sorted({h for h, _ in per})
        s.body.append("<h3>Per stratum of the sampling plan</h3>")
        s.body.append(table(["stratum", "reviewed", "confirmed", "overruled"],
                            [[h, per[(h, True)] + per[(h, False)], per[(h, True)], per[(h, False)]] for h in names]))
        for i, (name, conf) in enumerate(stratum_confusions(view, strata).items()):
            s.body.append(f'<h3 class="stratum-confusion">Stratum {esc(name)}: audited (rows) vs judge (columns)</h3>')
            s.body.append(table(["audited \\ judge", *conf["labels"]],
                                [[h, *counts] for h, counts in zip(conf["labels"], conf["counts"], strict=True)]))
            s.figures.append(_figure(f"confusion-stratum-{i}", f"Confusion: stratum {name}", figures.confusion_heatmap(
                conf, row_title="audited", col_title="judge", title=f"stratum {name}"),
                f"Stratum {name}: effective label (rows) vs the judge's (columns) of its reviewed decisions"))
    s.body.append(f"<h3>First overruled decisions ({min(EXAMPLES, len(overruled))} of {len(overruled)})</h3>")
    if overruled:
        notes = view.reviews
        rows = [[d["id"], d["doc_id"], view.task.kind_title(d["kind"]), d["type"], d["left"], d["right"],
                 d["judge_label"], e.label,
                 shortened(" | ".join(f"{r['reviewer']}: {r['note']}" for r in notes.get(d["id"], [])
                                      if r.get("note")))]
                for d, e in overruled[:EXAMPLES]]
        s.body.append(table(["id", "document", "kind", "type", "left", "right", "judge", "audited", "notes"], rows,
                            numeric=False))
    else:
        s.body.append(para("Every reviewed decision confirmed the judge."))
    return s


def stratum_confusions(view: RunView, strata: Mapping[str, str]) -> dict[str, dict]:
    """Per stratum of the sampling plan (`_unit_strata`), the confusion of its reviewed decisions: effective label
    (rows) vs the judge's (columns), labels in the decision kinds' scheme order; {stratum: {labels, counts}}."""
    order = [lab for sc in view.task.label_schemes.values() for lab in (*sc.labels, *sc.judge_only, sc.invalid)]
    cells: dict[str, Counter] = {}
    for d, e in _settled(view):
        stratum = strata.get(str(d["id"]))
        if stratum is not None:
            cells.setdefault(stratum, Counter())[(e.label, d["judge_label"])] += 1
    out = {}
    for stratum in sorted(cells):
        used = {x for pair in cells[stratum] for x in pair}
        labels = [lab for lab in dict.fromkeys(order) if lab in used] + sorted(used - set(order), key=str)
        out[stratum] = {"labels": labels, "counts": [[cells[stratum][(h, j)] for j in labels] for h in labels]}
    return out


def _unit_strata(data: Mapping, wanted: set[str] | None = None) -> dict[str, str]:
    """Decision id -> stratum, from the run's sampling plans (empty without a plan); `wanted`: of these ids only (a
    plan lists every decision of the run, 683,000 on a 10,000-query retrieval run: #38)."""
    out = {}
    for s in data.get("sampling", {}).values():
        for b in s["plan"].get("blocks", []):
            units = map(str, b["units"])
            for u in (units if wanted is None else wanted.intersection(units)):
                out[u] = b["stratum"]
    return out


def _stratum_sizes(data: Mapping) -> Counter:
    """Decisions per stratum of the run's sampling plans (a decision in two plans counts in the later's stratum,
    as `_unit_strata` maps it); empty without a plan."""
    found = list(data.get("sampling", {}).values())
    if len(found) != 1:
        return Counter(_unit_strata(data).values())
    sizes: Counter = Counter()
    for b in found[0]["plan"].get("blocks", []):
        if b["units"]:  # a plan lists each decision once
            sizes[b["stratum"]] += len(b["units"])
    return sizes


def _coverage(view: RunView, data: Mapping) -> Section:
    s = Section("3. Coverage: what humans looked at")
    counts = view.review_counts_by_type()
    rows = [{"group": group_title(view.task, f"{c['kind']}/{c['type']}" if c["type"] else c["kind"]),
             "reviewed": c["reviewed"], "total": c["decisions"]} for c in counts]
    total = sum(c["decisions"] for c in counts)
    reviewed = sum(c["reviewed"] for c in counts)
    s.body.append(para(f"{reviewed} of {total} decisions reviewed ({100 * reviewed / total:.1f}%)." if total else
                       "This run has no decisions."))
    if rows:
        s.figures.append(_figure("coverage", "Decisions reviewed per kind and type", figures.coverage_bars(rows),
                                 "Decisions reviewed of N, per decision kind and type"))
    by = _stratum_sizes(data)
    if by:
        settled = {str(d["id"]) for d, _ in _settled(view)}
        done = Counter(_unit_strata(data, settled).values())
        srows = [{"group": h, "reviewed": done[h], "total": n} for h, n in sorted(by.items())]
        s.figures.append(_figure("coverage-strata", "Decisions reviewed per stratum", figures.coverage_bars(srows),
                                 "Decisions of the sampling plan reviewed of N, per stratum"))
    modes: Counter = Counter()
    for revs in view.reviews.values():
        for r in revs:
            mode = "adjudicator" if r.get("role") == "adjudicator" else "blind" if r.get("blind") else "sighted"
            modes[(r["reviewer"], mode)] += 1
    if modes:
        rrows = [{"reviewer": w, "mode": m, "reviews": n} for (w, m), n in sorted(modes.items())]
        s.body.append(table(["reviewer", "mode", "review rows"], [[r["reviewer"], r["mode"], r["reviews"]]
                                                                   for r in rrows]))
        s.figures.append(_figure("reviewers", "Reviews per reviewer", figures.reviewer_bars(rrows),
                                 "Review rows per reviewer, blind vs sighted"))
    else:
        s.body.append(para("No reviewer has labelled a decision yet."))
    return s


def _agreement(view: RunView, data: Mapping) -> Section:
    s = Section("4. Agreement: humans vs the judge, and humans with each other")
    agr = data["agreement"]
    hvj = agr.get("human_vs_judge", {})
    pairs = agr.get("human_vs_human", {}).get("pairs", {})
    overlap = agr.get("planned_overlap")
    if overlap:  # the overlap planned before review (the Agreement page's own sentence), reviews or not
        s.body.append(para(planned_overlap_text(overlap)))
    if not any_settled(hvj) and not pairs:
        s.body.append(para("No reviews yet: no agreement to report."))
        return s
    s.body.append(para(f"Unit: {agr.get('unit', '')}; reviews used: {agr.get('reviews_used', '')}; "
                       f"{agr.get('excluded_conflicted', 0)} conflicted and {agr.get('excluded_judge_invalid', 0)} "
                       "judge-invalid decisions left out. Intervals: 95% bootstrap resampling documents."))
    if agr.get("learnt_in_sample"):
        s.body.append(para(f"In-sample: {agr['learnt_in_sample']['text']}."))
    rows = []
    planned_pairs = (overlap or {}).get("human_vs_human", {}).get("pairs", {})
    for which, groups in (("human vs judge", hvj), ("human vs human", pairs),
                          ("human vs human, planned overlap", planned_pairs)):
        for g, st in groups.items():
            stat = statistic_of(st)
            raw_ci, how = raw_agreement_interval(st)
            rows.append([which, g, st.get("n"), st.get("n_clusters"), stat.name, stat.text(3),
                         f"{num(st.get('raw_agreement'), 3)} {interval(raw_ci, 3)}"
                         + ("" if how.startswith("bootstrap") or raw_ci is None else f" ({how})"),
                         stat.warning or stat.ci_undefined or ""])
    s.body.append(table(["compared", "group", "n", "documents", "statistic", "value [95%]", "raw agreement [95%]",
                         "note"], rows))
    if any(r[-1].startswith("few reviews") for r in rows):
        s.body.append(para(f"Few reviews: below {MIN_DECISIONS} decisions or {MIN_DOCUMENTS} documents; "
                           f"{MINIMUM_SOURCE}."))
    for group, a in alpha_groups_of(agr).items():
        stat = alpha_statistic(a)
        s.body.append(para(f"{stat.name} over all reviewers, {group}: {stat.text(3)} on {stat.n} decisions with two "
                           f"or more labels." + (f" {stat.warning}" if stat.warning else "")))
    if overlap and overlap["human_vs_human"].get("alpha"):
        s.body.append(para(f"Krippendorff's α on the planned overlap alone: "
                           f"{alpha_statistic(overlap['human_vs_human']['alpha']).text(3)}."))
    points = agreement_points(view, agr)
    if points:
        s.figures.append(_figure("agreement", "Agreement with intervals", figures.agreement_intervals(points),
                                 "Human vs judge beside the human-human ceiling (95% intervals)"))
    return s


# ---------------------------------------------------------------- the family's own section


FamilyPanel = Callable[[RunView, Mapping], "Section | None"]
"""A family's report section (its view's `report_panel`): built from the run view and its export, titled by what
it shows; None when the export lacks it."""


def _provenance(view: RunView, data: Mapping, family: Section | None) -> Section:
    s = Section("6. Provenance")
    inputs = [[k, v.get("name"), v.get("sha256"), v.get("bytes"), v.get("files", "")] if isinstance(v, Mapping)
              else [k, json.dumps(v, ensure_ascii=False), "", "", ""] for k, v in data["inputs"].items()]
    s.body.append(table(["input", "name", "SHA-256", "bytes", "files"], inputs, numeric=False))
    judge = {k: v for k, v in data["judge"].items() if k != "stats"}
    s.body.append(table(["judge field", "value"], [[k, v if isinstance(v, str | int | float) else
                                                    json.dumps(v, ensure_ascii=False)] for k, v in judge.items()],
                        numeric=False))
    pol = data["effective_label_policy"]
    facts = [["run", data["run"]], ["task", view.task.title], ["scored", data["created"]],
             ["report made", data["exported"]], ["Rejudge version", data["rejudge_version"]],
             ["effective-label policy", f"{pol['name']}: {pol['rule']}"]]

    for kind, smp in data.get("sampling", {}).items():
        plan = smp["plan"]
        strata = Counter(b["stratum"] for b in plan.get("blocks", []))
        facts.append([f"sampling plan ({'all kinds' if kind == ALL_KINDS else kind})",
                      f"seed {plan.get('seed')}, {len(plan.get('blocks', []))} blocks, strata "
                      + ", ".join(f"{h}: {n}" for h, n in sorted(strata.items()))
                      + (f"; {plan.get('design')}" if plan.get("design") else "")])
    if not data.get("sampling"):
        facts.append(["sampling plan", "none (no estimate of a full review)"])
    s.body.append(table(["fact", "value"], facts, numeric=False))
    s.body.append("<h3>What is not the paper's number</h3>")
    notes = ["'Judge only' is the benchmark's scorer with the judge's answers: the number a paper would print. "
             "'Audited' replaces the reviewed decisions' labels by the reviewers' (under the policy above): it is "
             "not the paper's number."]
    if data.get("sampling"):
        notes.append("'Estimated' numbers are estimates of a full human review from a random sample, with 95% "
                     "intervals: neither the paper's nor a measured number.")
    if family is not None:
        notes.append(f"The family panel ({family.title}) shows variants beside the official scorer; only the "
                     "official one is the paper's.")
    notes += [f"warning: {w}" for w in data.get("warnings", [])]
    extra = data["original"].get("notes")
    if isinstance(extra, list):
        notes += [str(n) for n in extra]
    s.body.append("<ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    return s


# ---------------------------------------------------------------- rendering


def _vl_version() -> str | None:
    """The Vega-Lite version Altair writes specs for, as vl-convert names it (e.g. '6.4'), if it has it."""
    import altair as alt
    import vl_convert

    want = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    return want if want in vl_convert.get_vegalite_versions() else None


def javascript_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script (window.vegaEmbed), cached on disk per vl-convert version: it
    takes vl-convert several seconds to build."""
    import vl_convert

    version = _vl_version()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rejudge"
    path = cache / f"vega-bundle-{getattr(vl_convert, '__version__', 'x')}-{version}.js"
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        pass
    text = vl_convert.javascript_bundle(vl_version=version)
    try:
        cache.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # an unwritable cache only costs time
    return text


def script_json(obj: object) -> str:
    """JSON safe inside a <script> element: `<`, `>`, `&` (and the JS line separators) as \\u escapes."""
    try:  # most reports hold no NaN: JSON's own walk (in C) is then the whole work (a plan's 32,000 blocks, #38)
        text = json.dumps(obj, ensure_ascii=False, allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(obj), ensure_ascii=False, allow_nan=False)
    for c in "<>&\u2028\u2029":
        text = text.replace(c, f"\\u{ord(c):04x}")
    return text


_PLAIN = frozenset({str, int, bool, type(None)})
"""Types `_finite` returns as they are, tested by exact type before any call: a sampling plan's list of 683,000
unit ids made one call per id most of a 10,000-query report's time (#38)."""


def _key(k: object) -> str:
    """A mapping key as `json.dumps` writes it (True -> "true", None -> "null"): both paths of `script_json` agree."""
    return k if isinstance(k, str) else json.dumps(k)


def _finite(obj: object) -> object:
    """NaN and infinities (which JSON cannot hold) as null."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, Mapping):
        return {_key(k): v if type(v) in _PLAIN else _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [v if type(v) in _PLAIN else _finite(v) for v in obj]
    return obj


CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f8fafc;color:#0f172a}
main{max-width:1180px;margin:0 auto;padding:24px 32px 48px;background:#fff}
h1{font-size:1.6rem;margin:0 0 4px}h2{font-size:1.25rem;margin:32px 0 8px;border-bottom:1px solid #e2e8f0;
padding-bottom:4px}h3{font-size:1rem;margin:18px 0 6px}
p.sub{color:#475569;margin:0 0 16px}
p.warn{background:#fef3c7;border-left:4px solid #d97706;padding:6px 10px}
table{border-collapse:collapse;margin:8px 0 12px;font-size:.85rem;max-width:100%}
th,td{border:1px solid #e2e8f0;padding:3px 8px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{overflow-wrap:normal}
td.num{overflow-wrap:normal;white-space:nowrap}
th{background:#f1f5f9}
figure{margin:12px 0 20px}figcaption{color:#475569;font-size:.85rem;margin-top:4px}
.figs{display:flex;flex-wrap:wrap;gap:24px 40px}
"""

def script_hash(script: str) -> str:
    """The CSP source that allows exactly this inline script: `'sha256-<base64 of its UTF-8 digest>'`."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii") + "'"


def content_security_policy(*scripts: str) -> str:
    """The report's Content-Security-Policy: nothing is fetched (the page works offline), and the only scripts that
    run are the report's own, allowed by their hashes; no 'unsafe-inline' for script, so an inline `<script>` or
    event handler that escaped the escaping would not run either. 'unsafe-eval' stays: Vega compiles its
    expressions with `new Function`. Styles may be inline (Vega sets them on the charts it draws)."""
    return (f"default-src 'none'; script-src {' '.join(script_hash(x) for x in scripts)} 'unsafe-eval'; "
            "style-src 'unsafe-inline'; img-src data: blob:; font-src data:; base-uri 'none'; form-action 'none'")

RENDER = """
const payload = JSON.parse(document.getElementById("DATA_ID").textContent);
for (const [name, spec] of Object.entries(payload.figures)) {
  vegaEmbed("#fig-" + name, spec, {renderer: "svg", actions: false}).catch(e => {
    document.getElementById("fig-" + name).textContent = "chart failed: " + e;
  });
}
""".replace("DATA_ID", DATA_ELEMENT_ID)


def report_html(report: Report) -> str:
    """The report as one HTML document that opens offline."""
    parts = [f"<h1>Audit report: {esc(report.run)}</h1>",
             f'<p class="sub">{esc(report.task_title)} · judge {esc(report.data["judge"].get("spec"))} · policy '
             f'{esc(report.data["effective_label_policy"]["name"])} · Rejudge {esc(report.data["rejudge_version"])}'
             f' · {esc(report.data["exported"])}</p>']
    learning = report.data.get("judge_learning")
    if learning and learning["stale"]:
        parts.append(f'<p class="warn"><strong>Stale judge:</strong> {esc(learning["text"])}.</p>')
    for s in report.sections:
        parts.append(f"<section><h2>{esc(s.title)}</h2>")
        parts += s.body
        if s.figures:
            parts.append('<div class="figs">')
            for f in s.figures:
                parts.append(f'<figure><div class="chart" id="fig-{esc(f.name)}"></div>'
                             f"<figcaption>{esc(f.caption or f.title)}</figcaption></figure>")
            parts.append("</div>")
        parts.append("</section>")
    payload = {"run": report.run, "export": report.data, "figures": {f.name: f.spec for f in report.figures}}
    bundle = javascript_bundle().replace("</script", "<\\/script")
    csp = content_security_policy(bundle, RENDER)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
            f"<title>Audit report: {esc(report.run)}</title><style>{CSS}</style></head><body><main>"
            + "\n".join(parts)
            + f'</main><script type="application/json" id="{DATA_ELEMENT_ID}">{script_json(payload)}</script>'
            + f"<script>{bundle}</script><script>{RENDER}</script></body></html>\n")


def _figure_files(report: Report, view: RunView, folder: str | Path) -> list[tuple[Path, str | bytes]]:
    """Every figure as NAME.svg and NAME.pdf, and the LaTeX table (`table.tex`), rendered for `folder` (the folder
    is made; nothing is written into it)."""
    import vl_convert

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    version = _vl_version()
    files: list[tuple[Path, str | bytes]] = []
    for f in report.figures:
        files += [(out / f"{f.name}.svg", vl_convert.vegalite_to_svg(f.spec, vl_version=version)),
                  (out / f"{f.name}.pdf", vl_convert.vegalite_to_pdf(f.spec, vl_version=version))]
    files.append((out / "table.tex", export_latex(view.db, view)))
    return files


def write_figures(report: Report, view: RunView, folder: str | Path, rule: OutputRule | None = None) -> list[Path]:
    """Every figure as NAME.svg and NAME.pdf, and the LaTeX table (`table.tex`), into `folder`; each file written
    whole by the output rule (`audit.output_paths`: an existing file is replaced only with `force`)."""
    rule = rule or OutputRule(force=True)
    files = _figure_files(report, view, folder)
    for path, _ in files:  # every name checked before the first is written
        rule.check(path, "--figures")
    return [rule.write(path, data, "--figures") for path, data in files]


def write_report(view: RunView, out: str | Path, figures_dir: str | Path | None = None,
                 rule: OutputRule | None = None, panel: FamilyPanel | None = None) -> dict:
    """Build the run's report (`panel`: the family's section, as in `build_report`), write it to `out` whole (and its
    figures and LaTeX table to `figures_dir`); say what was written. `rule`: what may not be overwritten
    (`audit.output_paths`; default: replace any file). Every path is checked before the first file is written, so a
    refused figure leaves no report behind either."""
    rule = rule or OutputRule(force=True)
    report = build_report(view, panel)
    figures = _figure_files(report, view, figures_dir) if figures_dir is not None else []
    rule.check(out)
    for path, _ in figures:
        rule.check(path, "--figures")
    rule.write(out, report_html(report))
    written = [rule.write(path, data, "--figures") for path, data in figures]
    return {"report": str(out), "figures": [f.name for f in report.figures], "files": [str(p) for p in written],
            "policy": view.policy}
