"""Improve the judge: fit a better judge on the run's reviews and show, out of sample only, whether it is better
(`audit.outputs.improve_judge`, the function the CLI's `improve-judge` calls). The owner's in team mode."""

import json

import pandas as pd
import streamlit as st

from audit.errors import AuditError
from audit.learning import learning_status
from audit.outputs.improve_judge import (
    DEFAULT_FOLDS,
    DEFAULT_MIN_ALPHA,
    MIN_DOCUMENTS,
    STRATEGIES,
    applicability,
    improve_judge,
    judge_after_text,
    judge_to_use,
)
from audit.store.database import reviews_version
from audit.store.improvements import stored_improvements
from ui import auth
from ui.entry import page_prologue
from ui.state import blind_guard, current_view, links
from ui.text import md_literal, show_error, show_text

conn = page_prologue()
st.title("Improve the judge")
blind_guard("improve the judge")
auth.guard("improve_judge")
st.markdown("Can the reviews make the judge better, so the next run needs fewer of them? Each reviewed document is "
            "judged by a judge fitted **without it** (K folds of documents), and κ before and after is compared on "
            "the same decisions. An improvement is claimed only when the change's 95% interval lies above 0.")
view = current_view(conn)
learnt = learning_status(conn, view.row["judge_identity"])
if learnt:
    show_text(learnt["text"].capitalize() + ".", "warning" if learnt["stale"] else "info")
offered = [s for s in STRATEGIES if applicability(view, s) is None]
for s in STRATEGIES:
    if s not in offered:
        show_text(applicability(view, s), "caption")
if not offered:
    show_text(f"No strategy applies to this run's judge ({view.row['judge_spec']}).", "info")
    st.stop()

c1, c2, c3, c4, c5 = st.columns(5)
strategy = c1.selectbox("Strategy", offered, key="improve.strategy",
                        help="threshold: the κ-maximising threshold of a fuzzy or embed judge; calibrate: an isotonic "
                             "map of ordinal ratings, one per criterion; few-shot: the k most similar reviewed "
                             "decisions put before each question; rules: the reviewers' notes distilled into "
                             "instructions by the judge model.")
folds = int(c2.number_input("Folds (K)", min_value=2, max_value=20, value=DEFAULT_FOLDS, step=1, key="improve.folds"))
seed = int(c3.number_input("Seed", min_value=0, value=0, step=1, key="improve.seed",
                           help="The folds and the bootstrap come from it: the same seed, the same result."))
min_alpha = c4.number_input("Minimum human α", min_value=-1.0, max_value=1.0, value=DEFAULT_MIN_ALPHA, step=0.05,
                            key="improve.min_alpha", format="%.3f",
                            help="Refuse when the humans agree with each other less than this (Krippendorff's α "
                                 "on decisions reviewed twice): then the labels are the problem, not the judge.")
min_docs = int(c5.number_input("Minimum documents", min_value=1, max_value=MIN_DOCUMENTS, value=MIN_DOCUMENTS,
                               step=1, key="improve.min_docs"))
key = (view.name, view.policy, strategy, folds, seed, min_alpha, min_docs, reviews_version(conn, view.id))
if st.button("Fit and evaluate", type="primary", key="improve.go"):
    with st.spinner("Cross-fitting and resampling documents…"):
        try:
            st.session_state["improve.result"] = (key, improve_judge(
                conn, view, strategy, seed=seed, folds=folds, min_alpha=min_alpha, min_documents=min_docs))
        except AuditError as e:
            st.session_state["improve.result"] = (key, str(e))
stored = st.session_state.get("improve.result")
if not stored or stored[0] != key:
    kept = stored_improvements(conn, view.id)
    if not kept:
        st.caption("Choose the settings and press *Fit and evaluate* (a few seconds for threshold and calibrate, "
                   "whose fit is re-run in every bootstrap resample; few-shot and rules ask the run's LLM at "
                   "`OPENAI_BASE_URL`, each answer once, through the cache).")
        st.stop()
    last = kept[0]
    show_text(f"The last stored result (#{last['id']}, {last['created'][:16].replace('T', ' ')}): strategy "
              f"{last['strategy']}, seed {last['seed']}, {len(last['folds'])} document folds"
              + (f"; {last['result']['bundled']}" if last["result"].get("bundled") else "")
              + ". Press Fit and evaluate to fit again with the settings above.", "info")
    stored = (key, last["result"])
result = stored[1]
if isinstance(result, str):
    show_error(result)
    st.stop()

pre, ev = result["preflight"], result["evaluation"]
for note in pre["notes"]:
    show_text(note, "caption")
if result["improved"]:
    show_text(result["reason"], "success")
else:
    show_text(result["reason"], "warning")


def fmt(value: float | None, ci: list | None = None, sign: str = "") -> str:
    if value is None:
        return "—"
    return f"{value:{sign}.3f}" + (f" {interval(ci, sign)}" if ci else "")


def interval(ci: list | None, sign: str = "") -> str:
    return "no interval" if not ci else f"[{ci[0]:{sign}.3f}, {ci[1]:{sign}.3f}]"


m1, m2, m3, m4 = st.columns(4)
m1.metric("κ before", fmt(ev["kappa_before"]), help=ev["before"]["statistic"] + ", the original judge")
m1.caption(f"95% interval {md_literal(interval(ev['before']['kappa_ci']))}")
m2.metric("κ after (out of sample)", fmt(ev["kappa_after"]), help="Each decision judged by the fold's judge that "
          "never saw its document.")
m2.caption(f"95% interval {md_literal(interval(ev['after']['kappa_ci']))}")
m3.metric("Δκ", fmt(ev["delta_kappa"], sign="+"), help=ev["method"])
m3.caption(f"95% interval {md_literal(interval(ev['delta_kappa_ci'], '+'))}")
# a judge spec is longer than a metric tile shows (st.metric cuts it with an ellipsis): written out in full
m4.markdown(f"**Judge after** (fitted on every reviewed document)  \n{md_literal(judge_after_text(result))}")
m4.caption(f"{ev['n_decisions']} decisions in {ev['n_documents']} documents")
if (result["judge_after"].get("strategy") != "calibrate" and result["improved"]
        and result.get("stored_as") is not None):
    st.caption("Score any run of this family with the judge to keep (the run records the reviews it learnt from):")
    st.code(f"python -m audit score {view.task.name} … --judge improved:{int(result['stored_as'])}", language="bash")
else:
    show_text(f"Next runs: {judge_to_use(result)}.", "caption")
st.caption(f"|judge-only − audited| of {md_literal(ev['metric'])} over the {int(ev['documents']):,} reviewed "
           f"documents: before {md_literal(fmt(ev['gap_before']))}, after {md_literal(fmt(ev['gap_after']))}.")

after = result["judge_after"]
if "curve" in after:
    st.subheader("κ against the threshold (all reviewed documents)")
    curve = pd.DataFrame(after["curve"], columns=["threshold", "kappa"]).dropna()
    st.line_chart(curve, x="threshold", y="kappa", height=260)
    st.caption(f"The run's judge: {md_literal(result['judge_before']['spec'])}; the folds chose "
               + ", ".join(md_literal(f["spec"]) for f in result["fold_judges"]) + ".")
if after.get("strategy") == "rules":
    st.subheader("Rules the judge model distilled from the reviewers' notes")
    st.caption(f"From the notes on {len(after['model']['from_notes'])} overruled decisions; appended to the family's "
               "prompt (a new prompt hash). Edit them and press *Keep the edited rules*: the judge to keep takes "
               "your text (the out-of-sample evaluation above stays that of the distilled rules each fold made). "
               "The CLI takes the same text back: `improve-judge --strategy rules --rules FILE`.")
    edited = st.text_area("Rules", after["rules"], height=160, key="improve.rules")
    if st.button("Keep the edited rules", key="improve.rules.keep", disabled=edited.strip() == after["rules"].strip()):
        with st.spinner("Re-using the cached answers…"):
            try:
                st.session_state["improve.result"] = (key, improve_judge(
                    conn, view, "rules", seed=seed, folds=folds, min_alpha=min_alpha, min_documents=min_docs,
                    rules=edited))
            except AuditError as e:
                st.session_state["improve.result"] = (key, str(e))
        st.rerun()
if after.get("strategy") == "few-shot":
    st.caption(f"Few-shot: each question is shown the {int(after['model']['k'])} most similar of "
               f"{len(after['model']['examples'])} reviewed decisions (never of its own document; overruled ones "
               f"first), before the family's prompt.")
if "cost" in result:
    c = result["cost"]
    st.caption(f"Cost: {int(c['requests']):,} requests to the judge model ({int(c['cached']):,} answers from the "
               f"cache), {c['prompt_tokens']:,} prompt and {c['completion_tokens']:,} completion tokens.")
if "calibration" in after:
    st.subheader("Calibration maps (judge's rating → calibrated)")
    st.dataframe(pd.DataFrame(after["calibration"]).rename_axis("judge"), key="improve.maps")

st.subheader("Before and after, out of sample")
cols = st.columns(2)
for col, side, title in ((cols[0], ev["before"], "before"), (cols[1], ev["after"], "after")):
    conf = side["confusion"]
    col.markdown(f"**Confusion {title}** (rows: humans, columns: judge)")
    col.dataframe(pd.DataFrame(conf["counts"], index=[f"human: {x}" for x in conf["labels"]],
                               columns=[f"judge: {x}" for x in conf["labels"]]), key=f"improve.confusion.{title}")
    recall = pd.DataFrame([{"human label": lab, "judge agrees": fmt(r["recall"], r["ci"]), "n": r["n"]}
                           for lab, r in side["recall"].items()])
    col.dataframe(recall, hide_index=True, key=f"improve.recall.{title}")
st.caption("Per human label, the share of decisions the judge labelled the same (TPR / TNR for yes/no kinds) with "
           "95% Wilson intervals.")

wrong = set(ev["disagreeing_after"]) | set(ev["disagreeing_before"])
if wrong:
    st.subheader("Decisions a judge gets wrong")
    by_id = {d["id"]: d for d in view.decisions() if d["id"] in wrong}
    # which judge was wrong, and the link, before the texts: a whole abstract in `left` pushed them off the page
    rows = [{"doc": by_id[i]["doc"], "type": by_id[i]["type"], "human": by_id[i]["effective"],
             "before": "wrong" if i in ev["disagreeing_before"] else "right",
             "after": "wrong" if i in ev["disagreeing_after"] else "right",
             "left": by_id[i]["left"], "right": by_id[i]["right"]} for i in sorted(by_id)]
    df = pd.DataFrame(rows)
    df.insert(5, "open", links("document", ({"run": view.name, "doc": r["doc"], "decision": i}
                                            for r, i in zip(rows, sorted(by_id), strict=True))))
    st.dataframe(df, hide_index=True, key="improve.wrong",
                 column_config={"open": st.column_config.LinkColumn("open", display_text="review ›"),
                                "left": st.column_config.TextColumn("left", width="large"),
                                "right": st.column_config.TextColumn("right", width="large")})
st.download_button("Download the result (JSON)", json.dumps(result, indent=1, ensure_ascii=False),
                   file_name=f"{view.name}.improve-{strategy}.json", mime="application/json", key="improve.download")
