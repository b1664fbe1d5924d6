"""One decision as a reviewable card: the two spans, the judge's answers, the labels, and review buttons."""

from __future__ import annotations

import html

import streamlit as st
from sqlite_utils import Database

from audit.errors import AuditError
from audit.reviews import add_review

CARD_STYLE = """<style>
.rj-card {font-size: 0.95rem; line-height: 1.5;}
.rj-card .lbl {display:inline-block; padding:0 6px; border-radius:4px; font-weight:600;}
.rj-card .match {background:#d8f5d0; color:#185c0b;}
.rj-card .no-match {background:#fbdada; color:#7a1010;}
.rj-card .invalid {background:#fde9c4; color:#7a4a00;}
.rj-card .span {font-family: ui-monospace, monospace; background:#f4f4f6; padding:0 4px; border-radius:3px;}
.rj-card .side {display:inline-block; width:5.5em; color:#555;}
.rj-card.focus {border-left: 4px solid #2f6fdd; padding-left: 8px;}
</style>"""
ANSWER_TEXT = {"yes": "yes", "no": "no", "invalid": "unreadable", "missing": "not in log"}


def _lbl(label: str) -> str:
    return f'<span class="lbl {html.escape(label)}">{html.escape(label)}</span>'


def card_html(d: dict, *, blind: bool, focused: bool = False) -> str:
    e = html.escape
    fwd = d["detail"].get("pred_gold", {})
    bwd = d["detail"].get("gold_pred", {})
    judge = ("<i>hidden until you commit (blind review)</i>" if blind else
             f"judge: pred→gold <b>{e(ANSWER_TEXT.get(fwd.get('value', ''), fwd.get('value', '?')))}</b>, "
             f"gold→pred <b>{e(ANSWER_TEXT.get(bwd.get('value', ''), bwd.get('value', '?')))}</b> ⇒ "
             f"{_lbl(d['judge'])}")
    humans = "" if blind else " · ".join(f"{e(r)}: {_lbl(lab)}" for r, lab in d["human"].items())
    eff = "" if blind else f" · effective {_lbl(d['effective'])} <small>({e(d['source'])})</small>"
    extra = ""
    if not blind:
        for side in (fwd, bwd):
            if side.get("rationale") or (side.get("raw") and side.get("value") == "invalid"):
                extra += f"<br><small>{e(str(side.get('rationale') or side.get('raw'))[:400])}</small>"
    focus = " focus" if focused else ""
    linked = " · <b>linked decision</b>" if focused else ""
    return (f'<div class="rj-card{focus}"><b>#{d["id"]}</b> · {e(d["type"])}{linked}<br>'
            f'<span class="side">predicted</span><span class="span">{e(d["left"])}</span><br>'
            f'<span class="side">gold</span><span class="span">{e(d["right"])}</span><br>{judge}{eff}'
            f'{("<br>reviews: " + humans) if humans else ""}{extra}</div>')


def history_rows(d: dict) -> list[dict]:
    return [{"when (UTC)": r["created"][:19].replace("T", " "), "reviewer": r["reviewer"],
             "label": r["label"] if r["label"] is not None else "(undo)", "role": r["role"],
             "blind": bool(r["blind"]), "note": r["note"] or ""} for r in d["reviews"]]


def review_card(conn: Database, run: str, d: dict, labels: tuple[str, ...], reviewer: str, *, blind: bool,
                role: str = "reviewer", focused: bool = False, shortcuts: bool = False) -> bool:
    """Render one decision with confirm / overrule / undo; writes go through `audit.reviews.add_review`.

    Returns True when a review was stored (the caller reruns).
    """
    mine = d["human"].get(reviewer) if role == "reviewer" else None
    hide = blind and mine is None and role == "reviewer"
    with st.container(border=True, key=f"review.card.{d['id']}"):
        st.html(CARD_STYLE + card_html(d, blind=hide, focused=focused))
        cols = st.columns([1.5, 1.6, 0.7, 2.6])
        note = cols[3].text_input("Note", key=f"review.note.{d['id']}", label_visibility="collapsed",
                                  placeholder="note (optional)")
        clicked: str | None = None
        keys = iter(("a", "o") if shortcuts else (None, None))
        if hide or d["judge"] not in labels:
            for col, lab in zip(cols[:2], labels, strict=False):
                if col.button(f"Label: {lab}", key=f"review.label.{lab}.{d['id']}", shortcut=next(keys)):
                    clicked = lab
        else:
            other = next(lab for lab in labels if lab != d["judge"])
            verb = "Settle" if role == "adjudicator" else "Confirm"
            mark = " (yours)"
            if cols[0].button(f"✓ {verb} {d['judge']}" + (mark if mine == d["judge"] else ""),
                              key=f"review.confirm.{d['id']}", shortcut=next(keys)):
                clicked = d["judge"]
            if cols[1].button(f"✗ Overrule → {other}" + (mark if mine == other else ""),
                              key=f"review.overrule.{d['id']}", shortcut=next(keys)):
                clicked = other
        if mine is not None and cols[2].button("Undo", key=f"review.undo.{d['id']}",
                                               help="Withdraw your label (recorded as a new row)."):
            clicked = "undo"
        if d["reviews"] and not hide:
            with st.expander(f"History ({len(d['reviews'])} review rows)"):
                st.dataframe(history_rows(d), hide_index=True, key=f"review.history.{d['id']}")
        if not clicked:
            return False
        if not reviewer:
            st.error("Enter your reviewer name in the sidebar first.")
            return False
        try:
            add_review(conn, run, d["id"], None if clicked == "undo" else clicked, reviewer, note=note or None,
                       blind=hide, role=role)
        except AuditError as e:
            st.error(str(e))
            return False
        return True
