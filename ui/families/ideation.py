"""Ideation views: a research question's ideas side by side with the judge's 1-5 ratings and rationales, and every
pair's two ordered verdicts; a reviewer gives their own rating (1-5) or verdict (a / b / tie)."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from audit.outputs import figures
from audit.outputs.agreement_rule import alpha_statistic
from audit.outputs.report import Section, alpha_groups_of, figure, interval, para, table
from audit.views import RunView
from ui.cache import cache_data
from ui.families import DocumentContext
from ui.text import md_literal, show_text

DOC_ID_TITLE = "question id"
SECTION_HELP = {
    "absolute": "Mean of the valid 1-5 ratings per system and criterion; unreadable or missing ratings are counted "
                "(n_invalid), never imputed. Intervals: 95% bootstrap resampling questions.",
    "pairwise": "Each pair is judged twice (each idea shown first once). An idea scores +1 per win, -1 per loss, "
                "0 per tie; normalised per question to 3 + S/(N-1) (fixed bounds) or 3 + 2S/n (valid bounds).",
    "position bias": "Pairs with both orders valid: consistent (same winner), flip (same slot won twice), partial "
                     "(one tie). First-slot share 0.5 = no preference for the idea shown first.",
}
OUTCOME_HELP = "invalid: an unreadable or missing rating or call; split: a pair whose two calls disagree; else clean."
DECISIONS_HELP = ("rating: one per idea and criterion (1-5). comparison: one per criterion and pair of ideas {a, b}, "
                  "asked in both orders; the judge's label is the idea both calls agree on, tie, or split.")
RATING_LABELS = ("1", "2", "3", "4", "5")
PAIR_LABELS = (("a", "a better"), ("b", "b better"), ("tie", "tie"))


def _verdict_text(call: dict) -> str:
    """One ordered call in words, e.g. `X shown first -> X won` ."""
    v = call.get("verdict")
    won = {"first": call.get("first"), "second": call.get("second")}.get(v)
    said = f"{won} won" if won else {"tie": "tie", "invalid": "unreadable", "missing": "not asked"}.get(v, str(v))
    return f"{call.get('first')} shown first → {said}"


def card_lines(d: dict, blind: bool = False) -> list[tuple[str, str]]:
    """Criterion and system(s); unless blind, the judge's score or both ordered verdicts with rationales."""
    det = d.get("detail", {})
    if d["kind"] == "rating":
        lines = [("criterion", d["type"]), ("system", d["left"])]
        if not blind:
            lines.append(("judge", f"{det.get('score')} ({det.get('status')})" if det.get("score") is None
                          else str(det["score"])))
            if det.get("rationale"):
                lines.append(("rationale", str(det["rationale"])))
        return lines
    lines = [("criterion", d["type"]), ("idea a", d["left"]), ("idea b", d["right"])]
    if not blind:
        for i, call in enumerate(det.get("calls", []), 1):
            lines.append((f"call {i}", _verdict_text(call)))
            if call.get("rationale"):
                lines.append((f"call {i} rationale", str(call["rationale"])))
    return lines


BLIND_DETAIL: tuple[str, ...] = ()
"""Detail keys a blind card may read: none (the detail holds the judge's scores and verdicts)."""


def card_context(payload: dict, d: dict) -> list[tuple[str, str]]:
    """What `preview` shows, as text lines for the browser review card: the question and the idea(s)."""
    ideas = {i["system"]: i["idea"] for i in payload.get("ideas", [])}
    names = [d["left"]] + ([d["right"]] if d["kind"] == "comparison" else [])
    lines = [("question", payload.get("question", ""))]
    for tag, name in zip(("a", "b"), names, strict=False):
        head = f"{tag}: {name}" if d["kind"] == "comparison" else name
        lines.append((head, ideas.get(name, "(idea not in this question)")))
    return lines


def preview(payload: dict, d: dict) -> None:
    """The question and the idea(s) the decision is about, above a review-queue card."""
    show_text(payload.get("question", ""), "caption")
    ideas = {i["system"]: i["idea"] for i in payload.get("ideas", [])}
    names = [d["left"]] + ([d["right"]] if d["kind"] == "comparison" else [])
    cols = st.columns(len(names))
    for col, (tag, name) in zip(cols, zip(("a", "b"), names, strict=False), strict=True):
        with col:
            head = f"{tag}: {name}" if d["kind"] == "comparison" else name
            st.markdown(f"**{md_literal(head)}**")
            show_text(ideas.get(name, "(idea not in this question)"))


def _buttons(ctx: DocumentContext, d: dict, options: tuple[tuple[str, str], ...], note: str, hide: bool) -> None:
    cols = st.columns(len(options))
    for col, (label, title) in zip(cols, options, strict=True):
        current = not hide and d["effective"] == label
        if col.button(title, key=f"ide-{d['id']}-{label}", type="primary" if current else "secondary"):
            ctx.review(d["id"], label, note)


def render_document(ctx: DocumentContext) -> None:
    """The question, its ideas side by side with ratings per criterion, then each criterion's pairwise verdicts."""
    payload = ctx.doc["payload"]
    hide = ctx.hide_derived
    qid = payload.get("question_id", "")
    st.markdown("**Research question**")
    show_text(payload.get("question", ""))
    note = st.text_input("note for the next review (optional)", key=f"ide-note-{qid}")
    ideas = payload.get("ideas", [])
    ratings = {(d["type"], d["left"]): d for d in ctx.decisions if d["kind"] == "rating"}
    cols = st.columns(max(len(ideas), 1))
    for col, idea in zip(cols, ideas, strict=False):
        with col:
            st.markdown(f"**{md_literal(idea['system'])}**")
            show_text(idea["idea"])
            for k, v in (idea.get("extra") or {}).items():
                if v not in (None, "", "none"):  # a field the data left empty says nothing
                    show_text(f"{k.replace('_', ' ')}: {v}", "caption")
            for c in payload.get("absolute_criteria", []):
                d = ratings.get((c, idea["system"]))
                if d is None:
                    continue
                focus = "→ " if ctx.focus == d["id"] else ""
                judged = "" if hide else f" · judge {d['judge']} · now {d['effective']}"
                st.markdown(md_literal(f"{focus}{c}{judged}"))
                why = (d.get("detail") or {}).get("rationale")
                if why and not hide:
                    with st.expander("judge's rationale"):
                        show_text(why)
                _buttons(ctx, d, tuple((x, x) for x in RATING_LABELS), note, hide)
    comps = [d for d in ctx.decisions if d["kind"] == "comparison"]
    if not comps:
        return
    st.markdown("**Pairwise comparisons** (each pair asked twice, each idea shown first once)")
    for c in payload.get("pairwise_criteria", []):
        st.markdown(f"*{md_literal(c)}*")
        for d in (x for x in comps if x["type"] == c):
            focus = "→ " if ctx.focus == d["id"] else ""
            judged = "" if hide else f" · judge: {d['judge']} · now: {d['effective']}"
            st.markdown(md_literal(f"{focus}a = {d['left']}  vs  b = {d['right']}{judged}"))
            if not hide:
                for call in (d.get("detail") or {}).get("calls", []):
                    show_text(_verdict_text(call), "caption")
                    if call.get("rationale"):
                        with st.expander(md_literal(f"rationale ({call.get('first')} shown first)")):
                            show_text(call["rationale"])
            _buttons(ctx, d, PAIR_LABELS, note, hide)


@cache_data(show_spinner=False)
def _human_reference() -> dict:
    from scoring.families.ideation.human import human_reference

    return human_reference()


RUN_PANEL_TITLE = "Human-human ceiling (Si et al. 2024)"


def render_run(conn: object, run: object) -> None:
    """Run-level panel: the human-human ceiling of Si et al. (2024), to read a judge-human figure against."""
    ref = _human_reference()
    st.subheader("Human-human ceiling (Si et al. 2024)")
    show_text(f"{ref['n_reviews']} reviews of {ref['n_ideas']} ideas; {ref['n_duplicate_reviews']} duplicated reviews "
              f"de-duplicated ({ref['n_reviews_dedup']} reviews of {ref['n_units_dedup']} proposals). "
              f"{ref['scale_note']}", "caption")
    rows = []
    for c, v in ref["criteria"].items():
        means = v["condition_means"]
        rows.append({"criterion": c, "Krippendorff alpha (ordinal)": v["alpha_ordinal"], "ICC(1)": v["icc1"],
                     "reviewer pairs": v["n_pairs"], "mean |difference| (1-10)": v["mean_abs_diff"],
                     "mean range per idea": v["mean_idea_range"],
                     **{f"{k} mean [95% CI]": f"{m['mean']:.2f} [{m['ci'][0]:.2f}, {m['ci'][1]:.2f}]"
                        for k, m in means.items()}})
    st.dataframe(rows, hide_index=True, key="ideation.human_reference",
                 column_config={c: st.column_config.NumberColumn(c, format="%.3f") for c in rows[0]
                                if isinstance(rows[0][c], float)})
    show_text("A judge-human agreement (Agreement page) is read against this ceiling: people agree this little with "
              "each other, so a judge can hardly be expected to agree more with any one of them.", "caption")


# ---------------------------------------------------------------- the audit report's family section


def report_panel(run: RunView, data: Mapping) -> Section | None:
    """The audit report's section of this family (view protocol `report_panel`): None for an export without
    `position_bias`."""
    if "position_bias" not in data["original"]:
        return None
    s = Section("position bias and the human-human ceiling")
    _report_body(run, data, s)
    return s


def _report_body(_view: RunView, data: Mapping, s: Section) -> None:
    pb = data["original"]["position_bias"]
    rows = [{"label": c, "value": m["first_slot_win_share"], "low": (m.get("first_slot_ci") or [None, None])[0],
             "high": (m.get("first_slot_ci") or [None, None])[1], "n": m.get("decisive_calls")}
            for c, m in pb.items() if isinstance(m, Mapping) and m.get("first_slot_win_share") is not None]
    s.body.append(para("Each pair was judged in both orders: a judge without position bias wins half of its "
                       "decisive calls for the idea shown first."))
    s.body.append(table(["criterion", "first-slot win share", "95% interval", "p", "consistent (both orders)",
                         "flip rate", "tie rate"],
                        [[c, m.get("first_slot_win_share"), interval(m.get("first_slot_ci")), m.get("first_slot_p"),
                          m.get("consistency_rate"), m.get("flip_rate"), m.get("tie_rate")]
                         for c, m in pb.items() if isinstance(m, Mapping)]))
    for group, a in alpha_groups_of(data["agreement"]).items():
        stat = alpha_statistic(a)
        if stat.defined:
            s.body.append(para(f"Human-human ceiling, {group}: {stat.name} = {stat.text(3)} over {stat.n} decisions "
                               "with two or more human labels (section 4)."))
    if rows:
        s.figures.append(figure("family-position", "Position bias", figures.position_bias(rows),
                                 "First-slot win share per criterion (95% interval); 0.5 = no position bias"))
