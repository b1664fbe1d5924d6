"""Run overview: original vs audited metrics, judge summary, and the abstracts filtered by outcome."""


import pandas as pd
import streamlit as st

from audit.rescoring import audit_run
from audit.store import run_row
from audit.views import documents
from scoring.families.chimera.scorer import OUTCOMES
from ui.metrics import headline, section_tables
from ui.state import db, link, require_run, short_spec

conn = db()
st.title("Run overview")
run = require_run(conn, "overview.run")

row = run_row(conn, run)
audit = audit_run(conn, run)
st.caption(f"Task **{row['task']}** · judge `{short_spec(row['judge_spec'])}` · {row['n_docs']} abstracts · "
           f"{row['n_decisions']} decisions · gold `{row['inputs']['gold']['name']}` · "
           f"predictions `{row['inputs']['pred']['name']}`")
for w in row["summary"].get("warnings", []):
    st.warning(w)

headline(row["original_metrics"], audit.metrics)
rc = audit.review_counts
judge = row["summary"].get("judge", {})
c1, c2, c3, c4 = st.columns(4)
c1.metric("Reviewed decisions", f"{rc['reviewed']} / {row['n_decisions']}",
          help="Decisions with at least one current human label.")
c2.metric("Overruled", rc["overruled"], help="Decisions whose effective label differs from the judge's.")
c3.metric("Conflicted", rc["conflicted"], help="Reviewers disagree and nobody adjudicated: the judge's label "
                                                "stands until an adjudicator settles it.")
c4.metric("Unreadable / missing", f"{judge.get('invalid', 0)} / {judge.get('missing', 0)}",
          help="Unparseable answers and pairs a replay log lacks. They count as no match (as in the paper) and "
               "are flagged for review.")
with st.expander("Per-type metrics (original → audited)"):
    section_tables(row["original_metrics"], audit.metrics)
if judge.get("prompt_tokens") or judge.get("cost_usd"):
    t1, t2, t3 = st.columns(3)
    t1.metric("Judge requests sent", judge.get("requests", 0), help=f"{judge.get('cached', 0)} answers came from "
              f"the cache; the paper's scorer would have made {judge.get('paper_calls', 0)} calls.")
    t2.metric("Tokens (prompt / completion)", f"{judge['prompt_tokens']:,} / {judge['completion_tokens']:,}")
    cost = judge.get("cost_usd")
    t3.metric("Estimated cost", "—" if cost is None else f"${cost:,.4f}",
              help="Tokens × the model's price per 1M tokens (editable in the new-run form or $REJUDGE_PRICES).")
with st.expander("Judge requests"):
    st.json({k: v for k, v in judge.items() if k != "missing_examples"} | {"identity": row["judge_identity"]})
    if judge.get("missing_examples"):
        st.write("Examples of pairs missing from the judge log:")
        st.json(judge["missing_examples"])

st.subheader("Abstracts")
docs = pd.DataFrame(documents(conn, run, audit))
if docs.empty:
    st.info("This run has no abstracts.")
    st.stop()
outcomes = st.multiselect("Outcome (audited)", OUTCOMES, default=[o for o in OUTCOMES if o != "true negative"],
                          key="overview.outcomes",
                          help="perfect: every gold and predicted entity matched; partial: same relation type, "
                               "some entities unmatched; missed recombination: gold has one, prediction none; "
                               "false alarm: prediction on an abstract without one; type mismatch: combination "
                               "vs inspiration; true negative: both empty.")
shown = docs[docs["audited_outcome"].isin(outcomes)].copy()
st.caption(f"{len(shown)} of {len(docs)} abstracts. Counts by outcome: " + ", ".join(
    f"{k} {v}" for k, v in docs["audited_outcome"].value_counts().items()))
if shown.empty:
    st.info("No abstract has the selected outcome(s).")
    st.stop()
shown["open"] = [link("document", run=run, doc=d) for d in shown["doc"]]
table = shown[["doc", "audited_outcome", "outcome", "decisions", "reviewed", "open"]].rename(
    columns={"doc": "paper id", "audited_outcome": "outcome (audited)", "outcome": "outcome (original)"})
st.dataframe(table, hide_index=True, key="overview.docs",
             column_config={"open": st.column_config.LinkColumn("open", display_text="review ›"),
                            "reviewed": st.column_config.NumberColumn(help="Decisions with at least one review"),
                            "decisions": st.column_config.NumberColumn(help="Judge decisions in this abstract")})
pick = st.selectbox("Open an abstract", shown["doc"].tolist(), key="overview.pick")
if st.button("Review this abstract", key="overview.open", type="primary"):
    st.switch_page("pages/document.py", query_params={"run": run, "doc": pick})
