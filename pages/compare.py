"""Judge vs judge: what swapping one judge for another changes, decision by decision, and which judge the human
reviewers agreed with more."""

import pandas as pd
import streamlit as st

from audit.errors import AuditError
from audit.numbers import EMPTY, format_delta, format_value
from audit.outputs.agreement_rule import statistic_of
from audit.outputs.compare import comparable_runs, compare_runs, what_differs
from audit.outputs.compare_humans import humans_vs_judges
from ui.decision_link import decision_param
from ui.entry import page_prologue
from ui.families import kind_title
from ui.state import blind_guard, blind_on, current_run, links, run_names, short_spec, view_of
from ui.text import md_literal, show_error, show_text

conn = page_prologue()
st.title("Compare judges")
blind_guard("compare judges")
st.markdown("Score the same predictions with two judges (e.g. the paper's GPT-4o-mini log and a local model), "
            "then see how often they agree, what the swap does to each score (A − B) and which decisions flip — "
            "before trusting the cheaper one.")
# a run the reviewer is blind on is not offered as A or B: its judge's answers would show decision by decision
names = [n for n in run_names(conn) if not blind_on(conn, n)]
if len(names) < 2:
    st.info("Compare needs two runs of the same gold file. Score another run on the Runs page (same prediction "
            "file, another judge).")
    st.stop()
current = current_run()
c1, c2 = st.columns(2)
a = c1.selectbox("Run A", names, index=names.index(current) if current in names else 0, key="compare.a")
others = [o for o in comparable_runs(conn, a) if o in names]  # same task and gold, most recent first
if not others:
    show_text(f"No other run of the same task scored on the same gold as {a}: score one on the Runs page (the same "
              "inputs, another judge), then compare them here.", "info")
    st.stop()
if st.session_state.get("compare.b") not in others:
    st.session_state.pop("compare.b", None)  # run A changed: default to its most recent comparable run
b = c2.selectbox("Run B", others, index=0, key="compare.b",
                 help="Only runs of the same task scored on the same gold are offered; the most recent first.")
try:
    view_a, view_b = view_of(conn, a), view_of(conn, b)
    res = compare_runs(conn, view_a, view_b)
except AuditError as e:
    show_error(str(e))
    st.stop()
differs = what_differs(conn, view_a, view_b)
if differs:
    show_text(differs, "warning")
st.caption(f"A = {md_literal(a)} (judge {md_literal(short_spec(res['a']['judge']))}) · B = {md_literal(b)} "
           f"(judge {md_literal(short_spec(res['b']['judge']))})")
s = res["stats"]
m1, m2, m3, m4 = st.columns(4)
m1.metric("Shared decisions", f"{res['shared']:,}", help="Questions both runs asked (the same judge question on the "
          "same gold: one review settles it in both), each counted once.")
m2.metric("Labels differ", len(res["differ"]))
m3.metric("Raw agreement", "—" if not s else f"{s['raw_agreement']:.3f}",
          help="Share of shared decisions with the same label.")
kappa = statistic_of(s) if s else None
m4.metric(kappa.name if kappa else "κ", "—" if kappa is None else f"{kappa.value:.3f}" if kappa.defined
          else "undefined",
          help="Cohen's κ (quadratic-weighted for ordered ratings); the interval is a percentile bootstrap that "
               "resamples documents.")
if kappa is not None and not kappa.defined:
    show_text(f"{kappa.name} is undefined: {kappa.undefined}.", "caption")
elif kappa is not None and kappa.ci is not None:  # below the card: in it, the interval was cut ("0.079 [-0.0…")
    m4.caption(f"95% interval [{kappa.ci[0]:.3f}, {kappa.ci[1]:.3f}]")
if s and s.get("raw_agreement_ci"):
    ci = s["raw_agreement_ci"]
    m3.caption(f"95% Wilson interval [{ci[0]:.3f}, {ci[1]:.3f}]")

task = view_a.task
st.subheader("Scores: A, B and the signed difference A − B")
rows = []
for cell in task.headline:
    va, vb = cell.value(res["a"]["metrics"]), cell.value(res["b"]["metrics"])
    diff = EMPTY if va is None or vb is None else format_delta(va - vb, cell.unit)
    if diff == format_delta(0.0, cell.unit):  # a bare "0" beside "-0.1604" reads as a different kind of number
        diff += " (no judge decision behind it)" if not cell.reviewable else " (equal)"
    rows.append({"metric": cell.label, "A": format_value(va, cell.unit), "B": format_value(vb, cell.unit),
                 "A − B": diff})
st.dataframe(pd.DataFrame(rows), hide_index=True, key="compare.metrics",
             column_config={"A": st.column_config.TextColumn(f"A: {a}"), "B": st.column_config.TextColumn(f"B: {b}"),
                            "A − B": st.column_config.TextColumn("A − B", help="Positive: judge A scores higher.")})
if s:
    labels = s["confusion"]["labels"]
    table = pd.DataFrame(s["confusion"]["counts"], index=[f"A: {x}" for x in labels],
                         columns=[f"B: {x}" for x in labels])
    st.markdown("**Confusion of the judges' labels** (rows: judge A, columns: judge B; the diagonal agrees)")
    st.dataframe(table, key="compare.confusion")

st.subheader("Which judge did the reviewers agree with?")
humans = humans_vs_judges(conn, view_a, view_b)
if humans:
    st.dataframe(pd.DataFrame([{
        "decisions": "all decisions" if h["kind"] == "all" else f"{kind_title(task.name, h['kind'])} · {h['type']}",
        "reviewed": h["decisions"], "human labels": h["labels"],
        "agree with A": f"{h['agree_a']} ({h['rate_a']:.1%})", "agree with B": f"{h['agree_b']} ({h['rate_b']:.1%})",
        "A − B": format_delta(h["diff"], "share"),
        "closer to humans": {"A": f"A: {a}", "B": f"B: {b}"}.get(h["closer"], "neither (even)"),
    } for h in humans]), hide_index=True, key="compare.humans")
    st.caption("Each reviewer's current label on a shared decision (from run A, else run B) against each judge's "
               "label; A − B > 0 means the reviewers sided with judge A more often.")
else:
    st.info("No reviewer has labelled a decision the two runs share yet: review some in either run to see which "
            "judge humans agree with.")

st.subheader("Decisions where the judges differ")
if res["differ"]:
    df = pd.DataFrame(res["differ"])
    numbers = view_a.decision_numbers(df["a_id"].tolist())
    df["open"] = links("document", ({"run": a, "doc": d, **decision_param(numbers[i])}
                                    for d, i in zip(df["doc"], df["a_id"], strict=True)))
    df["kind"] = [kind_title(task.name, k) for k in df["kind"]]
    cols = {"a": f"A: {a}", "b": f"B: {b}"}
    st.dataframe(df[["doc", "kind", "type", "left", "right", "a", "b", "open"]].rename(columns=cols),
                 hide_index=True, key="compare.differ",
                 column_config={"open": st.column_config.LinkColumn("open", display_text="review ›")})
else:
    st.success("The two judges agree on every shared decision.")
