"""One decision as a reviewable card: what the family says about it, the labels, and review buttons drawn from the
decision kind's label scheme (binary: confirm / overrule; ordinal and categorical: one button per label)."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

import streamlit as st

from audit.errors import AuditError
from audit.numbers import count_noun
from audit.review.reviews import UNDO_NOTE, add_review, last_review_by, newest_seen, review_note, undo_label
from audit.review.sharing import also_settles_text, other_runs_asking
from audit.store.database import Database
from scoring.families.base import LabelScheme
from ui import auth
from ui.blind import is_blind
from ui.families import family_view, kind_title
from ui.text import show_error, show_text, visible

CARD_STYLE = """<style>
.rj-card {font-size: 0.95rem; line-height: 1.5;}
.rj-card .lbl {display:inline-block; padding:0 6px; border-radius:4px; font-weight:600; background:#eceef3;}
.rj-card .lbl.pos {background:#d8f5d0; color:#185c0b;}
.rj-card .lbl.neg {background:#fbdada; color:#7a1010;}
.rj-card .lbl.invalid {background:#fde9c4; color:#7a4a00;}
.rj-card .span {font-family: ui-monospace, monospace; background:#f4f4f6; padding:0 4px; border-radius:3px;
  white-space: pre-wrap;}
.rj-card .span.prose {display:block; font-family: inherit; padding:2px 6px; margin:0 0 2px 0;}
.rj-card .side {display:inline-block; min-width:7.5em; color:#555;}
.rj-card.focus {border-left: 4px solid #2f6fdd; padding-left: 8px;}
</style>"""


def _lbl(label: str, scheme: LabelScheme) -> str:
    cls = "invalid" if label == scheme.invalid else ""
    if scheme.scale == "binary" and label in scheme.labels:
        cls = "pos" if label == scheme.positive else "neg"
    return f'<span class="lbl {cls}">{html.escape(scheme.title(label))}</span>'


def decision_title(d: dict, number: int | None) -> str:
    """`#3` (the decision's number in its run), with the database id the CLI takes (`--decision`) beside it when
    they differ."""
    if number is None or number == d["id"]:
        return f"#{d['id']}"
    return f"#{number} <small>(id {d['id']})</small>"


PROSE_CHARS = 160
"""A card value longer than this is prose (a rationale, a question): drawn as a block in the text font, not as a
monospace span (spans keep monospace so their exact characters and spaces are visible)."""


def _value_class(value: object) -> str:
    """
    >>> _value_class("Jabri et al."), _value_class("This feels like a combination of ... " * 6)
    ('span', 'span prose')
    """
    return "span prose" if len(str(value)) > PROSE_CHARS else "span"


def card_html(d: dict, task: str, scheme: LabelScheme, *, blind: bool, focused: bool = False,
              number: int | None = None, also_in: Sequence[str] = ()) -> str:
    """One decision as the classic card and the browser card draw it. `also_in`: the other runs that ask its
    question (`audit.review.sharing.other_runs_asking`), named on the title line (blind too: it names runs,
    never their judges' answers)."""
    e = html.escape
    lines = family_view(task).card_lines(d, blind)

    def row(k: str, v: object) -> str:
        return f'<span class="side">{e(k)}</span><span class="{_value_class(v)}">{e(visible(v))}</span><br>'

    rows = "".join(row(k, v) for k, v in lines if _value_class(v) == "span")
    # prose (a rationale) after the labels: the browser card's box is short (its note field must stay above a 720 px
    # screen), and a long rationale first hid the judge's and the reviewers' labels below it
    prose = "".join(row(k, v) for k, v in lines if _value_class(v) != "span")
    judge = ("<i>judge's answer hidden until you label (blind review)</i>" if blind else
             f"judge label {_lbl(d['judge'], scheme)}")
    humans = "" if blind else " · ".join(f"{e(r)}: {_lbl(lab, scheme)}" for r, lab in d["human"].items())
    eff = "" if blind else f" · effective {_lbl(d['effective'], scheme)} <small>({e(d['source'])})</small>"
    moot = " · <b>moot</b> <small>(not counted under the current labels)</small>" if d.get("moot") else ""
    focus = " focus" if focused else ""
    linked = " · <b>linked decision</b>" if focused else ""
    shared = also_settles_text(also_in)
    # on the title line: a line of its own pushed the browser card's note field below a 720 px screen
    shared = (f' · <small class="rj-shared" title="{e(visible(", ".join(also_in)), quote=True)}">'
              f'↔ {e(visible(shared[0].upper() + shared[1:]))}</small>') if shared else ""
    return (f'<div class="rj-card{focus}"><b>{decision_title(d, number)}</b> · '
            f'{e(kind_title(task, d["kind"]))}{linked}{moot}{shared}<br>'
            f'{rows}{judge}{eff}{("<br>reviews: " + humans) if humans else ""}'
            f'{"<br>" + prose if prose else ""}</div>')


def history_rows(d: dict) -> list[dict]:
    return [{"when (UTC)": r["created"][:19].replace("T", " "), "reviewer": r["reviewer"],
             "label": r["label"] if r["label"] is not None else "(undo)", "role": r["role"],
             "blind": bool(r["blind"]), "note": r["note"] or ""} for r in d["reviews"]]


def label_buttons(d: dict, scheme: LabelScheme, *, hide: bool, role: str,
                  mine: str | None) -> list[tuple[str, str, str, str | None]]:
    """The review buttons of a decision as (label, button text, widget key, shortcut key): confirm / overrule
    (keys a / o) when the judge's binary label is shown, else one button per label with the scheme's keys (blind
    review, ordinal and categorical kinds)."""
    mark = " (yours)"
    if scheme.scale == "binary" and not hide and d["judge"] in scheme.labels:
        other = next(lab for lab in scheme.labels if lab != d["judge"])
        verb = "Settle" if role == "adjudicator" else "Confirm"
        return [(d["judge"], f"✓ {verb} {scheme.title(d['judge'])}" + (mark if mine == d["judge"] else ""),
                 f"review.confirm.{d['id']}", "a"),
                (other, f"✗ Overrule → {scheme.title(other)}" + (mark if mine == other else ""),
                 f"review.overrule.{d['id']}", "o")]
    return [(lab, scheme.title(lab) + (mark if mine == lab else ""), f"review.label.{lab}.{d['id']}",
             scheme.keys.get(lab)) for lab in scheme.labels]


def review_buttons(d: dict, scheme: LabelScheme, *, hide: bool, role: str, mine: str | None,
                   shortcuts: bool, cols: list) -> str | None:
    """Draw the label buttons; return the label clicked (or None)."""
    buttons = label_buttons(d, scheme, hide=hide, role=role, mine=mine)
    # more than two labels (ratings 1-5): a row of their own, since five in one column were cut to 11 px each
    inner = st.columns(len(buttons)) if len(buttons) > 2 else cols[:2]
    clicked = None
    for col, (lab, text, key, short) in zip(inner, buttons, strict=False):
        if col.button(text, key=key, shortcut=short if shortcuts else None):
            clicked = lab
    return clicked


def shortcut_hint(scheme: LabelScheme, *, hide: bool) -> str:
    """The keys of the buttons `review_buttons` draws: confirm / overrule when the judge's label is shown, one key
    per label (the scheme's keys and titles) when it is hidden (blind) or the scale is not binary."""
    if scheme.scale == "binary" and not hide:
        return "a: confirm the judge · o: overrule"
    return " · ".join(f"{scheme.keys[lab]}: {scheme.title(lab)}" for lab in scheme.labels if lab in scheme.keys)


Store = Callable[[int, "str | None", str], None]
"""(decision id, label or None for undo, note) -> None; raises AuditError."""


def review_card(conn: Database, run: str, task: str, d: dict, scheme: LabelScheme, reviewer: str, *, blind: bool,
                role: str = "reviewer", focused: bool = False, shortcuts: bool = False,
                store: Store | None = None, number: int | None = None) -> bool:
    """Render one decision with its label buttons and undo; writes go through `store` (default
    `audit.review.reviews.add_review`).

    Returns True when a review was stored (the caller reruns).
    """
    mine = d["human"].get(reviewer) if role == "reviewer" else None
    hide = is_blind(d, blind=blind, role=role, who=reviewer)
    also_in = other_runs_asking(conn, [d["id"]])[d["id"]]
    with st.container(border=True, key=f"review.card.{d['id']}"):
        st.html(CARD_STYLE + card_html(d, task, scheme, blind=hide, focused=focused, number=number,
                                       also_in=also_in))
        cols = st.columns([2.2, 2.2, 0.7, 1.6])  # confirm, overrule (its label names the other answer), undo, note
        note = cols[3].text_input("Note", key=f"review.note.{d['id']}", label_visibility="collapsed",
                                  placeholder="note (optional)")
        clicked = review_buttons(d, scheme, hide=hide, role=role, mine=mine, shortcuts=shortcuts, cols=cols)
        last = last_review_by(d["reviews"], reviewer, role) if mine is not None else None
        if last is not None and cols[2].button("Undo", key=f"review.undo.{d['id']}",
                                               help="Undo your last label: back to the label you held before it "
                                                    "(none, for a first label), recorded as a new row."):
            clicked = "undo"
        if d["reviews"] and not hide:
            with st.expander(f"History ({count_noun(len(d['reviews']), 'review row')})"):
                st.dataframe(history_rows(d), hide_index=True, key=f"review.history.{d['id']}")
        if not clicked:
            return False
        if not reviewer:
            show_error("Enter your reviewer name in the sidebar first.")
            return False
        if clicked != "undo" and clicked == mine and not review_note(note):
            # the label held already, and nothing to add: each click stored one more identical row (31 rows of
            # one decision, counted as review rows on the Scores page)
            show_text("You hold this label already: nothing was stored (a note with it would be).", "caption")
            return False
        try:
            undo = clicked == "undo" and last is not None
            label = undo_label(d["reviews"], last["id"], who=reviewer, role=role) if undo else clicked
            note = UNDO_NOTE if undo else review_note(note)
            if store is not None:
                store(d["id"], label, note or "")
            else:
                auth.check(auth.review_action(role))
                add_review(conn, run, d["id"], label, reviewer, note=note, blind=hide, role=role,
                           expect_last_review=newest_seen(d["reviews"]) if undo else None,
                           **auth.identity_columns())
        except AuditError as e:
            show_error(str(e))
            return False
        return True
