"""The "flag a gold error" form (document page, review queue) and the errata table."""

from __future__ import annotations

import streamlit as st

from audit.errors import AuditError
from audit.review.errata import PROBLEMS, add_erratum, flagged_item
from audit.store.database import Database
from audit.views import document
from ui import auth
from ui.families import gold_item_of, gold_items
from ui.text import show_text

OTHER_ITEM = "(an item not in the list / missing from the gold)"


def errata_form(conn: Database, run: str, task: str, doc_id: str, who: str, *, decision: dict | None = None,
                key: str = "errata") -> None:
    """A form to flag one gold item of `doc_id` (preselected: the decision's gold item) with a problem, a proposed
    correction and a note; stored append-only under the reviewer's name. Scores are not changed."""
    items = gold_items(task, document(conn, run, doc_id)["payload"])
    default = gold_item_of(task, decision) if decision is not None else None
    with st.form(f"{key}.form.{doc_id}.{decision['id'] if decision else ''}", clear_on_submit=True, border=False):
        if items:
            options = [*items, OTHER_ITEM]
            item = st.selectbox("Gold item", options, index=options.index(default) if default in options else 0,
                                key=f"{key}.item")
            typed = st.text_input("…or type the item", key=f"{key}.typed",
                                  help="Only used when the item is not in the list (or is missing from the gold).")
        else:
            item, typed = OTHER_ITEM, st.text_input("Gold item", value=default or "", key=f"{key}.typed")
        problem = st.selectbox("Problem", list(PROBLEMS), format_func=lambda p: f"{p} — {PROBLEMS[p]}",
                               key=f"{key}.problem")
        correction = st.text_input("Proposed correction", key=f"{key}.correction",
                                   placeholder="what the gold should say (empty: remove it)")
        note = st.text_area("Note", key=f"{key}.note", height=68, placeholder="why (optional)")
        sent = st.form_submit_button("Flag gold item", type="primary")
    if not sent:
        return
    if not who:
        show_text("Enter your reviewer name in the sidebar first.", "error")
        return
    chosen = flagged_item(None if item == OTHER_ITEM else item, typed)
    try:
        auth.check("flag_erratum")
        add_erratum(conn, run, doc_id, chosen, problem, who, correction=correction, note=note,
                    decision_id=decision["id"] if decision else None, **auth.identity_columns())
    except AuditError as e:
        show_text(str(e), "error")
        return
    show_text(f"Flagged: {chosen or '(missing item)'} — {problem}. See the Gold errata page.", "success")


def errata_popover(conn: Database, run: str, task: str, doc_id: str, who: str, *, decision: dict | None = None) -> None:
    """`errata_form` behind a small button (keeps the review card compact)."""
    with st.popover("⚑ Flag a gold error", help="The gold data looks wrong or incomplete here: flag it with a "
                    "proposed correction. Scores are not changed; flags are listed on the Gold errata page."):
        errata_form(conn, run, task, doc_id, who, decision=decision, key="errata.pop")
