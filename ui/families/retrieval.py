"""Retrieval views: a query's anchor and context, the gold and its rank under each tie policy, and the candidates
ranked above it, each of which a reviewer may accept as a correct answer too (which moves the gold up)."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from audit.numbers import count_noun
from audit.outputs import figures
from audit.outputs.report import Section, figure, para, table
from audit.views import RunView
from scoring.families.retrieval.family import RetrievalTask
from scoring.families.retrieval.metrics import query_rank, reviewable_positions
from scoring.families.retrieval.model import ACCEPTABLE, KIND, NOT_ACCEPTABLE, TIE_POLICIES, RankedQuery
from scoring.families.retrieval.review import query_from_json
from ui.families import DocumentContext
from ui.text import md_literal, readable, show_text

SCHEME = RetrievalTask.label_schemes[KIND]
"""The candidate's labels in words (`LabelScheme.title`), as the review cards say them."""
BLIND_DETAIL = ("rank", "tied_with_gold", "anchor", "text", "score", "gold", "gold_rank", "gold_ranks")
"""Detail keys a blind card may read: the system's ranking, not the judge's answer."""

DOC_ID_TITLE = "query id"
SECTION_HELP = {
    "all": "Every query. MR = mean gold rank, MRR = mean 1/rank, Hits@K = share of queries with the gold in the top "
           "K, median rank = midpoint of the two middle ranks for an even count.",
    "combination": "Queries of combination relations (both directions of each pair).",
    "inspiration": "Queries asking what inspired the anchor.",
    "cross_domain": "Queries whose two entities come from different top-level arXiv domains.",
    "tie_policies": "Ties (equal scores) around the gold: mean = mean rank of the tie block (default), optimistic = "
                    "its best rank, pessimistic = its worst. The paper's sort broke ties arbitrarily.",
    "tie_sensitivity": "How far each figure moves between the optimistic and the pessimistic tie policy.",
}
OUTCOME_HELP = "Where the gold lands after review (mean tie policy): top 1, top 10, top 100, or below 100."
DECISIONS_HELP = ("One decision per candidate ranked above the gold (or tied with it) within the top 100: is it an "
                  "acceptable answer too? The benchmark assumes not; accepting one removes it from the ranking, so "
                  "the gold moves up (filtered setting).")
POLICY_TITLES = {"mean": "mean of tie block", "optimistic": "optimistic", "pessimistic": "pessimistic"}
SHOWN = (10, 25, 100)


def _fmt_rank(r: float) -> str:
    return f"{r:g}"


def gold_rank_text(det: dict) -> str:
    """The gold's rank as the metrics read it: one rank, or the ranks its tie spans (its place in the list's order
    inside a tie is arbitrary, so it is said as that, not as the rank). A decision stored before `gold_ranks` was
    kept shows the list's order.

    >>> gold_rank_text({"gold_rank": 378, "gold_ranks": [5, 573]})
    'tied at ranks 5–573; 378th in the list'
    >>> gold_rank_text({"gold_rank": 3, "gold_ranks": [3, 3]}), gold_rank_text({"gold_rank": 3})
    ('rank 3', 'rank 3')
    """
    lo, hi = det.get("gold_ranks") or (None, None)
    if lo is not None and hi is not None and hi > lo:
        return f"tied at ranks {lo:,}–{hi:,}; {ordinal(det.get('gold_rank', '?'))} in the list"
    return f"rank {det.get('gold_rank', '?')}"


def ordinal(n: object) -> str:
    """378th, 1st, 22nd, 13th, 111th; anything not a whole number as given.

    >>> [ordinal(n) for n in (378, 1, 22, 13, 111, 1001)], ordinal("?")
    (['378th', '1st', '22nd', '13th', '111th', '1,001st'], '?')
    """
    if not isinstance(n, int):
        return str(n)
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n:,}{suffix}"


def card_lines(d: dict, blind: bool = False) -> list[tuple[str, str]]:
    """Anchor, candidate (with rank and score), gold (with rank) and, unless blind, the judge's reason."""
    det = d.get("detail", {})
    rank = f"{det.get('rank', '?')}" + (" (tied with the gold)" if det.get("tied_with_gold") else "")
    lines = [("relation", d["type"]), ("anchor", str(det.get("anchor", ""))),
             ("candidate", str(det.get("text", d["left"]))), ("candidate rank", rank)]
    if "score" in det:
        lines.append(("score", f"{det['score']:.6g}"))
    lines.append(("gold", f"{det.get('gold', d['right'])} ({gold_rank_text(det)})"))
    if not blind:
        why = det.get("answer", {}).get("rationale")
        if why:
            lines.append(("judge", str(why)))
    return lines


def card_context(payload: dict, d: dict) -> list[tuple[str, str]]:  # noqa: ARG001 (view protocol)
    """What `preview` shows, as text lines for the browser review card: the query and its context."""
    q = query_from_json(payload)
    return [("query", readable(q.query))] + ([("context", readable(q.context))] if q.context else [])


def preview(payload: dict, d: dict) -> None:  # noqa: ARG001 (view protocol)
    """The query and its context above a review-queue card."""
    q = query_from_json(payload)
    show_text(readable(q.query), "caption")
    if q.context:
        with st.expander("context"):
            show_text(readable(q.context))


def _rank_rows(q: RankedQuery, audited: dict | None) -> list[dict]:
    rows = []
    for p in TIE_POLICIES:
        row = {"tie policy": POLICY_TITLES[p], "rank (as ranked)": _fmt_rank(query_rank(q, p))}
        if audited is not None:
            row["rank (audited)"] = _fmt_rank(audited[p]["rank"])
        rows.append(row)
    return rows


def render_document(ctx: DocumentContext) -> None:
    """The query, the gold with its ranks, and the reviewable candidates with acceptable / not buttons."""
    q = query_from_json(ctx.doc["payload"])
    hide = ctx.hide_derived
    st.markdown(f"**{md_literal(q.relation)}** · anchor: {md_literal(readable(q.anchor_text))}")
    show_text(readable(q.query), "caption")
    if q.context:
        with st.expander("context", expanded=False):
            show_text(readable(q.context))
    st.markdown(f"**Gold answer:** {md_literal(readable(q.positive))} <small>({md_literal(q.positive_id)})</small>",
                unsafe_allow_html=True)
    block = (f"tied with {count_noun(q.tied, 'other candidate')}, ranks {q.gold_block[0]}–{q.gold_block[1]}" if q.tied
             else "no tie")
    st.caption(f"{q.n_candidates} candidates · {md_literal(block)}"
               + (" · no scores in the file: ties cannot be seen" if q.scores is None else ""))
    st.dataframe(_rank_rows(q, None if hide else ctx.audited_counts.get("all")), hide_index=True)

    by_cand = {d["left"]: d for d in ctx.decisions}
    positions = reviewable_positions(q)
    if not positions:
        st.info("Nothing ranked above the gold: nothing to review.")
        return
    st.markdown(f"**Candidates above or tied with the gold** ({len(positions)} within the top 100)")
    shown = st.radio("show", [n for n in SHOWN if n < len(positions)] + [len(positions)], horizontal=True,
                     key=f"rt-shown-{q.id}", format_func=lambda n: f"top {n}")
    note = st.text_input("note for the next review (optional)", key=f"rt-note-{q.id}")
    for i in positions[:shown]:
        d = by_cand.get(q.candidates[i])
        c_rank, c_text, c_label, c_yes, c_no = st.columns([1, 6, 2, 2, 2])
        c_rank.markdown(md_literal(f"{i + 1}" + ("=" if i + 1 >= q.gold_block[0] else "")))
        score = f" · {q.scores[i]:.4f}" if q.scores is not None else ""
        c_text.markdown(md_literal(readable(q.candidates_text[i])) + f"<small>{md_literal(score)}</small>",
                        unsafe_allow_html=True)
        if d is None:
            c_label.caption("no decision")
            continue
        focused = ctx.focus == d["id"]
        if not hide:
            c_label.markdown(("→ " if focused else "") + md_literal(SCHEME.title(d["effective"])))
        elif focused:
            c_label.markdown("→")
        for col, label, title in ((c_yes, ACCEPTABLE, "acceptable"), (c_no, NOT_ACCEPTABLE, "not acceptable")):
            current = not hide and d["effective"] == label
            if col.button(title, key=f"rt-{d['id']}-{label}", type="primary" if current else "secondary"):
                ctx.review(d["id"], label, note)


RUN_PANEL_TITLE = "Tie policies and the human study"


def render_run(conn: object, run: object) -> None:
    """Run-level panel: how much the tie policy moves each figure, and the CHIMERA-KB human study. `run`: the
    page's `audit.views.RunView` (or a run name)."""
    from audit.demo import DATA
    from audit.views import as_view
    from scoring.families.retrieval.user_study import user_study_summary

    metrics = as_view(conn, run).audit.metrics  # type: ignore[arg-type]
    policies = metrics.get("tie_policies") or {}
    if policies:
        st.subheader("Tie policy: how much it moves each figure (audited)")
        from audit.numbers import format_value
        from scoring.families.retrieval.review import COLUMN_TITLES

        keys = ["mr", "mrr", "hits@1", "hits@10", "hits@100", "median_rank"]
        ranks = {"mr", "median_rank"}
        rows = [{"subset": subset, "policy": p,
                 **{COLUMN_TITLES.get(k, k): format_value(policies[p][subset].get(k), "rank" if k in ranks else "score")
                    for k in keys}}
                for subset in policies.get("mean", {}) for p in ("optimistic", "mean", "pessimistic")
                if subset in policies.get(p, {})]
        st.dataframe(rows, hide_index=True, key="retrieval.ties")
        show_text("The paper's code broke ties with a non-stable sort; mean (the default) is the expected rank of the "
                  "gold inside its block of equal scores.", "caption")
    study = DATA / "retrieval" / "user_study_results.csv"
    if study.is_file():
        s = user_study_summary(study)
        st.subheader("Human study (CHIMERA-KB): mean human rank per system")
        st.dataframe([{"system": k, **v} for k, v in s["systems"].items()], hide_index=True, key="retrieval.study")
        a = s["agreement"]
        alpha = a["krippendorff_alpha_ordinal"]
        show_text(f"Annotators agree on the order of systems: Kendall's W = {a['kendalls_w']:.3f} (Friedman "
                  f"p = {a['friedman_p']:.3f}), Krippendorff's alpha (ordinal) = {alpha:.3f}. "
                  f"{a['item_level_note']}.", "caption")


# ---------------------------------------------------------------- the audit report's family section


def report_panel(run: RunView, data: Mapping) -> Section | None:
    """The audit report's section of this family (view protocol `report_panel`): None for an export without
    `tie_policies`."""
    if "tie_policies" not in data["original"]:
        return None
    s = Section("tie-policy sensitivity")
    _report_body(run, data, s)
    return s


def _report_body(_view: RunView, data: Mapping, s: Section) -> None:
    o = data["original"]
    pols = o["tie_policies"]
    rows, table_rows = [], []
    for pol, groups in pols.items():
        m = groups.get("all", {})
        table_rows.append([pol] + [m.get(k) for k in ("mr", "mrr", "hits@1", "hits@10", "median_rank")])
        rows += [{"group": k, "variant": pol, "value": v} for k, v in m.items()
                 if k != "n" and isinstance(v, int | float) and 0 <= v <= 1]
    sens = o.get("tie_sensitivity", {}).get("all", {})
    s.body.append(para(f"Tied candidate scores are ranked under a policy (used: {o.get('tie_policy', '')}); "
                       f"{sens.get('queries_with_ties', 0)} queries have the gold inside a tie block."))
    s.body.append(table(["tie policy", "MR", "MRR", "Hits@1", "Hits@10", "median rank"], table_rows))
    if rows:
        chart = figures.variant_bars(rows, value_title="score")
        s.figures.append(figure("family-ties", "Tie-policy sensitivity", chart,
                                 "MRR and Hits@K (all queries) under each tie policy"))
