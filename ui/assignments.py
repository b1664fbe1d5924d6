"""The owner's assignments for the current run (Runs page): blind (the whole run, or one reviewer on it) and
assigned review (who reviews which sampled documents, `audit.review.assigned_review`)."""

from __future__ import annotations

import streamlit as st

from audit.errors import AuditError
from audit.numbers import count_noun
from audit.review.assigned_review import (
    MAX_REVIEWERS,
    DoubleCode,
    clear_review_assignment,
    review_assignment,
    set_review_assignment,
)
from audit.review.blind_assignments import EVERYONE, blind_assignments, set_blind_assignment
from audit.store.database import Database
from ui import auth
from ui.text import show_text

CHOICES = {"blind": True, "not blind (overrides the run's)": False, "no assignment": None}


def blind_assignment_editor(conn: Database, run: str) -> None:
    """Show the run's assignments; the owner changes them (a blind reviewer cannot switch blind off there)."""
    current = blind_assignments(conn, run)
    whole = current.get(EVERYONE)
    show_text(f"Run {run}: " + ("every reviewer reviews blind" if whole else "no run-wide blind assignment") +
              "".join(f"; {who}: {'blind' if b else 'not blind'}" for who, b in sorted(current.items())
                      if who != EVERYONE) + ". An assignment also holds on every run that asks one of the run's "
              "questions (a label settles its question in each of them), so a twin run's blind assignment outweighs "
              "an exemption here.", "caption")
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


def _double_code_text(double_code: dict) -> str:
    return str(double_code["count"]) if "count" in double_code else f"{double_code['fraction']:g}"


def review_assignment_editor(conn: Database, run: str) -> None:
    """Show the run's assigned review (who shares its sampled documents, which are double-coded); the owner sets or
    removes it. Each reviewer's queue then serves their share only."""
    current = review_assignment(conn, run)
    if current is None:
        show_text(f"Run {run}: no assigned review; every reviewer's queue serves every decision (overlap between "
                  "reviewers is accidental).", "caption")
    else:
        show_text(f"Run {run}: {current['planned_documents']} documents ({current['planned_decisions']} decisions: "
                  f"{current['universe']}) shared by {count_noun(len(current['reviewers']), 'reviewer')}; "
                  f"{current['double_coded_documents']} documents ({current['double_coded_decisions']} decisions) "
                  f"double-coded by {current['min_reviewers']} reviewers each; seed {current['seed']}; set by "
                  f"{current['set_by']}.", "caption")
        st.dataframe([{"reviewer": who, "documents": s["documents"], "decisions": s["decisions"]}
                      for who, s in current["shares"].items()], hide_index=True, key="assigned.shares")
        locked_out = [w for w in current["reviewers"] if auth.team_mode() and not auth.config_problem()
                      and auth.role_of(w) is None]
        if locked_out:  # a share nobody can sign in to review: the roles file does not let them in
            show_text(f"Not in the roles file, so they cannot sign in to review their share: {', '.join(locked_out)} "
                      "(add them to the roles file, or save the assignment without them).", "warning")
    if not auth.may("edit_assignments"):
        show_text(auth.refused("edit_assignments"), "caption")
        return
    with st.form("assigned.form", border=False):
        names = st.text_area("Reviewers (one per line; their e-mail addresses in team mode)",
                             value="\n".join(current["reviewers"]) if current else "", key="assigned.reviewers")
        c1, c2, c3, c4 = st.columns(4)
        min_reviewers = c1.number_input("Reviewers per double-coded document", min_value=1, max_value=MAX_REVIEWERS,
                                        value=current["min_reviewers"] if current else 2, step=1, key="assigned.min")
        double = c2.text_input("Double-code (fraction, % or a count)", key="assigned.double",
                               value=_double_code_text(current["double_code"]) if current else "0.2")
        size = c3.number_input("Sample size (documents; 0: all)", min_value=0, step=1, key="assigned.size",
                               value=(current["sample_documents"] or 0) if current else 0)
        seed = c4.number_input("Seed", min_value=0, step=1, value=current["seed"] if current else 0,
                               key="assigned.seed")
        save = st.form_submit_button("Save review assignment")
        remove = st.form_submit_button("Remove review assignment", disabled=current is None)
    if save or remove:
        auth.guard("edit_assignments")
        try:
            if remove:
                clear_review_assignment(conn, run)
            else:
                set_review_assignment(conn, run, [n for line in names.splitlines() for n in line.split(",")],
                                      min_reviewers=int(min_reviewers), double_code=DoubleCode.parse(double),
                                      documents=int(size) or None, seed=int(seed), set_by=auth.who_for_log())
        except AuditError as e:
            show_text(str(e), "error")
            return
        st.rerun()
