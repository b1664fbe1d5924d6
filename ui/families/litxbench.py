"""LitXBench views: levels original vs audited, material pairs side by side (process chains aligned, measurements
gold vs predicted with near-miss reasons, configuration trees with the parent check) and the paper text with the
predicted numbers marked found / not found. User data is escaped (`html.escape`), made Markdown-literal
(`md_literal`: expander labels are Markdown) or shown with `st.dataframe` / `st.text`, always with invisible and
direction-changing characters made visible."""

from __future__ import annotations

import html
from collections.abc import Mapping

import pandas as pd
import streamlit as st

from audit.outputs import figures
from audit.outputs.report import Section, figure, num, para, settled_decisions, table
from audit.views import RunView
from scoring.families.litxbench import review
from scoring.families.litxbench.family import LitXBenchTask
from scoring.families.litxbench.match import within_match
from scoring.families.litxbench.model import KIND_CONFIG, KIND_ITEM, KIND_MATERIAL, KIND_NUMBER
from scoring.families.litxbench.score import LEVELS, level_metrics
from ui.families import DocumentContext
from ui.text import md_literal, visible, visible_rows

DOC_ID_TITLE = "paper id"
OUTCOME_HELP = ("perfect: overall F1 1; partial: every gold material paired but something differs; materials "
                "missed: some gold material unpaired; empty prediction: no predicted material.")
DECISIONS_HELP = ("The official algorithm's pairings (material, item, configuration) plus the best alternatives per "
                  "row and column, and the hallucination check of every predicted number. Marking a candidate "
                  "'match' forces the pair, marking a chosen pair 'no match' forbids it; the paper is re-solved.")
SECTION_HELP = {"multi-level": "Micro aggregation: each level's tp / target / extracted summed over papers, then "
                               "scored; overall = 0.50 value + 0.20 process + 0.15 config + 0.15 material over "
                               "active levels (the measurement level is reported, not weighted).",
                "corrected (not official)": "Same algorithm with a relative tolerance of 1e-3 (in base units) "
                                            "instead of the absolute 1e-6; never the default."}
_DETAIL_KEYS = ("cost", "score", "reason", "kind_score", "pred_in_gold_unit", "parent_check", "quirks",
                "quirk_absolute_tolerance_only", "quirk_rounded_conversion_failed", "quirk_threshold_after_assignment")


def card_lines(d: dict, blind: bool = False) -> list[tuple[str, str]]:
    """What the decision asks: predicted and gold sides; unless blind, the algorithm's numbers and near-miss reason."""
    kind = {KIND_MATERIAL: "material pair", KIND_ITEM: f"item pair ({d['type']})", KIND_CONFIG: "configuration pair",
            KIND_NUMBER: f"number ({d['type']})"}.get(d["kind"], d["kind"])
    if d["kind"] == KIND_NUMBER:
        lines = [("question", kind), ("predicted number", d["right"]), ("where", d["left"])]
    else:
        lines = [("question", kind), ("predicted", d["left"]), ("gold", d["right"])]
    if not blind:
        det = d.get("detail") or {}
        for k in _DETAIL_KEYS:
            if k in det and det[k] not in (None, [], False):
                lines.append((k.replace("_", " "), str(det[k])))
    return lines


BLIND_DETAIL = ("at",)
"""Detail keys a blind card may read: where a number occurs in the paper text (not the algorithm's scores)."""


def card_context(payload: dict, d: dict) -> list[tuple[str, str]]:
    """What `preview` shows, as text lines for the browser review card: for a number, the text around it."""
    if d["kind"] != KIND_NUMBER:
        return []
    at = (d.get("detail") or {}).get("at")
    text = payload.get("text") or ""
    return [("paper text", "not found in the paper text" if at is None else
             "…" + text[max(0, at - 150): at + 150] + "…")]


def preview(payload: dict, d: dict) -> None:
    """For a number: the text around where it occurs (or a note that it does not)."""
    if d["kind"] != KIND_NUMBER:
        return
    at = (d.get("detail") or {}).get("at")
    text = payload.get("text") or ""
    if at is None:
        st.text("not found in the paper text")
    else:
        st.text(visible("…" + text[max(0, at - 150): at + 150] + "…"))


def _levels_table(original: dict, audited: dict, pid: str) -> pd.DataFrame:
    o = level_metrics(original.get("papers", {}).get(pid, {}))
    a = level_metrics(audited.get("papers", {}).get(pid, {}))
    rows = []
    for lv in (*LEVELS, "overall"):
        rows.append({"level": lv, **{f"{k} (orig)": o[lv][k] for k in ("precision", "recall", "f1")},
                     **{f"{k} (audited)": a[lv][k] for k in ("precision", "recall", "f1")}})
    return pd.DataFrame(rows)


def _by_key(ctx: DocumentContext) -> dict[tuple[str, str, str, str], dict]:
    return {(d["kind"], d["type"], d["left"], d["right"]): d for d in ctx.decisions}


def _review_controls(ctx: DocumentContext, decs: list[dict], key: str) -> None:
    if not decs:
        return
    schemes = LitXBenchTask.label_schemes  # labels said in the scheme's words, as the review cards say them
    options = {visible(f"{d['kind']}: {d['left'][:70]} ⇄ {d['right'][:70]} "
                       f"[{schemes[d['kind']].title(d['effective'])}]"): d for d in decs}
    c1, c2, c3 = st.columns([4, 2, 2])  # wide enough for "not in the paper" uncut
    choice = c1.selectbox("decision", list(options), key=f"lx-sel-{key}", label_visibility="collapsed")
    d = options[choice]
    scheme = schemes[d["kind"]]
    if c2.button(md_literal(scheme.title(scheme.labels[0])), key=f"lx-a-{key}"):
        ctx.review(d["id"], scheme.labels[0], "")
    if c3.button(md_literal(scheme.title(scheme.labels[1])), key=f"lx-b-{key}"):
        ctx.review(d["id"], scheme.labels[1], "")


def _config_tree(cfgs: list, paired: dict[str, str], checks: dict[str, bool]) -> str:
    by_parent: dict[str | None, list] = {}
    names = {c.name for c in cfgs}
    for c in cfgs:
        by_parent.setdefault(c.within if c.within in names else None, []).append(c)
    out: list[str] = []

    def walk(parent: str | None, depth: int) -> None:
        for c in by_parent.get(parent, []):
            mark = ""
            if c.path in paired:
                ok = checks.get(c.path)
                check = " ✓ parent" if ok else " ✗ parent" if ok is False else ""
                mark = " ⇄ " + html.escape(visible(paired[c.path])) + check
            out.append(f"<div style='margin-left:{depth * 1.5}em'>• {html.escape(visible(c.what()))}{mark}</div>")
            if c.name and c.name != parent and depth < 20:
                walk(c.name, depth + 1)
    walk(None, 0)
    return "".join(out) or "<i>no configurations</i>"


def _material_pair(ctx: DocumentContext, r, i: int, j: int, mp, decs: dict) -> None:
    g, p = r.gold[i], r.pred[j]
    with st.expander(md_literal(f"{g.label()}  ⇄  {p.label()}   (cost {mp.cost:.3g})")):
        al = mp.alignment
        rows = [{"gold event": mp.gold_events[a].kind.value if a is not None else "",
                 "gold T / t": _qt(mp.gold_events[a]) if a is not None else "",
                 "predicted event": mp.pred_events[b].kind.value if b is not None else "",
                 "predicted T / t": _qt(mp.pred_events[b]) if b is not None else "",
                 "aligned": (a, b) in set(al.matched)} for a, b in al.steps]
        st.markdown("**Process chains** (Levenshtein on kinds; temperatures and durations only count at the value "
                    "level)")
        st.dataframe(pd.DataFrame(visible_rows(rows)), hide_index=True, width="stretch")
        st.markdown("**Measurements** (gold vs predicted)")
        st.dataframe(pd.DataFrame(visible_rows(_item_rows(mp.items, decs))), hide_index=True, width="stretch")
        cm = mp.configs
        if cm.gold or cm.pred:
            objs = cm.paired_objects()
            gpair = {cm.gold[a].path: cm.pred[b].what() for a, b, _ in cm.pairs}
            ppair = {cm.pred[b].path: cm.gold[a].what() for a, b, _ in cm.pairs}
            checks_g = {cm.gold[a].path: within_match(cm.gold[a], cm.pred[b], objs) for a, b, _ in cm.pairs}
            checks_p = {cm.pred[b].path: within_match(cm.gold[a], cm.pred[b], objs) for a, b, _ in cm.pairs}
            c1, c2 = st.columns(2)
            c1.markdown("**Gold configurations**")
            c1.html(_config_tree(cm.gold, gpair, checks_g))
            c2.markdown("**Predicted configurations**")
            c2.html(_config_tree(cm.pred, ppair, checks_p))
            for a, _b, cp in cm.pairs:
                if cp.items.gold or cp.items.pred:
                    st.caption("nested items of " + md_literal(cm.gold[a].what()))
                    st.dataframe(pd.DataFrame(visible_rows(_item_rows(cp.items, decs))), hide_index=True,
                                 width="stretch")
        mine = [d for d in ctx.decisions if d["kind"] in (KIND_ITEM, KIND_CONFIG) and
                review.material_of(review.path_of(d["right"])) == g.path and
                review.material_of(review.path_of(d["left"])) == p.path]
        mine += [d for d in ctx.decisions if d["kind"] == KIND_MATERIAL and review.path_of(d["right"]) == g.path]
        _review_controls(ctx, mine, f"{i}-{j}")


def _qt(ev) -> str:
    parts = [q.text() for q in (ev.temperature, ev.duration) if q is not None]
    return " / ".join(parts)


def _item_rows(im, decs: dict) -> list[dict]:
    rows = []
    for a, b, s in im.pairs:
        gi, pi = im.gold[a], im.pred[b]
        d = decs.get((KIND_ITEM, gi.type, f"{pi.path} {pi.what()}", f"{gi.path} {gi.what()}"), {})
        rows.append({"status": "matched", "gold": gi.what(), "predicted": pi.what(), "score": round(s, 4),
                     "why": (d.get("detail") or {}).get("reason", "")})
    for a in im.unmatched_gold:
        gi = im.gold[a]
        best = max(range(len(im.pred)), key=lambda b, a=a: im.scores[a, b], default=None)
        why = ""
        if best is not None:
            pi = im.pred[best]
            d = decs.get((KIND_ITEM, gi.type, f"{pi.path} {pi.what()}", f"{gi.path} {gi.what()}"))
            why = f"nearest: {pi.what()} ({(d.get('detail') or {}).get('reason', '')})" if d else ""
        rows.append({"status": "gold only", "gold": gi.what(), "predicted": "", "score": 0.0, "why": why})
    for b in im.unmatched_pred:
        rows.append({"status": "predicted only", "gold": "", "predicted": im.pred[b].what(), "score": 0.0, "why": ""})
    return rows


def _text_with_numbers(text: str, numbers: list[dict]) -> str:
    """The paper text, escaped, with the first occurrence of each found number marked."""
    marks = sorted({(d["detail"]["at"], len(str(d["detail"]["variants"][0]))) for d in numbers
                    if d["effective"] == "found" and (d.get("detail") or {}).get("at") is not None})
    out, pos = [], 0
    for at, n in marks:
        if at < pos:
            continue
        out.append(html.escape(visible(text[pos:at])))
        out.append(f"<mark style='background:#c8f7c5'>{html.escape(visible(text[at:at + n]))}</mark>")
        pos = at + n
    out.append(html.escape(visible(text[pos:])))
    return ("<div style='max-height:420px;overflow:auto;white-space:pre-wrap;font-size:0.85em;border:1px solid "
            "#ddd;padding:0.5em'>" + "".join(out) + "</div>")


def render_document(ctx: DocumentContext) -> None:
    """Levels original vs audited, material pairs, configurations, and the numbers in the paper text."""
    payload = ctx.doc["payload"]
    pid = payload["paper_id"]
    doc = review.doc_from_payload(payload)
    hide = ctx.hide_derived
    if not payload.get("has_prediction", True):
        st.caption("No prediction file for this paper: scored as an empty extraction.")
    if not hide:
        st.markdown("**Levels** (this paper; original vs audited)")
        st.dataframe(_levels_table(ctx.doc.get("counts") or {}, ctx.audited_counts or {}, pid), hide_index=True,
                     width="stretch")
    labels = {k: d["effective"] for k, d in _by_key(ctx).items()}
    r = review.solve_under(doc, review.constraints_from(doc, labels)) if not hide else doc.baseline
    decs = _by_key(ctx)
    st.markdown(f"**Materials**: {len(r.gold)} gold, {len(r.pred)} predicted, {len(r.matched)} paired")
    for i, j, mp in r.matched:
        _material_pair(ctx, r, i, j, mp, decs)
    if r.unmatched_gold or r.unmatched_pred:
        c1, c2 = st.columns(2)
        c1.markdown("**Unpaired gold materials**")
        for i in r.unmatched_gold:
            c1.text(visible(r.gold[i].label()))
        c2.markdown("**Unpaired predicted materials**")
        for j in r.unmatched_pred:
            c2.text(visible(r.pred[j].label()))
    numbers = [d for d in ctx.decisions if d["kind"] == KIND_NUMBER]
    if numbers and doc.text:
        nf = [d for d in numbers if d["effective"] == "not-found"]
        st.markdown(f"**Numbers**: {len(numbers)} predicted, {len(nf)} not found in the text")
        if nf:
            st.dataframe(pd.DataFrame(visible_rows([{"number": d["right"], "where": d["left"], "what": d["type"]}
                                                    for d in nf])),
                         hide_index=True, width="stretch")
            _review_controls(ctx, nf, "numbers")
        st.html(_text_with_numbers(doc.text, numbers))


# ---------------------------------------------------------------- the audit report's family section


def report_panel(run: RunView, data: Mapping) -> Section | None:
    """The audit report's section of this family (view protocol `report_panel`): None for an export without
    `corrected`."""
    if "corrected" not in data["original"]:
        return None
    s = Section("official vs corrected scorer, hallucinated numbers")
    _report_body(run, data, s)
    return s


def _report_body(view: RunView, data: Mapping, s: Section) -> None:
    o, a = data["original"], data["audited"]
    official = o.get("overall", {}).get("multi_level", {})
    corrected = o["corrected"]
    rows, table_rows = [], []
    for level, m in corrected.items():
        if not isinstance(m, Mapping) or "f1" not in m or "f1" not in official.get(level, {}):
            continue
        rows += [{"group": level, "variant": "official", "value": official[level]["f1"]},
                 {"group": level, "variant": "corrected (not official)", "value": m["f1"]}]
        table_rows.append([level, official[level]["f1"], m["f1"]])
    s.body.append(para(str(corrected.get("note", "corrected variant (not official)"))))
    s.body.append(table(["level", "F1 official", "F1 corrected"], table_rows))
    if "hallucination_rate" in o:
        s.body.append(para(f"Hallucinated numbers (values not found in the paper text): rate "
                           f"{num(o.get('hallucination_rate'))} judge only, {num(a.get('hallucination_rate'))} "
                           "audited."))
    forced, forbidden = pairings_overruled(view)
    s.body.append(para(f"Pairings forced by reviews (judge: no pair, reviewers: a pair): {forced}; pairings "
                       f"forbidden by reviews (judge: a pair, reviewers: none): {forbidden}."))
    if rows:
        s.figures.append(figure("family-corrected", "Official vs corrected levels", figures.variant_bars(rows),
                                 "F1 per level: the official scorer vs the corrected variant (not official)"))


def pairings_overruled(view: RunView) -> tuple[int, int]:
    """(forced, forbidden): reviewed pairing decisions (kinds whose label scheme says `pairing`) whose effective
    label is a pair (the scheme's positive label) where the judge's is not, and the other way round."""
    positive = {k: sc.positive for k, sc in view.task.label_schemes.items() if sc.pairing}
    forced = forbidden = 0
    for d, e in settled_decisions(view):
        if d["kind"] in positive and e.label != d["judge_label"]:
            forced += e.label == positive[d["kind"]]
            forbidden += d["judge_label"] == positive[d["kind"]]
    return forced, forbidden
