"""Original vs audited metrics: headline numbers and per-type tables."""

from __future__ import annotations

import pandas as pd
import streamlit as st

SECTION_TITLES = {"classification": "Classification", "entities": "Entity extraction",
                  "relations": "Relation extraction"}
HELP = {
    "classification": "Relevant iff the relation dict is non-empty (prediction and gold alike); P/R/F1 per class "
                      "(relevant, irrelevant), macro average = unweighted mean of the two classes' values.",
    "entities": "Flat entity agreement: each predicted entity takes its first matching gold entity of its type "
                "(tp = distinct gold entities hit, fp = unmatched predictions); an independent gold pass gives fn. "
                "Pooled per type; macro average over comb-element, inspiration-src, inspiration-target.",
    "relations": "Relations of the same type are aligned (best partner by share of matched entities); tp/fp/fn are "
                 "entity counts inside aligned relations, pooled per relation type; macro average over "
                 "combination and inspiration.",
}


def headline(original: dict, audited: dict) -> None:
    cols = st.columns(len(SECTION_TITLES))
    for col, (section, title) in zip(cols, SECTION_TITLES.items(), strict=True):
        o, a = original[section]["avg"], audited[section]["avg"]
        delta = a["f1"] - o["f1"]
        col.metric(f"{title} F1", f"{a['f1']:.4f}",
                   delta=f"{delta:+.4f} vs original {o['f1']:.4f}" if abs(delta) > 1e-12 else "= original",
                   delta_color="normal" if abs(delta) > 1e-12 else "off",
                   delta_arrow="auto" if abs(delta) > 1e-12 else "off",
                   help="Macro-averaged F1 with reviewers' labels applied (audited). " + HELP[section], border=True)


def type_table(original: dict, audited: dict, section: str) -> pd.DataFrame:
    rows = []
    for t, o in original[section].items():
        a = audited[section][t]
        row = {"type": t}
        for k in ("precision", "recall", "f1"):
            row[f"{k[0].upper()} orig"] = o[k]
            row[f"{k[0].upper()} audited"] = a[k]
        for k in ("tp", "fp", "fn"):
            if k in o:
                row[k] = f"{o[k]} → {a[k]}" if o[k] != a[k] else str(o[k])
        row["pred over-match"] = a["pred_over_matching"]
        row["gold over-match"] = a["gold_over_matching"]
        rows.append(row)
    return pd.DataFrame(rows)


def section_tables(original: dict, audited: dict) -> None:
    fmt = {c: st.column_config.NumberColumn(c, format="%.3f") for c in
           ("P orig", "P audited", "R orig", "R audited", "F1 orig", "F1 audited", "pred over-match",
            "gold over-match")}
    fmt["pred over-match"] = st.column_config.NumberColumn(
        "pred over-match", format="%.3f", help="(matches − distinct matches) / predicted entities: several "
        "predictions hitting the same gold entity (counted once as tp, not as fp).")
    fmt["gold over-match"] = st.column_config.NumberColumn(
        "gold over-match", format="%.3f", help="(matches − distinct matches) / gold entities.")
    for section, title in SECTION_TITLES.items():
        st.markdown(f"**{title}**", help=HELP[section])
        st.dataframe(type_table(original, audited, section), hide_index=True, column_config=fmt,
                     key=f"metrics.{section}")
