"""Judge vs judge: what swapping one judge for another changes, decision by decision."""

import pandas as pd
import streamlit as st

from audit.compare import compare_runs
from audit.errors import AuditError
from audit.store import list_runs, run_row
from scoring.families import get_task
from ui.state import db, link
from ui.text import show_error

conn = db()
st.title("Compare judges")
st.markdown("Score the same predictions with two judges (e.g. the paper's GPT-4o-mini log and a local model), "
            "then see how often they agree and which decisions flip — before trusting the cheaper one.")
names = [r["name"] for r in list_runs(conn)]
if len(names) < 2:
    st.info("Compare needs two runs of the same gold file. Score another run on the Runs page (same prediction "
            "file, another judge).")
    st.stop()
c1, c2 = st.columns(2)
a = c1.selectbox("Run A", names, index=0, key="compare.a")
b = c2.selectbox("Run B", names, index=1, key="compare.b")
if a == b:
    st.info("Pick two different runs.")
    st.stop()
try:
    res = compare_runs(conn, a, b)
except AuditError as e:
    show_error(str(e))
    st.stop()
s = res["stats"]
m1, m2, m3, m4 = st.columns(4)
m1.metric("Shared decisions", res["shared"], help="Decisions (the same judge question) both runs made.")
m2.metric("Labels differ", len(res["differ"]))
m3.metric("Raw agreement", "—" if not s else f"{s['raw_agreement']:.3f}",
          help="Share of shared decisions with the same label; Wilson 95% interval in the table below.")
m4.metric("Cohen's kappa", "—" if not s or s["kappa"] is None else f"{s['kappa']:.3f}",
          help="(po − pe)/(1 − pe), 95% interval by resampling documents.")
if s and s.get("kappa_ci"):
    m4.caption(f"95% interval [{s['kappa_ci'][0]:.3f}, {s['kappa_ci'][1]:.3f}]")
task = get_task(run_row(conn, a)["task"])
rows = [{"metric": cell.label, f"A: {a}": cell.value(res["a"]["metrics"]), f"B: {b}": cell.value(res["b"]["metrics"]),
         "A − B": (cell.value(res["a"]["metrics"]) or 0) - (cell.value(res["b"]["metrics"]) or 0)}
        for cell in task.headline]
st.dataframe(pd.DataFrame(rows), hide_index=True, key="compare.metrics",
             column_config={c: st.column_config.NumberColumn(c, format="%.4f") for c in rows[0] if c != "metric"})
if s:
    labels = s["confusion"]["labels"]
    table = pd.DataFrame(s["confusion"]["counts"], index=[f"A: {x}" for x in labels],
                         columns=[f"B: {x}" for x in labels])
    st.markdown("**Confusion (A = rows, B = columns)**")
    st.dataframe(table, key="compare.confusion")
st.subheader("Decisions where the judges differ")
if res["differ"]:
    df = pd.DataFrame(res["differ"])
    df["open"] = [link("document", run=a, doc=d, decision=i) for d, i in zip(df["doc"], df["a_id"], strict=True)]
    cols = {"a": f"A: {a}", "b": f"B: {b}"}
    st.dataframe(df[["doc", "type", "left", "right", "a", "b", "open"]].rename(columns=cols),
                 hide_index=True, key="compare.differ",
                 column_config={"open": st.column_config.LinkColumn("open", display_text="review ›")})
else:
    st.success("The two judges agree on every shared decision.")
