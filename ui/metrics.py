"""Original vs audited metrics: the family's headline numbers as cards and its metric rows as tables."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from scoring.families.base import TaskFamily
from ui.families import section_help

NUMBER_COLUMNS = ("precision", "recall", "f1")


def headline(task: TaskFamily, original: dict, audited: dict) -> None:
    cells = task.headline
    cols = st.columns(min(len(cells), 4))
    for col, cell in zip(cols, cells, strict=False):
        o, a = cell.value(original), cell.value(audited)
        if a is None:
            col.metric(cell.label, "—", border=True)
            continue
        delta = (a - o) if o is not None else 0.0
        col.metric(cell.label, f"{a:.4f}",
                   delta=f"{delta:+.4f} vs original {o:.4f}" if abs(delta) > 1e-12 else "= original",
                   delta_color="normal" if abs(delta) > 1e-12 else "off",
                   delta_arrow="auto" if abs(delta) > 1e-12 else "off",
                   help="With reviewers' labels applied (audited). " + section_help(task.name, cell.section),
                   border=True)


def comparison_rows(task: TaskFamily, original: dict, audited: dict) -> pd.DataFrame:
    """One row per (section, type): every number of the family's metric rows, original and audited, and ΔF1."""
    orig = task.metric_rows(original)
    aud = task.metric_rows(audited)
    out = []
    for o, a in zip(orig, aud, strict=True):
        row = {"section": o.get("section", ""), "type": o.get("type", "")}
        for k, v in o.items():
            if k in ("section", "type"):
                continue
            if isinstance(v, int | float) and not isinstance(v, bool) and k in NUMBER_COLUMNS:
                row[k] = v
                row[f"{k} audited"] = a.get(k)
            else:
                av = a.get(k)
                row[k] = "" if v is None else (_plain(v) if av == v else f"{_plain(v)} → {_plain(av)}")
        if "f1" in o and isinstance(o["f1"], int | float):
            row["ΔF1"] = (a.get("f1") or 0) - o["f1"]
        out.append(row)
    return pd.DataFrame(out)


def _plain(v: object) -> str:
    return f"{v:.4f}" if isinstance(v, float) else str(v)


def section_tables(task: TaskFamily, original: dict, audited: dict, key: str = "metrics") -> None:
    df = comparison_rows(task, original, audited)
    if df.empty:
        st.info("No metrics.")
        return
    fmt = {c: st.column_config.NumberColumn(c, format="%.4f") for c in df.columns
           if c.split(" ")[0] in NUMBER_COLUMNS or c == "ΔF1"}
    for section, part in df.groupby("section", sort=False):
        if section:
            st.markdown(f"**{section}**", help=section_help(task.name, str(section)) or None)
        st.dataframe(part.drop(columns=["section"]), hide_index=True, column_config=fmt,
                     key=f"{key}.{section}")
