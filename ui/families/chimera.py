"""CHIMERA views: the abstract with gold and predicted spans, relations, matches, and the span-pair card."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping

import streamlit as st

from audit.outputs import figures
from audit.outputs.report import Section, figure, para, table
from audit.views import RunView
from scoring.families.chimera.scorer import ENTITY_TYPES, doc_from_json, flat_entities, match_summary
from ui.cache import cache_data
from ui.families import DocumentContext
from ui.highlight import highlight_html, legend_html, locate, trim, type_colours
from ui.text import md_literal, show_text

COLOURS = type_colours(ENTITY_TYPES)
DOC_ID_TITLE = "paper id"
ANSWER_TEXT = {"yes": "yes", "no": "no", "invalid": "unreadable", "missing": "not in log"}
BLIND_DETAIL = ("sides",)
"""Detail keys a blind card may read: which side(s) each span occurs on (not the judge's answers)."""
SECTION_HELP = {
    "classification": "Relevant iff the relation dict is non-empty (prediction and gold alike); P/R/F1 per class "
                      "(relevant, irrelevant), macro average = unweighted mean of the two classes' values.",
    "entities": "Flat entity agreement: each predicted entity takes its first matching gold entity of its type "
                "(tp = distinct gold entities hit, fp = unmatched predictions); an independent gold pass gives fn. "
                "Pooled per type; macro average over comb-element, inspiration-src, inspiration-target.",
    "relations": "Relations of the same type are aligned (best partner by share of matched entities); tp/fp/fn are "
                 "entity counts inside aligned relations, pooled per relation type; macro average over "
                 "combination and inspiration.",
}
OUTCOME_HELP = ("perfect: every gold and predicted entity matched; partial: same relation type, some entities "
                "unmatched; missed recombination: gold has one, prediction none; false alarm: prediction on an "
                "abstract without one; type mismatch: combination vs inspiration; true negative: both empty.")
DECISIONS_HELP = ("One decision per judge question: an unordered same-type pair of spans, one predicted and one "
                  "gold, asked in both span orders; it matches only if both answers are yes.")


def _sides(d: dict, which: str) -> str:
    sides = d["detail"].get("sides", {}).get(which)
    if not sides:
        return "predicted" if which == "left" else "gold"
    return " + ".join(sides)


def card_lines(d: dict, blind: bool = False) -> list[tuple[str, str]]:
    """The two spans (with the side(s) each occurs on) and, unless blind, the judge's answer in each order."""
    lines = [("entity type", d["type"]), (_sides(d, "left"), d["left"]), (_sides(d, "right"), d["right"])]
    if not blind:
        fwd = d["detail"].get("pred_gold", {})
        bwd = d["detail"].get("gold_pred", {})
        lines.append(("judge", f"first span first: {ANSWER_TEXT.get(fwd.get('value', ''), fwd.get('value', '?'))}; "
                               f"second span first: {ANSWER_TEXT.get(bwd.get('value', ''), bwd.get('value', '?'))}"))
        for side in (fwd, bwd):
            why = side.get("rationale") or (side.get("raw") if side.get("value") == "invalid" else None)
            if why:
                lines.append(("judge's reasoning", str(why)[:600]))
    return lines


def gold_items(payload: dict) -> list[str]:
    """The abstract's gold entities as `type: span` (what a reviewer can flag as wrong)."""
    doc, _ = doc_from_json(payload)
    return [f"{t}: {v}" for t, v in dict.fromkeys(flat_entities(doc.gold))]


def gold_item_of(d: dict) -> str | None:
    """The gold span of a span-pair decision, as in `gold_items`."""
    sides = d["detail"].get("sides", {})
    for which in ("right", "left"):
        if "gold" in (sides.get(which) or (["gold"] if which == "right" else [])):
            return f"{d['type']}: {d[which]}"
    return None


def _side_ranges(text: str, span: str, sides: list[str] | None, default: str, t: str) -> tuple[list, list]:
    hits = [(s, e, t) for s, e in locate(text, span)]
    sides = sides or [default]
    return (hits if "gold" in sides else []), (hits if "predicted" in sides else [])


_SENTENCE = re.compile(r"[^.!?]+(?:[.!?]+|$)")


def _sentence_of(text: str, start: int) -> tuple[int, int]:
    """The sentence of `text` (ended by . ! or ?) that holds position `start`, without its outer whitespace."""
    for m in _SENTENCE.finditer(text):
        if m.start() <= start < m.end():
            return trim(text, m.start(), m.end())
    return 0, len(text)


def card_context(payload: dict, d: dict) -> list[tuple]:
    """Each span in its sentence of the abstract, spans marked (issue 40.7: a pair is judged in context): one line
    when both sit in one sentence, else one per span; `(label, sentence, [(start, end), …])` for the review card."""
    text = payload.get("text") or ""
    found = {which: locate(text, d[which])[:1] for which in ("left", "right")}
    lines: list[tuple] = []
    sentences: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for which in ("left", "right"):
        if not found[which]:
            lines.append((_sides(d, which), "(not found verbatim in the abstract)", []))
            continue
        s, e = found[which][0]
        sentences.setdefault(_sentence_of(text, s), []).append((s, e))
    for (a, b), spans in sentences.items():
        label = "both spans" if len(spans) == 2 else _sides(d, "left" if found["left"][:1] == spans else "right")
        lines.append((f"in the abstract ({label})", text[a:b], [(s - a, e - a) for s, e in sorted(set(spans))]))
    return lines


def preview(payload: dict, d: dict) -> None:
    """The abstract with the decision's two spans highlighted in its entity type's colour (review queue)."""
    text = payload["text"]
    sides = d["detail"].get("sides", {})
    lg, lp = _side_ranges(text, d["left"], sides.get("left"), "predicted", d["type"])
    rg, rp = _side_ranges(text, d["right"], sides.get("right"), "gold", d["type"])
    st.html(highlight_html(text, lg + rg, lp + rp, COLOURS))


def _relation_html(rels: tuple, empty: str) -> str:
    if not rels:
        return f"<i>{empty}</i>"
    out = []
    for r in rels:
        items = "".join(f"<li><small>{html.escape(t)}</small>: {html.escape(v)}</li>" for t, v in r.entities)
        out.append(f"<b>{html.escape(r.type)}</b><ul>{items}</ul>")
    return "".join(out)


def _entity_list(items: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{x}</li>" for x in items) + "</ul>" if items else "<i>none</i>"


def render_document(ctx: DocumentContext) -> None:
    """Gold vs predicted relations, the highlighted abstract and (unless blind) the effective matches."""
    doc, pred = doc_from_json(ctx.doc["payload"])
    hide = ctx.hide_derived
    if not hide:
        _doc_counts(ctx)
        st.markdown("**Gold class:** " + md_literal(doc.document_class or "?"))
    c1, c2 = st.columns(2)
    with c1:
        st.markdown("**Gold relation**")
        st.html(_relation_html(doc.gold, "no recombination"))
    with c2:
        st.markdown("**Predicted relation**")
        st.html(_relation_html(pred.relations, "no recombination" + (" (no prediction in the file)"
                                                                     if pred.line is None else "")))
    gold_ranges = [(s.start, s.end, s.type) for s in doc.gold_spans]
    pred_ranges, not_found = [], []
    for t, v in dict.fromkeys(e for r in pred.relations for e in r.entities):
        hits = locate(doc.text, v)
        pred_ranges += [(s, e, t) for s, e in hits]
        if not hits:
            not_found.append(v)
    st.html(legend_html({t: COLOURS[t] for t in ENTITY_TYPES}))
    st.html(highlight_html(doc.text, gold_ranges, pred_ranges, COLOURS))
    if not_found:
        st.caption("Predicted spans not found verbatim in the text: " + "; ".join(md_literal(v) for v in not_found))
    if hide:
        return
    summary = match_summary(doc, pred, {(d["type"], d["left"], d["right"]): d["effective"] for d in ctx.decisions})
    e = html.escape
    c1, c2, c3 = st.columns(3)
    c1.markdown("**Matched pairs** (effective)")
    c1.html(_entity_list([f"{e(p)} ⇄ {e(g)} <small>({e(t)})</small>" for t, p, g in summary["matched"]]))
    c2.markdown("**Unmatched predicted entities**")
    c2.html(_entity_list([f"{e(v)} <small>({e(t)})</small>" for t, v in summary["unmatched_pred"]]))
    c3.markdown("**Unmatched gold entities**")
    c3.html(_entity_list([f"{e(v)} <small>({e(t)})</small>" for t, v in summary["unmatched_gold"]]))
    for line in over_matching(summary["matched"]):
        show_text(line, "warning")


def over_matching(matched: list[tuple[str, str, str]]) -> list[str]:
    """Where several predicted spans match one gold span (or one predicted span several gold spans): the scorer
    counts the gold entity once as tp and the rest as over-matching (`pred_om` / `gold_om`)."""
    by_gold: dict[tuple[str, str], list[str]] = {}
    by_pred: dict[tuple[str, str], list[str]] = {}
    for t, p, g in matched:
        by_gold.setdefault((t, g), []).append(p)
        by_pred.setdefault((t, p), []).append(g)
    out = [f"Over-matching: gold {t} “{g}” is matched by {len(ps)} predicted spans ({'; '.join(ps)}); it counts "
           f"once as a true positive, the other {len(ps) - 1} as predicted over-matching."
           for (t, g), ps in by_gold.items() if len(ps) > 1]
    out += [f"Over-matching: predicted {t} “{p}” matches {len(gs)} gold spans ({'; '.join(gs)}); the other "
            f"{len(gs) - 1} {'counts' if len(gs) == 2 else 'count'} as gold over-matching."
            for (t, p), gs in by_pred.items() if len(gs) > 1]
    return out


COUNT_KEYS = ("tp", "fp", "fn", "pred_om", "gold_om")
COUNT_TITLES = {"pred_om": "pred over-match", "gold_om": "gold over-match"}


def doc_count_rows(original: dict, audited: dict) -> list[dict]:
    """This abstract's tp / fp / fn (and over-matching) per section and type, original → audited, skipping types
    the abstract has nothing of."""
    rows = []
    for section in ("classification", "entities", "relations"):
        for t, o in (original.get(section) or {}).items():
            a = (audited.get(section) or {}).get(t, o)
            if not any(o.get(k) or a.get(k) for k in COUNT_KEYS):
                continue
            row = {"section": section, "type": t}
            for k in COUNT_KEYS:
                if k in o:
                    ov, av = o.get(k, 0), a.get(k, 0)
                    row[COUNT_TITLES.get(k, k)] = str(ov) if ov == av else f"{ov} → {av}"
            rows.append(row)
    return rows


def _doc_counts(ctx: DocumentContext) -> None:
    rows = doc_count_rows(ctx.extra.get("original_counts") or ctx.doc.get("counts") or {}, ctx.audited_counts)
    st.markdown("**This abstract's counts** (original → audited; the cards above are the whole run's scores)")
    if rows:
        st.dataframe(rows, hide_index=True, key="chimera.doc_counts")
    else:
        st.caption("Nothing to count on this abstract (no gold or predicted entities).")


# ---------------------------------------------------------------- strict 1-to-1 vs paper code (issue 16)
# One self-contained function (imports inside) so the UI helper can call it from any page, e.g.
# `view("chimera").render_variant_differences(db, run_view)` on the scores page.


@cache_data(show_spinner=False, max_entries=16)
def _variant_differences(_view: object, key: tuple) -> tuple[int, list[dict] | None]:  # noqa: ARG001 - review_state
    """(documents, `strict.differing_documents` of the audited counts; None for a run scored before the strict
    variant existed), kept per `ui.state.review_state`: at 10,000 abstracts, decoding every document's counts and
    comparing the variants took 3 s of every overview render."""
    from scoring.families.chimera import strict

    per_doc = _view.audited_doc_counts_shared()  # type: ignore[attr-defined]
    if per_doc and not any(strict.STRICT in c for _, c in per_doc):
        return len(per_doc), None
    # a document's entry depends on its counts alone, and unchanged documents with equal counts share one dict
    # (100,000 abstracts: 114 distinct): each distinct dict compared once
    found: dict[int, tuple[Mapping, list[dict]]] = {}
    out = []
    for doc_id, counts in per_doc:
        hit = found.get(id(counts))
        if hit is None:
            hit = found[id(counts)] = (counts, strict.differing_documents([("", counts)]))  # counts kept: id stays
        out += [d | {"doc": doc_id} for d in hit[1]]
    return len(per_doc), out


def render_variant_differences(db: object, run: object, *, key: str = "chimera.variants") -> None:
    """Where the strict 1-to-1 variant and the paper-code score differ, under the effective (audited) labels.

    Lists the abstracts whose entity or relation tp / fp / fn change between the variants (with each variant's
    precision / recall / F1 of that abstract), and for a chosen one the highlighted abstract with only the spans
    that take part in an over-match (the paper code's greedy first match lets several spans share one), the
    code's first-match pairs and the strict 1-to-1 pairs. `run`: the page's `audit.views.RunView` (or a run name).
    """

    from audit.views import as_view
    from scoring.families.chimera import strict
    from scoring.families.chimera.scorer import match_fn_from_labels
    from ui.state import review_state

    run_view = as_view(db, run)  # type: ignore[arg-type]
    n_docs, diffs = _variant_differences(run_view, review_state(run_view))
    if diffs is None:
        st.info("This run was scored before the strict 1-to-1 variant existed; score it again to compare.")
        return
    st.caption(f"{len(diffs):,} of {int(n_docs):,} abstracts score differently under strict 1-to-1 matching "
               "(effective labels; the paper-code score stays the reported one).")
    if not diffs:
        return
    table = []
    for d in diffs:
        r = {"paper id": d["doc"]}
        for section, short in (("entities", "entity"), ("relations", "relation")):
            for m in ("precision", "recall", "f1"):
                r[f"{short} {m[0].upper() if m != 'f1' else 'F1'} paper"] = d[section]["paper"][m]
                r[f"{short} {m[0].upper() if m != 'f1' else 'F1'} strict"] = d[section]["strict"][m]
        r["over-matches"] = sum(t["pred_om"] + t["gold_om"] for t in d["types"] if t["section"] == "entities")
        table.append(r)
    st.dataframe(table, hide_index=True, key=f"{key}.table",
                 column_config={c: st.column_config.NumberColumn(c, format="%.3f") for c in table[0]
                                if c not in ("paper id", "over-matches")})
    pick = st.selectbox("Abstract", [d["doc"] for d in diffs], key=f"{key}.doc")
    if pick is None:
        return
    info = run_view.document(pick)
    decs = run_view.decisions(pick)
    doc, pred = doc_from_json(info["payload"])
    match = match_fn_from_labels({(x["type"], x["left"], x["right"]): x["effective"] for x in decs})
    ex = strict.explain(doc, pred, match)
    gold_r = [(s, e, t) for t, v in ex["over_matching_gold"] for s, e in locate(doc.text, v)]
    pred_r = [(s, e, t) for t, v in ex["over_matching_pred"] for s, e in locate(doc.text, v)]
    st.markdown("**Spans in an over-match** (gold: background; predicted: dashed outline)")
    st.html(legend_html({t: COLOURS[t] for t in ENTITY_TYPES}))
    st.html(highlight_html(doc.text, gold_r, pred_r, COLOURS))
    diff = next(d for d in diffs if d["doc"] == pick)
    st.dataframe([{"section": t["section"], "type": t["type"], "paper tp/fp/fn": "/".join(map(str, t["paper"])),
                   "strict tp/fp/fn": "/".join(map(str, t["strict"])), "pred over-match": t["pred_om"],
                   "gold over-match": t["gold_om"]} for t in diff["types"]], hide_index=True, key=f"{key}.types")
    e = html.escape
    c1, c2 = st.columns(2)
    c1.markdown("**Paper code: each prediction's first match**")
    c1.html(_entity_list([f"{e(p)} ⇄ {e(g)} <small>({e(t)})</small>" for t, p, g in ex["first_match"]]))
    c2.markdown("**Strict: maximum 1-to-1 matching**")
    c2.html(_entity_list([f"{e(p)} ⇄ {e(g)} <small>({e(t)})</small>" for t, p, g in ex["strict_pairs"]]))


RUN_PANEL_TITLE = "Paper's code vs strict 1-to-1 matching: where they differ"


def render_run(conn: object, run: object) -> None:
    """Run-level panel: the abstracts whose score changes between the paper-code and the strict 1-to-1 variant."""
    render_variant_differences(conn, run, key="overview.variants")


# ---------------------------------------------------------------- the audit report's family section


def report_panel(run: RunView, data: Mapping) -> Section | None:
    """The audit report's section of this family (view protocol `report_panel`): None for an export without
    `strict_1to1`."""
    if "strict_1to1" not in data["original"]:
        return None
    s = Section("strict 1-to-1 vs the paper's code")
    _report_body(run, data, s)
    return s


def _report_body(_view: RunView, data: Mapping, s: Section) -> None:
    o = data["original"]
    strict = o["strict_1to1"]
    rows, table_rows = [], []
    for section, types in strict.items():
        for typ, m in types.items():
            paper = o.get(section, {}).get(typ, {})
            if not isinstance(m, Mapping) or "f1" not in m or "f1" not in paper:
                continue
            rows += [{"group": f"{section} · {typ}", "variant": "paper's code", "value": paper["f1"]},
                     {"group": f"{section} · {typ}", "variant": "strict 1-to-1", "value": m["f1"]}]
            table_rows.append([section, typ, paper["f1"], m["f1"], m["f1"] - paper["f1"]])
    s.body.append(para("The paper's scorer lets one span match several (over-matching); the strict variant "
                       "(Rejudge's, labelled, not the paper's number) allows each span one partner. "
                       "Judge-only labels."))
    s.body.append(table(["section", "type", "F1 paper's code", "F1 strict 1-to-1", "difference"], table_rows))
    if rows:
        s.figures.append(figure("family-strict", "Paper's code vs strict 1-to-1", figures.variant_bars(rows),
                                 "F1 per type: the paper's scorer vs the strict 1-to-1 variant"))
