"""Agreement: human vs judge (and human vs human) per decision kind and type, with document-bootstrap intervals."""

import pandas as pd
import streamlit as st

from audit.numbers import count_noun
from audit.outputs.agreement import agreement, agreement_rows, raw_agreement_interval
from audit.outputs.agreement_rule import (
    MIN_DECISIONS,
    MIN_DOCUMENTS,
    MINIMUM_SOURCE,
    alpha_statistic,
    any_settled,
    statistic_of,
)
from audit.outputs.alt_test import MIN_HUMANS as ALT_MIN_HUMANS
from audit.outputs.alt_test import MIN_ITEMS_PER_HUMAN as ALT_MIN_ITEMS
from audit.outputs.alt_test import RECOMMENDED_HUMANS as ALT_RECOMMENDED
from audit.outputs.figures import agreement_intervals, confusion_heatmap
from audit.outputs.report import agreement_points, alpha_groups_of
from audit.review.assigned_review import assignment_stamp, planned_overlap_text
from audit.store.database import default_db_path, reviews_version
from audit.views import RunView
from ui.decision_link import decision_param
from ui.entry import page_prologue
from ui.families import error_columns_help, group_title, kind_title
from ui.state import blind_guard, current_view, links
from ui.text import show_text

HELP = {
    "n": "Labels compared (one per decision; both orders of a pairwise comparison count apart).",
    "documents": "Documents the decisions come from: the intervals resample documents.",
    "statistic": "The family's label scheme decides: quadratic-weighted κ for ordered ratings, Cohen's κ otherwise.",
    "value [95%]": "The statistic with its 95% percentile bootstrap interval resampling documents; 'undefined' "
                   "when it cannot say anything (the note under the table says why).",
    "raw agreement": "Share of decisions where the two labels are equal; 95% interval resampling documents.",
    "PABAK": "Prevalence-adjusted bias-adjusted kappa = (k·po − 1)/(k − 1).",
    "AC1": "Gwet's AC1: chance agreement from the mean label prevalence; stable when one label dominates.",
}
# Pixel widths: each table stays inside a 1280 px window beside the sidebar (about 820 px of page).
WIDTHS = {"group": 190, "reviewers": 230, "n": 50, "documents": 80, "statistic": 145, "value [95%]": 165,
          "raw agreement": 150,
          "PABAK": 80, "AC1": 80, "lenient": 110, "strict": 110}
MAIN = ["group", "n", "documents", "statistic", "value [95%]", "raw agreement"]
MORE = ["group", "PABAK", "AC1", "lenient", "strict"]


@st.cache_data(show_spinner="Computing agreement and bootstrap intervals…", max_entries=32)
def cached_agreement(_view: RunView, key: tuple) -> dict:  # noqa: ARG001 - (db, run, policy, reviews version)
    return agreement(_view.db, _view)


def fmt_ci(value: float | None, ci: list | None) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def count(value: int | None) -> str:
    return "—" if value is None else str(value)


def _wilson(how: str) -> bool:
    """Whether `raw_agreement_interval` fell back to the Wilson interval (one document: no document bootstrap),
    which the table marks, since its caption speaks of document-bootstrap intervals."""
    return how.startswith("Wilson")


def stats_table(groups: dict, task: str) -> pd.DataFrame:
    """One row per group under `audit.outputs.agreement_rule`: the family's statistic, 'undefined' (never 0) when it
    says
    nothing; why is said under the table (`notes`)."""
    rows = []
    for g, s in groups.items():
        stat = statistic_of(s)
        raw_ci, how = raw_agreement_interval(s)
        rows.append({
            "group": group_title(task, g), "n": s["n"], "documents": s.get("n_clusters"), "statistic": stat.name,
            "value [95%]": stat.text(3) if stat.defined else "undefined (see note)",
            "raw agreement": fmt_ci(s["raw_agreement"], raw_ci) + (" Wilson" if _wilson(how) else ""),
            "PABAK": fmt(s.get("pabak")), "AC1": fmt(s.get("ac1")),
            "lenient": count(s.get("judge_lenient")), "strict": count(s.get("judge_strict")),
        })
    return pd.DataFrame(rows)


def notes(groups: dict, task: str) -> list[str]:
    """Plain-words notes: why a statistic is undefined, why an interval is missing, and few-review warnings; groups
    with the same note share one line."""
    by_note: dict[str, list[str]] = {}
    for g, s in groups.items():
        stat = statistic_of(s)
        how = raw_agreement_interval(s)[1]
        said = [x for x in (stat.undefined and f"{stat.name} undefined: {stat.undefined}", stat.ci_undefined,
                            stat.warning, _wilson(how) and f"raw agreement's interval: {how}") if x]
        if said:
            by_note.setdefault("; ".join(said), []).append(group_title(task, g))
    return [f"{', '.join(names)}: {note}." for note, names in by_note.items()]


def show_table(groups: dict, task: str, key: str, first: str = "group") -> None:
    config = {k: st.column_config.Column(k, help=v, width=WIDTHS.get(k))
              for k, v in (HELP | error_columns_help(task)).items()}
    config["group"] = st.column_config.Column(first, width=WIDTHS[first])
    frame = stats_table(groups, task)
    st.dataframe(frame[MAIN], hide_index=True, key=key, column_config=config)
    more = frame[MORE]
    if not (more.drop(columns="group") == "—").all().all():
        st.caption("Chance-robust agreement and the judge's errors (human as truth), per group:" if first == "group"
                   else "Chance-robust agreement, per pair of reviewers:")
        st.dataframe(more, hide_index=True, key=f"{key}.more", column_config=config)
    said = notes(groups, task)
    for line in said:
        show_text(line, "caption")
    if any("few reviews" in line for line in said):
        show_text(f"Few reviews means fewer than {MIN_DECISIONS} decisions or {MIN_DOCUMENTS} documents: "
                  f"{MINIMUM_SOURCE}.", "caption")


conn = page_prologue()
st.title("Agreement")
run_view = current_view(conn)
run = run_view.name
blind_guard("agreement")
row = run_view.row
result = cached_agreement(run_view, (default_db_path(), run, run_view.policy, reviews_version(conn, row["id"]),
                                     assignment_stamp(conn, run)))
hvj = result["human_vs_judge"]
hvh_all = result["human_vs_human"]
hvh = hvh_all.get("pairs", {}) if "pairs" in hvh_all else hvh_all  # {reviewer pair: stats}
if not any_settled(hvj) and not hvh:
    st.info("No reviews yet. Agreement appears once someone has confirmed or overruled decisions (confirmations "
            "count: agreement over overrules alone would be meaningless).")
    if result.get("planned_overlap"):
        show_text(planned_overlap_text(result["planned_overlap"]), "caption")
    st.stop()

st.subheader("Human vs judge")
if result.get("unit"):
    show_text(f"Unit: {result['unit']}" + (f" · reviews used: {result['reviews_used']}"
                                           if result.get("reviews_used") else ""), "caption")
if result["excluded_judge_invalid"]:
    n = int(result["excluded_judge_invalid"])
    st.caption(f"{count_noun(n, 'decision')} with an unreadable judge answer {'is' if n == 1 else 'are'} left out of "
               "human vs judge.")
if result.get("excluded_conflicted"):
    n = int(result["excluded_conflicted"])
    st.caption(f"{count_noun(n, 'decision')} whose reviewers disagree (not adjudicated) {'is' if n == 1 else 'are'} "
               "left out of human vs judge.")
if result.get("learnt_in_sample"):
    show_text(result["learnt_in_sample"]["text"] + ".", "warning")
if any_settled(hvj):
    show_table(hvj, row["task"], "agreement.hvj")
else:
    show_text(f"{statistic_of(hvj['all']).name} undefined: {hvj['all']['kappa_undefined']}.", "info")
points = agreement_points(run_view, result)  # the report's agreement chart, from the same rows
if points:
    st.caption("Human vs judge beside the human-human ceiling (95% document-bootstrap intervals); a statistic that "
               "is undefined is not drawn.")
    st.altair_chart(agreement_intervals(points), key="agreement.kappa_chart")
per_item = result.get("per_item") or {}
if per_item:  # ideation.md §6: the judge's rating against the mean human rating, item by item

    def _num(v: float | None) -> str:
        return "—" if v is None else f"{v:.3f}"

    show_text("Item by item (each rated item: an idea on one criterion): the judge's rating against the mean of the "
              "human ratings, over the items of each criterion. Pairwise accuracy is the share of item pairs whose "
              "human means differ that the judge orders the same way (a judge tie counts as not the same).", "caption")
    st.dataframe(pd.DataFrame([{"criterion": group_title(row["task"], g), "items": s["n_items"],
                                "Spearman ρ": _num(s["spearman"]), "Kendall τ-b": _num(s["kendall_tau_b"]),
                                "pairwise accuracy": _num(s["pairwise_accuracy"]), "note": s["why"] or ""}
                               for g, s in per_item.items()]), hide_index=True, key="agreement.per_item")
st.subheader("Human vs human (the ceiling)")
if hvh:
    show_table(hvh, row["task"], "agreement.hvh", first="reviewers")
    alphas = alpha_groups_of(result)
    if alphas:
        st.dataframe(pd.DataFrame([{
            "group": group_title(row["task"], g), "level": a.get("level") or "—",
            "Krippendorff's α": alpha_statistic(a).text(3), "decisions with two labels": a.get("n_pairable_units"),
        } for g, a in alphas.items()]), hide_index=True, key="agreement.alpha",
            column_config={"group": st.column_config.Column("group", width="medium"),
                           "Krippendorff's α": st.column_config.Column(
                               "Krippendorff's α", help="Over all reviewers; ordinal level for ordered ratings "
                                                         "(one per criterion), nominal otherwise.")})
        pooled = result["human_vs_human"].get("alpha") or {}
        if len(alphas) > 1 and pooled.get("reason"):
            st.caption("Krippendorff's α is given per kind and criterion: ratings of different criteria and labels "
                       "on different scales are not pooled into one number.")
elif result.get("reviews_used") == "blind" and result.get("two_labels_all_reviews"):
    st.info(f"No decision has two blind labels yet; {count_noun(result['two_labels_all_reviews'], 'decision')} "
            f"{'has' if result['two_labels_all_reviews'] == 1 else 'have'} two labels when sighted reviews count "
            "(agreement reads only blind reviews while the run has any: sighted labels are anchored on the judge's "
            "answer).")
else:
    st.info("No decision has been labelled by two reviewers yet.")
overlap = result.get("planned_overlap")
if overlap:  # an assigned review: agreement on the overlap planned before review, not on whoever happened to meet
    st.subheader("Planned overlap (assigned review)")
    show_text(planned_overlap_text(overlap) + (" Human vs human on that planned subset alone:"
                                               if overlap["human_vs_human"]["pairs"] else ""), "caption")
    planned = overlap["human_vs_human"]
    if planned["pairs"]:
        show_table(planned["pairs"], row["task"], "agreement.planned", first="reviewers")
    if planned["alpha"]:
        show_text(f"Krippendorff's α on the planned subset: {alpha_statistic(planned['alpha']).text(3)}", "caption")

st.subheader("Can the judge replace a human? (alternative annotator test)")
tests = result.get("alt_test") or {}
ALT_NEEDS = (f"the test needs at least {ALT_MIN_HUMANS} reviewers (the paper recommends {ALT_RECOMMENDED}) who each "
             f"labelled {ALT_MIN_ITEMS} or more decisions that another reviewer labelled too")
if not tests:
    show_text("No verdict: no reviewer's own label yet (adjudications are not an annotator's label); " + ALT_NEEDS
              + ", so the judge can be compared with each of them against the others.", "info")
for kind, t in tests.items():
    verdict = ("gets no verdict" if t["undefined"] else "passes" if t["passes"] else "does not pass")
    headline = (f"{group_title(row['task'], kind)}: the judge {verdict}" +
                ("" if t["undefined"] else f" (winning rate ω = {t['winning_rate']:.2f}, average advantage "
                                            f"probability ρ = {t['advantage_probability']:.3f})") +
                f" · ε = {t['epsilon']:g}, {'negative RMSE' if t['scoring'] == 'neg_rmse' else 'accuracy'}, "
                f"{count(t['n_items'])} decisions with two or more humans")
    show_text(headline)
    if t["undefined"]:
        show_text(f"Why: {ALT_NEEDS}; {len(t['annotators'])} did here.", "caption")
    if t["warning"]:
        show_text(t["warning"], "caption")
    if t["annotators"]:
        st.dataframe(pd.DataFrame([{
            "left-out human": a["annotator"], "decisions": a["n_items"], "ρ judge": round(a["rho_judge"], 3),
            "ρ human": round(a["rho_human"], 3), "p (BY-adjusted)": round(a["p_adjusted"], 4),
            "judge wins": "yes" if a["judge_wins"] else "no"} for a in t["annotators"]]),
            hide_index=True, key=f"agreement.alt.{kind}")
    for who, why in t["skipped"].items():
        show_text(f"{who} not tested: {why}", "caption")
st.caption("Calderon, Reichart & Dror (2025): each human in turn is left out; the judge wins against them when it "
           "aligns with the remaining humans at least as often as they do, up to the margin ε (the test is "
           "one-sided, Benjamini-Yekutieli corrected). The judge passes when it wins against at least half of the "
           "humans. Definitions: docs/alt-test.md.")

st.subheader("Confusion matrix")
which = st.radio("Compare", ["human vs judge", "human vs human"], horizontal=True, key="agreement.which",
                 disabled=not hvh)
groups = {g: st_ for g, st_ in (hvj if which == "human vs judge" else hvh).items() if st_.get("n")}
if groups:
    if st.session_state.get("agreement.group") not in groups:
        st.session_state.pop("agreement.group", None)
    group = st.selectbox("Group", list(groups), key="agreement.group",
                         format_func=lambda g: g if which == "human vs human" else group_title(row["task"], g))
    chart = confusion_heatmap(groups[group]["confusion"], row_title="human" if which == "human vs judge"
                              else "first reviewer", col_title="judge" if which == "human vs judge"
                              else "second reviewer")
    event = st.altair_chart(chart, on_select="rerun", key="agreement.heatmap")
    picked = (event or {}).get("selection", {}).get("cell") or []
    all_rows = agreement_rows(conn, run_view)
    rows = pd.DataFrame(all_rows["hvj"] if which == "human vs judge" else all_rows["hvh"])
    if which == "human vs human":
        rows = rows[rows["reviewer"] == group]
    elif group in ("trivial", "non-trivial"):
        rows = rows[rows["trivial"] == (group == "trivial")]
    elif group != "all":
        kind, _, typ = group.partition("/")
        rows = rows[(rows["kind"] == kind) & ((rows["type"] == typ) if typ else True)]
    if picked:
        cell = picked[0]
        rows = rows[(rows["human"] == cell["human"]) & (rows["judge"] == cell["judge"])]
        show_text(f"Decisions behind the cell human = {cell['human']}, judge = {cell['judge']}:", "caption")
    else:
        st.caption("Click a cell to list the decisions behind it.")
    numbers = run_view.decision_numbers(rows["decision"].tolist()) if len(rows) else {}
    rows = rows.assign(kind=[kind_title(row["task"], k) for k in rows["kind"]] if len(rows) else [],
                       open=links("document", ({"run": run, "doc": d, **decision_param(numbers[i])}
                                               for d, i in zip(rows["doc"], rows["decision"], strict=True))))
    rows["decision"] = [numbers[i] for i in rows["decision"]]  # its number in the run, as the other pages show it
    # the link and the labels first: the spans are long, and columns past 1280 px are off-screen
    st.dataframe(rows[["open", "decision", "doc", "human", "judge", "reviewer", "kind", "type", "left", "right"]],
                 hide_index=True, key="agreement.rows",
                 column_config={"decision": st.column_config.NumberColumn("#", help="The decision's number in this "
                                                                          "run."),
                                "open": st.column_config.LinkColumn("open", display_text="review ›")})
else:
    show_text(f"No {which} decision to draw yet: none counts (see above).", "caption")
