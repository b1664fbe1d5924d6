"""Judged-items view: the item's input and references, the system's output, and per verdict the scorer, the answer
it judged, and (unless blind) the judge's value, explanation and prompt."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from audit.outputs.report import Section, para, table
from audit.views import RunView
from scoring.families.verdicts.model import CPI, SCORE
from ui.families import DocumentContext
from ui.text import md_literal, readable, show_text

DOC_ID_TITLE = "item id"
SECTION_HELP = {
    "headline": "The headline scorer's mean verdict over the items it judged (the scorer the log lists first): "
                "accuracy for C/P/I grades (C = 1, P = 0.5, I = N = 0), "
                "the pass rate for pass/fail verdicts, the mean score for numeric scores, as the framework reports "
                "it.",
    "scorers": "Each scorer's mean verdict over the items it judged.",
}
OUTCOME_HELP = "The headline scorer's verdict after review: correct (worth 1), partial, or incorrect (worth 0)."
DECISIONS_HELP = ("One decision per scorer's verdict on an item, as the eval framework recorded it (its judge is "
                  "not asked again): confirm it or give the verdict the item deserves.")


def card_lines(d: dict, blind: bool = False) -> list[tuple[str, str]]:
    """Scorer, the answer judged and the references; unless blind, the recorded value and the judge's reply."""
    det = d.get("detail", {})
    lines = [("scorer", d["type"]), ("answer judged", readable(d["left"])), ("reference", readable(d["right"]))]
    if d["kind"] == SCORE and det.get("threshold") is not None:
        lines.append(("threshold", f"{det['threshold']:g} (passes at or "
                                   f"{'below' if det.get('lower_is_better') else 'above'} it)"))
    if not blind:
        lines.append(("recorded value", str(det.get("value"))))
        if det.get("explanation"):
            lines.append(("judge's explanation", readable(det["explanation"])))
    return lines


def card_context(payload: dict, d: dict) -> list[tuple[str, str]]:  # noqa: ARG001 (view protocol)
    """The item's input, as text lines above a card."""
    return [("input", readable(payload["gold"]["input"]))]


def preview(payload: dict, d: dict) -> None:  # noqa: ARG001 (view protocol)
    show_text(f"input: {payload['gold']['input']}", "caption")


def gold_items(payload: dict) -> list[str]:
    return list(payload["gold"]["target"])


def render_document(ctx: DocumentContext) -> None:
    payload = ctx.doc["payload"]
    hide = ctx.hide_derived
    st.markdown("**Input**")
    show_text(payload["gold"]["input"])
    st.markdown("**Reference**" if len(payload["gold"]["target"]) == 1 else "**References**")
    for t in payload["gold"]["target"]:
        show_text(t)
    st.markdown("**Output**")
    show_text(payload["output"])
    if hide:
        return
    for v in payload["verdicts"]:
        with st.expander(md_literal(f"{v['scorer']}: recorded {v['value']}")
                         + (" (C/P/I)" if v["scheme"] == CPI else "")):
            if v.get("explanation"):
                show_text(v["explanation"])
            if v.get("prompt"):
                show_text("grader prompt:", "caption")
                show_text(v["prompt"])
    source = payload.get("source") or {}
    if source:
        show_text(", ".join(f"{k}: {v}" for k, v in source.items()), "caption")


# ---------------------------------------------------------------- the audit report's family section


def report_panel(run: RunView, data: Mapping) -> Section | None:
    """The audit report's section of this family (view protocol `report_panel`): None for an export without
    `scorers`."""
    if "scorers" not in data["original"]:
        return None
    s = Section("each scorer, judge only vs audited")
    _report_body(run, data, s)
    return s


def _report_body(_view: RunView, data: Mapping, s: Section) -> None:
    """A framework's scorers: each one's mean verdict as the framework reported it (judge only) and audited."""
    o, a = data["original"]["scorers"], (data.get("audited") or {}).get("scorers", {})
    s.body.append(para("Each scorer's mean verdict over the items it judged (accuracy, pass rate or mean score, as "
                       "the eval framework reports it), from what its judge recorded and under the reviews."))
    s.body.append(table(["scorer", "items", "judge only", "audited"],
                        [[name, m.get("n"), m.get("mean"), a.get(name, {}).get("mean")] for name, m in o.items()]))
