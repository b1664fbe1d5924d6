"""Scores: original vs audited metrics side by side, with the reviews behind the change, per type."""

import streamlit as st

from audit.board.report import boards_estimating, boards_estimating_text
from audit.learning import learning_status, learning_warning
from audit.numbers import EMPTY, count_noun, format_delta, format_value
from audit.outputs.estimate_text import NOT_REVIEWABLE
from audit.outputs.figures import bias_intervals, headline_intervals, original_vs_audited
from audit.outputs.report import headline_points, per_type_rows
from audit.review.sampling import ALL_KINDS, MIN_SAMPLED_BLOCKS, estimate, load_plan, plan_kinds, target_cell
from ui.entry import page_prologue
from ui.families import kind_title
from ui.metrics import headline, section_tables
from ui.state import blind_guard, current_view, policy_radio
from ui.text import md_literal, show_text

conn = page_prologue()
st.title("Scores: original vs audited")
view = current_view(conn)  # under the session's policy: the radio below changes it before this rerun starts
blind_guard("scores")
row, task = view.row, view.task
policy_radio("scores.policy")
stale = learning_warning(learning_status(conn, row["judge_identity"]))
if stale:
    show_text(stale[0].upper() + stale[1:] + ".", "warning")
audit = view.audit
headline(task, row["original_metrics"], audit.metrics)
rc = audit.review_counts
st.caption(f"{rc['reviewed']:,} of {row['n_decisions']:,} decisions reviewed · {rc['overruled']:,} overruled · "
           f"{rc['confirmed']:,} confirmed · {rc['conflicted']:,} conflicted · {rc['adjudicated']:,} adjudicated · "
           f"{count_noun(rc['reviews'], 'review row', grouped=True)} by "
           f"{count_noun(len(rc['reviewers']), 'reviewer', grouped=True)}")
if rc["reviewed"] == 0:
    st.info("No decision has been reviewed yet: audited = original. Review decisions on the Review queue or "
            "the document review page.")
section_tables(task, row["original_metrics"], audit.metrics, key="scores")

estimable = any(task.sampled_by(c) for c in task.headline)  # the family declares which cells a sample estimates
kinds = plan_kinds(conn, view) if estimable else []
plan_kind = None if ALL_KINDS in kinds or not kinds else kinds[0]  # a plan of one kind (`plan --kind`): one per run
plan = load_plan(conn, view, plan_kind) if estimable else None
# the plan decoded once (683k unit ids: 1-2 s, #38)
est = estimate(conn, view, plan_kind, plan=plan) if plan is not None else None
points, bias = headline_points(view, est)  # the report's headline and bias charts, from the same rows
if points:
    st.subheader("Headline: judge only vs audited" + (" vs estimated" if any(p["series"] == "estimated"
                                                                          for p in points) else ""))
    st.altair_chart(headline_intervals(points), key="scores.headline_chart")
if bias:
    show_text(f"The judge's bias: judge only minus {bias[0]['against']}; 0 = no bias.", "caption")
    st.altair_chart(bias_intervals(bias), key="scores.bias_chart")

st.subheader("Estimated full-review score (partial audit)")
if plan is None:
    st.info("Reviewed so far ≠ what a full review would give: unreviewed decisions keep the judge's label. Create a "
            "sampling plan (Review queue › sample, or `python -m audit plan`) and review through the sample queue "
            "to get an estimate with an honest interval." if estimable else
            "Sampled estimates are not available for this family yet (none of its headline metrics can be "
            "estimated from a sample of documents).")
    on_board = boards_estimating(conn, view.name) if estimable else []
    if on_board:  # the board's estimate of this run, where this page would say there is none
        text = boards_estimating_text(on_board)
        show_text(text[0].upper() + text[1:] + ".", "info")
        st.page_link("pages/leaderboard.py", label=md_literal(f"Open the Leaderboard of {on_board[0]} ›"),
                     query_params={"board": on_board[0]})
else:
    if plan_kind is not None:
        others = [k for k in kinds if k != plan_kind]
        show_text(f"Estimated from this run's sampling plan of {plan_kind} decisions only (made with the CLI's "
                  "plan --kind): a number only other kinds of decision move is not estimated."
                  + (f" The run's plans of {', '.join(others)} decisions give their own estimates: the CLI's "
                     "estimate --kind, the export and the report." if others else ""), "caption")
    cells = {"/".join(c.path): c for c in task.headline}

    def interval(ci: list | None, unit: str, change: bool = False) -> str:
        if not ci:
            return EMPTY
        one = (lambda v: format_delta(v, unit)) if change else (lambda v: format_value(v, unit))
        return f"[{one(ci[0])}, {one(ci[1])}]"

    table = []
    for key, e in est.items():
        unit = cells[key].unit
        tuned = e.get("power_tuned")
        exact = not cells[key].reviewable  # no review can move it: "exact", not a zero-width interval
        table.append({"metric": e["label"], "estimate": format_value(e["estimate"], unit),
                      "95% interval (fixed-n)": "exact" if exact else interval(e["ci"], unit),
                      "95% interval (anytime)": "exact" if exact else interval((e.get("anytime") or {}).get("ci"),
                                                                              unit),
                      # λ before the tuned columns: the table is wider than the page, λ stays in view
                      "λ": f"{EMPTY} (median)" if not tuned else f"{EMPTY} (not tuned)"
                      if tuned["lambda"] is None else format_value(tuned["lambda"]),
                      "power-tuned estimate": format_value(tuned["estimate"], unit) if tuned else EMPTY,
                      "power-tuned interval (fixed-n)": interval(tuned["ci"], unit) if tuned else EMPTY,
                      "judge only": format_value(e["judge_only"], unit),
                      "reviewed so far": format_value(e["reviewed_so_far"], unit),
                      "judge bias (judge − estimate)": EMPTY if e["bias"] is None else format_delta(e["bias"], unit),
                      "bias interval": interval(e.get("bias_ci"), unit, change=True),
                      "documents": e["documents"],
                      "note": NOT_REVIEWABLE if exact else e["note"] or e.get("how") or ""})
    target = "/".join(target_cell(task).path)
    first = table[list(est).index(target)] if target in est else table[0]
    if first["estimate"] != EMPTY and first["95% interval (fixed-n)"] != EMPTY:
        show_text(f"Estimated audited {first['metric']} = {first['estimate']}, 95% interval "
                  f"{first['95% interval (fixed-n)']} (fixed-n), {first['95% interval (anytime)']} (anytime), from "
                  f"{first['documents']} (judge only {first['judge only']}).",
                  "success")
    elif len(plan.blocks) < MIN_SAMPLED_BLOCKS:
        show_text(f"No interval until every document is reviewed: this plan has {len(plan.blocks):,} documents and "
                  f"an interval needs at least {MIN_SAMPLED_BLOCKS} sampled ones, so only a full review (then "
                  "exact) gives one. The estimate so far is shown below.", "info")
    else:
        show_text(f"No interval yet for {first['metric']}: {first['note'] or 'see the note column'}.", "info")
    show_text("Two intervals: the anytime one holds however you decide when to stop (use it when you stop on the "
              "queue's advice, 'N more reviews to ±0.03'); the fixed-n one holds only if the number of reviews was "
              "fixed before reviewing.", "caption")
    show_text("λ is how far the power-tuned (PPI++) estimate trusts the judge: λ = 0 uses the human reviews alone, "
              "λ = 1 is the full difference estimator (the estimate column); it is chosen from the reviewed "
              "documents to give the narrowest interval (not tuned: too few reviews; a median has no λ).", "caption")
    st.dataframe(table, hide_index=True, key="scores.estimate")

st.subheader("Reviews per decision type")
by_type = [{"decision kind": kind_title(task.name, r.pop("kind")), **r}
           for r in view.review_counts_by_type()]
if by_type:
    st.dataframe(by_type, hide_index=True, key="scores.by_type")
else:
    st.info("This run has no decisions.")
rows = per_type_rows(view)
if len(rows):
    st.subheader("F1 per type, original vs audited")
    sections = list(dict.fromkeys(rows["section"]))
    for col, section in zip(st.columns(len(sections)), sections, strict=True):
        col.markdown(f"**{section}**")
        col.altair_chart(original_vs_audited(rows, section), key=f"scores.chart.{section}", width="stretch")
