"""Run overview: original vs audited metrics, judge summary, and the documents filtered by outcome."""


import pandas as pd
import streamlit as st

from audit.outputs.export import public_identity
from ui.entry import page_prologue
from ui.families import doc_id_title, doc_noun, family_view
from ui.judge_summary import judge_requests_text
from ui.metrics import headline, section_tables
from ui.stability import render_stability
from ui.state import blind_guard, current_view, link_params, links, run_documents, short_spec
from ui.text import md_literal, show_text

conn = page_prologue()
st.title("Run overview")
run_view = current_view(conn)
run = run_view.name
blind_guard("overview")
row, task, audit = run_view.row, run_view.task, run_view.audit
noun = doc_noun(task.name)
titles = {spec.name: spec.title for spec in task.inputs}  # "gold folder gold", not "gold gold"; in this order
st.caption(f"Task **{md_literal(task.title)}** · judge {md_literal(short_spec(row['judge_spec']))} · "
           f"{md_literal(noun.count(row['n_docs'], grouped=True))} · {row['n_decisions']:,} decisions · " +
           " · ".join(f"{md_literal(titles.get(k, k).lower())} {md_literal(v['name'])}"
                      for k, v in sorted(row["inputs"].items(), key=lambda kv: list(titles).index(kv[0])
                                         if kv[0] in titles else len(titles))
                      if isinstance(v, dict) and "name" in v))
for w in row["summary"].get("warnings", []):
    show_text(w, "warning")

headline(task, row["original_metrics"], audit.metrics)
rc = audit.review_counts
judge = row["summary"].get("judge", {})
c1, c2, c3, c4 = st.columns(4)
# the total goes in the label: "111969 / 111969" at the value's size does not fit a quarter of the page
c1.metric(f"Reviewed of {row['n_decisions']:,} decisions", f"{rc['reviewed']:,}",
          help="Decisions with at least one current human label.")
c2.metric("Overruled", f"{rc['overruled']:,}", help="Decisions whose effective label differs from the judge's.")
c3.metric("Conflicted", f"{rc['conflicted']:,}", help="Reviewers disagree and nobody adjudicated: the judge's label "
                                                "stands until an adjudicator settles it.")
c4.metric("Unreadable / missing", f"{judge.get('invalid', 0):,} / {judge.get('missing', 0):,}",
          help="Unparseable answers and questions a replay log lacks. They count as not matched and are "
               "flagged for review.")
with st.expander("Per-type metrics (original → audited)"):
    section_tables(task, row["original_metrics"], audit.metrics, key="overview.metrics")
if judge.get("prompt_tokens") or judge.get("cost_usd"):
    t1, t2, t3 = st.columns(3)
    t1.metric("Judge requests sent", judge.get("requests", 0), help=f"{judge.get('cached', 0)} answers came from "
              f"the cache; the paper's scorer would have made {judge.get('paper_calls', 0)} calls.")
    t2.metric("Tokens (prompt / completion)", f"{judge['prompt_tokens']:,} / {judge['completion_tokens']:,}")
    cost = judge.get("cost_usd")
    t3.metric("Estimated cost", "—" if cost is None else f"${cost:,.4f}",
              help="Tokens × the model's price per 1M tokens (editable in the new-run form or $REJUDGE_PRICES).")
with st.expander("Judge requests: what the judge was asked"):
    show_text(judge_requests_text(judge, row["judge_spec"]))
    ident = {k: v for k, v in public_identity(row["judge_identity"]).items() if k not in ("spec",)}
    if ident:
        st.dataframe([{"field": k, "value": str(v)} for k, v in ident.items()], hide_index=True,
                     key="overview.judge_identity")
    if judge.get("missing_examples"):
        st.caption("Examples of questions missing from the judge log:")
        st.dataframe(judge["missing_examples"], hide_index=True, key="overview.missing_examples")

render_stability(conn, run_view)

family = family_view(task.name)
if family.render_run is not None:  # the family's run-level panel (variants, ceilings, ties)
    with st.expander(family.RUN_PANEL_TITLE, expanded=False):
        family.render_run(conn, run_view)

st.subheader(noun.plural.capitalize())
docs = pd.DataFrame(run_documents(run_view))  # kept per review state: a review shows at once
if docs.empty:
    st.info(f"This run has no {noun.plural}.")
    st.stop()
outcomes_all = list(task.outcomes)
outcomes = st.multiselect("Outcome (audited)", outcomes_all,
                          default=[o for o in outcomes_all if o not in task.outcomes_hidden_first],
                          key="overview.outcomes",
                          help=family.OUTCOME_HELP)
shown = docs[docs["audited_outcome"].isin(outcomes)].copy()
st.caption(f"{len(shown):,} of {len(docs):,} {noun.plural}. Counts by outcome: " + ", ".join(
    f"{md_literal(k)} {int(v):,}" for k, v in docs["audited_outcome"].value_counts().items()))
if shown.empty:
    st.info(f"No {noun} has the selected {'outcome' if len(outcomes) == 1 else 'outcomes'}.")
    st.stop()
shown["open"] = links("document", ({"run": run, "doc": d} for d in shown["doc"].tolist()))
table = shown[["doc", "audited_outcome", "outcome", "decisions", "reviewed", "open"]].rename(
    columns={"doc": doc_id_title(task.name), "audited_outcome": "outcome (audited)",
             "outcome": "outcome (original)"})
st.dataframe(table, hide_index=True, key="overview.docs",
             column_config={"open": st.column_config.LinkColumn("open", display_text="review ›"),
                            "reviewed": st.column_config.NumberColumn(help="Decisions with at least one review"),
                            "decisions": st.column_config.NumberColumn(help=f"Decisions on this {noun}")})
pick = st.selectbox(f"Open {noun.a}", shown["doc"].tolist(), key="overview.pick")
if st.button(f"Review this {noun}", key="overview.open", type="primary"):
    st.switch_page("pages/document.py", query_params=link_params(doc=pick))
