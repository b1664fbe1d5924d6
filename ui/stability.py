"""The run overview's judge-stability section: the stored stability checks (`audit.outputs.stability`), the flip rates
with their Wilson intervals (overall, by kind, type and the run's judge label) and the unstable decisions, each
with a link to its document."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from audit.numbers import count_noun
from audit.outputs.stability import list_checks, stability_report
from audit.store.database import Database
from audit.views import RunView
from ui.decision_link import decision_param
from ui.state import links
from ui.text import show_text

GROUP_TITLES = {"all": "all", "by_kind": "kind", "by_type": "type", "by_run_label": "run's judge label"}


def _percent(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def rate_rows(rates: dict) -> list[dict]:
    """One row per group of a `rates_by` result: group, value, decisions, flipped, rate and its interval."""
    rows = []
    for key, title in GROUP_TITLES.items():
        cells = {"all": rates["all"]} if key == "all" else rates.get(key, {})
        for value, r in cells.items():
            ci = r.get("ci")
            rows.append({"group": title, "value": "" if key == "all" else str(value), "decisions": r["n"],
                         "flipped": r["flipped"], "flip rate": _percent(r["rate"]),
                         "95% interval": "—" if not ci or ci[0] is None else f"{_percent(ci[0])} – {_percent(ci[1])}"})
    return rows


def unstable_rows(report: dict, run: str, numbers: Mapping[int, int]) -> list[dict]:
    """The re-asked decisions whose label flipped or differs from the run's, with their labels and a link;
    `numbers` the decisions' numbers in the run (`RunView.decision_numbers`), what the table and the link show."""
    out = []
    for d in report["decisions"]:
        if not (d["flipped"] or d["changed_vs_run"]):
            continue
        out.append({"decision": numbers[d["id"]], "doc": d["doc"], "kind": d["kind"], "type": d["type"],
                    "run label": d["run_label"],
                    "re-asked labels": ", ".join(f"{k} ×{v}" for k, v in d["distribution"].items()),
                    "flipped": bool(d["flipped"]), "differs from run": bool(d["changed_vs_run"])})
    urls = links("document", ({"run": run, "doc": r["doc"], **decision_param(r["decision"])} for r in out))
    for r, url in zip(out, urls, strict=True):
        r["open"] = url
    return out


def render_stability(conn: Database, run_view: RunView) -> None:
    """The section, when the run has stability checks (nothing otherwise)."""
    checks = list_checks(conn, run_view)
    if not checks:
        return
    report = stability_report(conn, run_view)
    flips = report["flip_rate"]["all"]
    title = (f"Judge stability: {count_noun(len(checks), 'check')}, flip rate {_percent(flips['rate'])} of "
             f"{flips['n']} decisions")
    with st.expander(title, expanded=False):
        st.dataframe([{"check": c["name"], "judge": c["judge"], "attempts": c["attempts"],
                       "decisions": c["decisions"], "answers": c["answers"],
                       "flip rate": _percent(c["flip_rate"]["rate"])} for c in report["checks"]],
                     hide_index=True, key="overview.stability.checks")
        st.caption("Flip rate: share of re-asked decisions whose label is not the same in every attempt, with a "
                   "95% Wilson interval.")
        st.dataframe(rate_rows(report["flip_rate"]), hide_index=True, key="overview.stability.rates")
        unstable = unstable_rows(report, run_view.name,
                                 run_view.decision_numbers([d["id"] for d in report["decisions"]]))
        if not unstable:
            show_text("Every re-asked decision kept its label, the run's label.")
            return
        st.caption(f"{count_noun(len(unstable), 'unstable decision')}: the label flipped between attempts or "
                   "differs from the run's judge label.")
        st.dataframe(unstable, hide_index=True, key="overview.stability.unstable",
                     column_config={"open": st.column_config.LinkColumn("open", display_text="review ›")})
