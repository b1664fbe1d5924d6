"""The owner's blind assignments for the current run (Runs page): the whole run, or one reviewer on it."""

from __future__ import annotations

import streamlit as st
from sqlite_utils import Database

from audit.assignments import EVERYONE, blind_assignments, set_blind_assignment
from audit.errors import AuditError
from ui import auth
from ui.text import show_text

CHOICES = {"blind": True, "not blind (overrides the run's)": False, "no assignment": None}


def blind_assignment_editor(conn: Database, run: str) -> None:
    """Show the run's assignments; the owner changes them (a blind reviewer cannot switch blind off there)."""
    current = blind_assignments(conn, run)
    whole = current.get(EVERYONE)
    show_text(f"Run {run}: " + ("every reviewer reviews blind" if whole else "no run-wide blind assignment") +
              "".join(f"; {who}: {'blind' if b else 'not blind'}" for who, b in sorted(current.items())
                      if who != EVERYONE), "caption")
    if not auth.may("edit_assignments"):
        show_text(auth.refused("edit_assignments"), "caption")
        return
    with st.form("assign.form", border=False):
        who = st.text_input("Reviewer (e-mail address, or * for every reviewer of the run)", value=EVERYONE,
                            key="assign.who")
        choice = st.radio("Assignment", list(CHOICES), horizontal=True, key="assign.choice")
        sent = st.form_submit_button("Save assignment")
    if sent:
        auth.guard("edit_assignments")
        try:
            set_blind_assignment(conn, run, who, CHOICES[choice], set_by=auth.who_for_log())
        except AuditError as e:
            show_text(str(e), "error")
            return
        st.rerun()
