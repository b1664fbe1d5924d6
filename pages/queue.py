"""Review queue: one decision at a time, keyboard first.

The card lives in a fragment (`st.fragment`): a key press stores the review and re-renders only the card, so the
next decision is on screen without re-running the page. Keys: the label keys of the card, n / → next, p / ← back,
Backspace undoes this session's last review (for adjudicators too). A strip under the card says what the last key
stored and what it changed.
"""

from __future__ import annotations

import streamlit as st

from audit.errors import AuditError
from audit.review.assigned_review import assignment_stamp, share_of, share_progress, share_queue_ids
from audit.review.queue import (
    BLIND_QUEUES,
    QUEUES,
    SAMPLE_TAKES_NO_FILTER,
    certain_decisions,
    change_strip,
    decision_types,
    decision_view,
    labelled_count,
    progress_text,
    reviewer_progress_db,
)
from audit.review.reviews import UNDO_NOTE, add_review, newest_seen, review_note, undo_label
from audit.review.sample_progress import sample_caption
from audit.review.sampling import ALL_KINDS, create_plan, load_plan, plan_kinds, plan_summary
from audit.review.sharing import other_runs_asking
from audit.store.database import Database, default_db_path, open_db, plan_stamp
from audit.views import document
from ui import auth
from ui.blind import is_blind
from ui.decision_link import decision_param
from ui.decisions import CARD_STYLE, card_html, label_buttons, shortcut_hint
from ui.entry import page_prologue
from ui.errata import errata_form
from ui.families import doc_noun, family_view
from ui.owner_only import role_button
from ui.queue_progress import progress_line
from ui.queue_progress import sample_line as queue_sample_line
from ui.review_card.component import page_refresher, queue_token, save_grant
from ui.review_card.component import review_card as browser_card
from ui.review_card.store import Reviewer, refusal_text
from ui.state import blind, current_view, db, is_blind_reviewer, link_params, reviewer, role, sample_now
from ui.text import md_literal, show_error, show_text

IDS, POS, KEY, HISTORY = "queue.ids", "queue.pos", "queue.key", "queue.history"
STRIP, ERROR, FLAG, NOTE = "queue.strip", "queue.error", "queue.flag_open", "queue.note"
TIGHT = """<style>
.block-container {padding-top: 4rem !important;}
.st-key-queue-head h1 {font-size: 1.7rem; padding: 0 0 0.1rem 0;}
</style>"""

conn = page_prologue()
run_view = current_view(conn)
run, row, task = run_view.name, run_view.row, run_view.task
noun = doc_noun(task.name)
who = reviewer()
hidden = is_blind_reviewer()
st.html(TIGHT + CARD_STYLE)
with st.container(key="queue-head"):
    st.title("Review queue")
if not who:
    st.warning("Enter your reviewer name in the sidebar: the queue is personal (what *you* have not labelled).")

queues = {k: v for k, v in QUEUES.items() if not hidden or k in BLIND_QUEUES}
plan = plan_stamp(conn, run_view.id, ALL_KINDS)  # whether the run has a plan (decoded only where it is used)
# Assigned review: a reviewer's queues serve their share of the run only (adjudicating is not restricted).
share = share_of(conn, run, who) if who and role() == "reviewer" else None
if st.session_state.get("queue.mode") not in queues:
    st.session_state["queue.mode"] = "sample" if plan is not None else next(iter(queues))  # a plan: sample first
c1, c2, c3, c4 = st.columns([1.6, 1.5, 1, 1])
mode = c1.selectbox("Queue", list(queues), format_func=lambda q: f"{q} — {queues[q]}", key="queue.mode")
all_types = decision_types(conn, run_view)
# the sample queue serves the plan's documents whole, in its random order: a filter would hand-pick them
sampled_queue = mode == "sample"
no_filter = SAMPLE_TAKES_NO_FILTER if sampled_queue else None
types = c2.multiselect("Type", all_types, key="queue.types", disabled=sampled_queue, help=no_filter)
labels: list[str] = []
if not hidden:  # a filter on the judge's label would tell a blind reviewer the judge's answer
    judge_labels = list(dict.fromkeys(lab for s in task.label_schemes.values() for lab in s.judge_labels))
    labels = c3.multiselect("Judge label", judge_labels, key="queue.labels", disabled=sampled_queue, help=no_filter)
doc_filter = c4.text_input(f"{noun.capitalize()} id contains", key="queue.doc", disabled=sampled_queue,
                           help=no_filter).strip()
if sampled_queue:
    types, labels, doc_filter = [], [], ""
nxt = None  # the sample queue's suggested next document
if mode == "sample":
    by_kind = [k for k in plan_kinds(conn, run_view) if k != ALL_KINDS] if plan is None else []
    if by_kind:  # made with `plan --kind`: one scope per run, so no plan of every kind can be added beside it
        show_text(f"This run's sampling plan is for {', '.join(by_kind)} decisions only (made with the CLI's "
                  "plan --kind). The dashboard's sample queue follows a plan of every decision kind: follow this one "
                  "with the CLI's queue --kind, and read its estimate with estimate --kind, the export or the "
                  "report.", "info")
    elif plan is None:
        show_text("This run has no sampling plan yet. A plan fixes, before review, which documents to review in "
                  "which order, so that a partial review gives an honest estimate of the full-review score "
                  "(Scores page).", "info")
        if role_button("Create a sampling plan (seed 0)", action="edit_assignments", key="queue.create_plan"):
            auth.guard("edit_assignments")
            try:
                create_plan(conn, run_view, seed=0)
                st.rerun()
            except AuditError as e:  # shown, not lost to the rerun
                show_error(str(e))
    else:
        if warning := plan_summary(load_plan(conn, run_view)).get("warning"):
            show_text(f"This plan has {warning}", "warning")
        try:
            nxt = sample_now(run_view)  # its decisions come first in the queue; the caption is drawn in the card's
        except AuditError as e:        # fragment (`sample_header`), so that it follows the labels
            nxt = None
            show_error(str(e))
# Blind: no skipping and no reordering of certain decisions (both follow the judge's answers)
skip_trivial = mode == "unreviewed" and bool(task.certain_decisions) and share is None and not hidden and st.toggle(
    f"Skip decisions whose answer is certain ({md_literal(task.certain_decisions)}) where the judge gave it",
    value=True, key="queue.skip_trivial")
contradicted = sum(s == "contradicted" for s in certain_decisions(run_view).values()) if task.certain_decisions else 0
if contradicted and mode != "sample" and not hidden:  # which decisions the judge got wrong is the judge's answer
    show_text(f"{contradicted} decisions whose answer is certain ({task.certain_decisions}) got another answer from "
              "the judge: they come first in this queue, as the judge's plainest errors.", "caption")
if share and task.certain_decisions:
    show_text(f"Your share includes its decisions whose answer is certain ({task.certain_decisions}): a share is "
              "whole documents, and a document counts in the estimates once all its decisions are labelled.",
              "caption")
# `?card=classic` opens the classic card (a link to it; tests that drive the classic card's widgets)
st.session_state.setdefault("queue.in_browser", st.query_params.get("card") != "classic")
in_browser = st.toggle("Review card in the browser", key="queue.in_browser",
                       help="The browser holds the next decisions and answers every key at once; labels are saved in "
                            "the background (the card says which are saved). Off: the classic card (one rerun per "
                            "key).")

key = (run, who, mode, tuple(types), tuple(labels), doc_filter, role(), hidden, skip_trivial, run_view.policy,
       plan is not None, assignment_stamp(conn, run))  # a plan just created: the sample queue reads its ids now
if st.session_state.get(KEY) != key:  # a new queue: read its ids once; the fragment then walks through them
    st.session_state[KEY] = key
    st.session_state[IDS] = share_queue_ids(conn, run_view, who, mode, share, types=types, judge_labels=labels,
                                            doc=doc_filter, skip_trivial=skip_trivial, blind=hidden,
                                            adjudicator=role() == "adjudicator",
                                            suggested=nxt["decisions"] if nxt else ())
    st.session_state[POS] = 0
    st.session_state[HISTORY] = []
    st.session_state.pop(STRIP, None)


def _change(c: Database, decision_id: int, title: str | None, before: dict, verb: str) -> str:
    return change_strip(run_view.on(c), decision_id, title, before, verb, blind=hidden)


# Buttons act in callbacks, which run before the fragment reruns: one rerun per key press, drawing the next card.
def _on_label(decision_id: int, label: str, pos: int, as_role: str) -> None:
    c = open_db(default_db_path())
    try:
        auth.check(auth.review_action(as_role))
        d = decision_view(c, run_view, decision_id)
        before = run_view.on(c).audit.metrics
        row = add_review(c, run, decision_id, label, who, note=review_note(st.session_state.get(NOTE)),
                   blind=is_blind(d, blind=blind(), role=as_role, who=who), role=as_role,
                   sampled=st.session_state.get("queue.mode") == "sample", **auth.identity_columns())
        st.session_state[NOTE] = ""
        st.session_state[HISTORY].append({"id": decision_id, "kind": d["kind"], "pos": pos, "review": row["id"],
                                          "role": as_role})
        st.session_state[STRIP] = _change(c, decision_id, task.label_schemes[d["kind"]].title(label), before,
                                          "Stored")
        st.session_state[POS] = pos + 1
    except AuditError as e:
        st.session_state[ERROR] = refusal_text(e)


def _on_undo() -> None:
    history = st.session_state[HISTORY]
    if not history:
        return
    last = history.pop()
    c = open_db(default_db_path())
    try:
        auth.check(auth.review_action(last["role"]))
        before = run_view.on(c).audit.metrics
        reviews = decision_view(c, run_view, last["id"])["reviews"]
        prev = undo_label(reviews, last["review"], who=who, role=last["role"])
        add_review(c, run, last["id"], prev, who, role=last["role"], note=UNDO_NOTE,
                   expect_last_review=newest_seen(reviews), **auth.identity_columns())
        title = task.label_schemes[last["kind"]].title(prev) if prev is not None else None
        st.session_state[STRIP] = _change(c, last["id"], title, before, "Undone:")
        st.session_state[POS] = last["pos"]
    except AuditError as e:
        history.append(last)
        st.session_state[ERROR] = str(e)


def _on_flag(decision_id: int | None) -> None:
    st.session_state[FLAG] = decision_id


def _on_move(to: int) -> None:
    st.session_state[POS] = max(0, to)


def sample_line(fconn: Database) -> str:
    """The sample's progress toward its target, read afresh: each label moves it."""
    return queue_sample_line(run_view.on(fconn), blind=hidden, next_sample=sample_now)


def sample_header(fconn: Database) -> None:
    """The sample queue's next document and how many more reach the target, read afresh in the card's fragment (at
    the top of the page it stayed as the page was drawn while the labels moved the sample on)."""
    if mode != "sample" or plan is None:
        return
    try:
        now = sample_now(run_view.on(fconn))
    except AuditError:
        return  # said once, at the top of the page
    if now is not None:
        show_text(sample_caption(now, blind=hidden, share=share is not None), "caption")


def share_status(fconn: Database) -> bool:
    """Under an assigned review, the reviewer's "your share: k of n" line (and "done" when it is); whether it is."""
    shared = share_progress(fconn, run, who) if share is not None else None
    if shared is None:
        return False
    show_text(f"Your share: {shared['done']} of {shared['of']} decisions ({shared['documents']} documents) of this "
              "run's assigned review." if shared["of"] else "This run has an assigned review that gives you no "
              "share: ask the owner (Runs page) to add you.", "caption")
    done = 0 < shared["of"] <= shared["done"]
    if done:
        st.success(f"Your share is done: you have labelled all {md_literal(shared['of'])} decisions assigned to you.")
    return done


def card_panel(fconn: Database) -> None:
    """The current decision's card, its keys, the progress line and the last-change strip."""
    sample_header(fconn)
    ids: list[int] = st.session_state[IDS]
    pos = min(st.session_state.get(POS, 0), len(ids))
    as_role = role()
    total = row["n_decisions"]
    done = labelled_count(fconn, run_view.on(fconn), who) if who else 0
    st.progress(done / total if total else 1.0, text=progress_text(done, total, len(ids)))
    if mode == "sample" and plan is not None:
        show_text(sample_line(fconn), "caption")
    share_done = share_status(fconn)
    if st.session_state.get(ERROR):
        show_text(st.session_state.pop(ERROR), "error")
    if st.session_state.get(STRIP):
        show_text(st.session_state[STRIP], "caption")
    if pos >= len(ids):
        if not share_done:
            st.success("Nothing left in this queue. Pick another queue or filter, or look at the Scores page."
                       if not ids else "You reached the end of this queue. Back (p) shows the decisions you labelled.")
        if ids:
            st.button("‹ back", key="queue.prev", shortcut="p", on_click=_on_move, args=(len(ids) - 1,))
        st.button("↶ undo last", key="queue.undo", shortcut="backspace", disabled=not st.session_state[HISTORY],
                  on_click=_on_undo)
        return
    d = decision_view(fconn, run_view, ids[pos])
    scheme = task.label_schemes[d["kind"]]
    mine = d["human"].get(who) if as_role == "reviewer" else None
    hide = is_blind(d, blind=blind(), role=as_role, who=who)
    number = run_view.on(fconn).decision_numbers([d["id"]])[d["id"]]
    st.markdown(f"**{md_literal(noun.capitalize())} {md_literal(d['doc'])}** · decision #{md_literal(number)} "
                f"(id {d['id']}) · {pos + 1:,} of {len(ids):,}")
    # Stable keys: the card and its widgets are updated in place from one decision to the next, not re-mounted.
    with st.container(border=True, key="queue.card"):
        st.html(card_html(d, task.name, scheme, blind=hide, number=number,  # CARD_STYLE: on the page, outside
                          also_in=other_runs_asking(fconn, [d["id"]])[d["id"]]))
        buttons = label_buttons(d, scheme, hide=hide, role=as_role, mine=mine)
        cols = st.columns([*([1.8] * len(buttons)), 1.8])  # "✗ Overrule → acceptable answer too" fits at 1280 px
        for i, (col, (lab, text, _, short)) in enumerate(zip(cols, buttons, strict=False)):
            col.button(text, key=f"queue.label.{i}", shortcut=short, on_click=_on_label,
                       args=(d["id"], lab, pos, as_role), disabled=not who)
        cols[-1].text_input("Note", key=NOTE, label_visibility="collapsed", placeholder="note (optional)")
    nav = st.columns([1, 1, 1.4, 3])
    nav[0].button("‹ back", key="queue.prev", shortcut="p", disabled=pos == 0, on_click=_on_move, args=(pos - 1,),
                  help="The previous decision of this queue (also one you just labelled).")
    nav[1].button("next ›", key="queue.next", shortcut="n", on_click=_on_move, args=(pos + 1,),
                  help="Skip to the next decision without labelling.")
    nav[2].button("↶ undo last", key="queue.undo", shortcut="backspace", disabled=not st.session_state[HISTORY],
                  on_click=_on_undo, help="Undo your last review in this queue (Backspace): restores the label "
                                          "you had before (for adjudicators: the adjudication before).")
    with nav[3]:
        show_text("Keyboard: " + shortcut_hint(scheme, hide=hide) + " · n: next · p: back · Backspace: undo",
                  "caption")
    links = st.columns([1, 1, 1.5], vertical_alignment="center")
    links[0].page_link("pages/document.py", label=f"Open the whole {noun}", icon=":material/article:",
                       query_params=link_params(doc=d["doc"], **decision_param(number)))
    # The errata form is drawn only when asked for: a key press redraws the fragment, so keep it light.
    flag_open = st.session_state.get(FLAG) == d["id"]
    links[1].button("⚑ Flag a gold error" if not flag_open else "✕ Close the flag form", key="queue.flag",
                    on_click=_on_flag, args=(None if flag_open else d["id"],),
                    help="The gold data looks wrong or incomplete here: flag it with a proposed correction. Scores "
                         "are not changed; flags are listed on the Gold errata page.")
    if flag_open:
        with st.container(border=True):
            errata_form(fconn, run_view, task.name, d["doc"], who, decision=d, key="queue.errata")  # type: ignore[arg-type]
    preview = family_view(task.name).preview
    if preview is not None:
        preview(document(fconn, run_view, d["doc"])["payload"], d)


def progress_table(fconn: Database) -> None:
    """Labels per reviewer, read afresh (inside the fragment, so it follows every key press)."""
    st.subheader("Reviewer progress")
    prog = reviewer_progress_db(fconn, run_view.on(fconn))
    if prog:
        st.dataframe(prog, hide_index=True, key="queue.progress")
    else:
        st.info("Nobody has reviewed this run yet.")


@st.fragment
def review_panel() -> None:
    """The card and the reviewer progress under it, rerun on their own at each key press."""
    fconn = db()
    card_panel(fconn)
    if not hidden:  # labels per reviewer and their agreement with the judge would unblind a reviewer
        progress_table(fconn)


@st.fragment
def browser_panel() -> None:
    """The browser review card (`ui/review_card`) and the reviewer progress under it."""
    fconn = db()
    sample_header(fconn)
    ids: list[int] = st.session_state[IDS]
    as_role = role()
    share_status(fconn)
    reviewer_now = Reviewer(name=who, role=as_role, blind=hidden, sampled=mode == "sample",
                            identity=auth.identity_columns(),
                            authorize=lambda r: auth.check(auth.review_action(r)), check=auth.check)
    with_sample = mode == "sample" and plan is not None
    progress = progress_line(run_view.on(fconn), reviewer=who, in_queue=len(ids), sample=with_sample, blind=hidden,
                             next_sample=sample_now)
    token = queue_token(st.session_state[KEY])
    browser_card(fconn, run_view, ids, token=token, reviewer=reviewer_now,
                 connect=lambda: open_db(default_db_path()),
                 payload=lambda doc: document(fconn, run_view, doc)["payload"], progress=progress,
                 grant=save_grant(str(default_db_path()), run_view, token, reviewer_now, team=auth.team_mode(),
                                  in_queue=len(ids), with_sample=with_sample))
    if not hidden:
        progress_table(fconn)


if in_browser:
    browser_panel()
    page_refresher()  # below the card: it takes no room above it
else:
    review_panel()
