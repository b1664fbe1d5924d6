"""Original vs audited metrics: the family's headline numbers as cards and its metric rows as tables."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from audit.numbers import EMPTY, format_delta, format_value, is_missing
from scoring.families.base import MetricCell, TaskFamily
from ui.families import section_help
from ui.text import md_literal, visible

NUMBER_COLUMNS = ("precision", "recall", "f1")
ROW_CHARS = 96
"""Characters of a card label (or delta) that fit in one row of cards at 1280 px (wide layout, sidebar open):
four cards of 24; a longer label gets fewer cards per row instead of an ellipsis."""


def cards_per_row(texts: list[str], most: int = 4) -> int:
    """How many cards fit in a row so that the longest of `texts` (labels, deltas) is shown whole.

    >>> cards_per_row(["value F1", "overall F1 (weighted)"]), cards_per_row(["novelty, absolute mean (first system)"])
    (2, 1)
    >>> cards_per_row(["a"] * 7), cards_per_row(["novelty, absolute mean (first system)", "b", "c", "d"])
    (4, 2)
    """
    longest = max((len(t) for t in texts), default=1) + 3  # the help icon and the card's padding
    return max(1, min(most, len(texts), ROW_CHARS // longest))


def _card(cell: MetricCell, original: dict, audited: dict) -> tuple[str, str | None]:
    """(value, delta text or None when audited = original) of one headline card."""
    o, a = cell.value(original), cell.value(audited)
    if is_missing(a):
        return EMPTY, None
    if is_missing(o):  # nothing to compare with (an undefined original): the value alone, never "+nan"
        return format_value(a, cell.unit), None
    delta = a - o
    if abs(delta) <= 1e-12:
        return format_value(a, cell.unit), None
    return format_value(a, cell.unit), f"{format_delta(delta, cell.unit)} vs original {format_value(o, cell.unit)}"


def headline(task: TaskFamily, original: dict, audited: dict) -> None:
    cells = task.headline
    cards = [(cell, *_card(cell, original, audited)) for cell in cells]
    per_row = cards_per_row([c.label for c in cells] + [d for *_, d in cards if d])
    for start in range(0, len(cards), per_row):
        cols = st.columns(per_row)
        for col, (cell, value, delta) in zip(cols, cards[start:start + per_row], strict=False):
            # green for better: a lower median rank is better, so its fall is green ("inverse")
            colour = "off" if not delta else "normal" if cell.higher_is_better else "inverse"
            col.metric(cell.label, value, delta=delta or "= original",
                       delta_color=colour, delta_arrow="auto" if delta else "off",
                       help="With reviewers' labels applied (audited). " + section_help(task.name, cell.section),
                       border=True)


def comparison_rows(task: TaskFamily, original: dict, audited: dict) -> pd.DataFrame:
    """One row per (section, type): P / R / F1 original and audited in columns of their own, every other value of
    the family's metric rows as an (original, audited) pair, and ΔF1."""
    orig = task.metric_rows(original)
    aud = task.metric_rows(audited)
    out = []
    for o, a in zip(orig, aud, strict=True):
        row = {"section": o.get("section", ""), "type": o.get("type", "")}
        for k, v in o.items():
            if k in ("section", "type"):
                continue
            if _is_number(v) and k in NUMBER_COLUMNS:
                row[k] = v
                row[f"{k} audited"] = a.get(k)
            else:
                row[k] = (v, a.get(k))
        if "f1" in o and _is_number(o["f1"]):
            row["ΔF1"] = (a.get("f1") or 0) - o["f1"]
        out.append(row)
    return pd.DataFrame(out)


def _is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and not is_missing(v)


def _pair_column(col: pd.Series) -> pd.Series:
    """(original, audited) cells as shown: the number when unchanged (kept numeric: it sorts), `a → b` when it
    changed, `–` when missing; a column whose every number is whole is a count (LitXBench stores counts as
    floats), else a score with 4 decimals."""
    pairs = [p if isinstance(p, tuple) else (p, p) for p in col]
    numbers = [v for p in pairs for v in p if _is_number(v)]
    unit = "count" if numbers and all(float(v).is_integer() for v in numbers) else "score"
    if all(_is_number(o) and o == a for o, a in pairs):
        return pd.Series([o for o, _ in pairs], index=col.index).astype("int64" if unit == "count" else "float64")

    def text(v: object) -> str:
        return format_value(v, unit) if _is_number(v) or is_missing(v) else visible(v)
    return pd.Series([text(o) if o == a or (is_missing(o) and is_missing(a)) else f"{text(o)} → {text(a)}"
                      for o, a in pairs], index=col.index)


def section_frame(part: pd.DataFrame) -> pd.DataFrame:
    """One section's rows as shown: columns no row of the section has are left out, cells a row lacks read `–`,
    counts are integers, text is shown with its invisible characters made visible."""
    part = part.drop(columns=["section"]).dropna(axis=1, how="all")
    part = part.loc[:, [c for c in part.columns
                        if not all(isinstance(p, tuple) and all(is_missing(v) for v in p) for p in part[c])]]
    out = {}
    for c in part.columns:
        if c == "type":
            out[c] = part[c].map(visible)
        elif any(isinstance(p, tuple) for p in part[c]):
            out[c] = _pair_column(part[c])
        elif part[c].map(is_missing).any():
            out[c] = part[c].map(lambda v: EMPTY if is_missing(v) else format_value(v))
        else:
            out[c] = part[c]
    cols = list(out)
    if "ΔF1" in cols and "f1 audited" in cols:  # the change beside the scores: a wide table (LitXBench) scrolls
        cols.remove("ΔF1")
        cols.insert(cols.index("f1 audited") + 1, "ΔF1")
    return pd.DataFrame({c: out[c] for c in cols}, index=part.index)


def section_tables(task: TaskFamily, original: dict, audited: dict, key: str = "metrics") -> None:
    df = comparison_rows(task, original, audited)
    if df.empty:
        st.info("No metrics.")
        return
    for section, part in df.groupby("section", sort=False):
        if section:
            st.markdown(f"**{md_literal(section)}**", help=section_help(task.name, str(section)) or None)
        shown = section_frame(part)
        st.dataframe(shown, hide_index=True, column_config=number_formats(shown), key=f"{key}.{section}")


def number_formats(frame: pd.DataFrame) -> dict:
    """4 decimals for the float columns, one for a column of whole and half numbers (a median rank)."""
    out = {}
    for c in frame.columns:
        if frame[c].dtype.kind == "f":
            halves = frame[c].dropna().map(lambda v: float(2 * v).is_integer()).all() and c not in (
                *NUMBER_COLUMNS, *(f"{k} audited" for k in NUMBER_COLUMNS), "ΔF1")
            out[c] = st.column_config.NumberColumn(c, format="%.1f" if halves else "%.4f")
    cols = list(frame.columns)
    if "ΔF1" in cols:  # the counts after the change ("57 → 61"): narrow, so the scores fit a 1280 px page
        for c in cols[cols.index("ΔF1") + 1:]:
            out.setdefault(c, st.column_config.Column(c, width="small"))
    return out
