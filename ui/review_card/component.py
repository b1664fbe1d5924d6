"""The browser review card on the queue page: the component's registration and its mount.

The card posts its labels to the save route (`route.py`) when the server serves it and answers them from the
response, with no rerun. Through the component's channel go the card's requests for more cards and, when the
route is not served or refuses the card's grant, the labels too: per message the outbox callback stores the labels
it has not answered yet (`store.store_events`, the route's function, before the page's fragment reruns); the
rerun then sends the cards around the browser's position and the answers for the labels it holds
(`buffer.build_buffer`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import streamlit as st

from audit.review.errata import MAX_ITEM_CHARS, PROBLEMS
from audit.review.queue import decision_view
from audit.review.reviews import MAX_NOTE_CHARS
from audit.store.database import Database
from audit.views import RunView
from ui.decision_link import URL_DECISION, decision_param
from ui.decisions import CARD_STYLE
from ui.families import doc_noun
from ui.review_card.buffer import BUFFER_AHEAD, BUFFER_BEHIND, build_buffer
from ui.review_card.grants import GRANTS, Grant
from ui.review_card.route import served_url
from ui.review_card.store import Reviewer, store_events
from ui.state import link, link_params

STATIC = Path(__file__).resolve().parent / "static"
KEY = "queue.review_card"
ACKS, CURSOR = "queue.review_card.acks", "queue.review_card.cursor"
GRANT = "queue.review_card.grant"
_CSS = (STATIC / "card.css").read_text(encoding="utf-8") + re.sub(r"</?style>", "", CARD_STYLE)
_COMPONENT = st.components.v2.component(
    "rejudge.review_card", html=(STATIC / "card.html").read_text(encoding="utf-8"), css=_CSS,
    js=(STATIC / "card.js").read_text(encoding="utf-8"), isolate_styles=False)
# Mounted outside the card's fragment: its trigger is a rerun of the whole page. The card calls it when the save
# route does not know its grant any more (a restarted server: the card's fragment is unknown to the new session,
# so the card's own messages are dropped there) to get a new grant.
_REFRESH = st.components.v2.component("rejudge.review_card_refresh", html="", js="""
export default function ({ setTriggerValue }) {
  const store = (window.__rjReviewCard = window.__rjReviewCard || {});
  store.refresh = () => setTriggerValue("refresh", Date.now());
}""")


def page_refresher() -> None:
    """Mount the page-rerun trigger the card uses to get a new grant (call outside the card's fragment)."""
    _REFRESH(key="queue.review_card.refresh", data={}, on_refresh_change=lambda: None)


def queue_token(queue_key: object) -> str:
    """A short name of the queue (run, reviewer, filters): the browser starts afresh when it changes."""
    return hashlib.sha256(json.dumps(queue_key, default=str).encode()).hexdigest()[:16]


def _outbox() -> Mapping:
    state = st.session_state.get(KEY) or {}
    value = state.get("outbox") if isinstance(state, Mapping) else getattr(state, "outbox", None)
    return value if isinstance(value, Mapping) else {}


def save_grant(db_path: str, run_view: RunView, token: str, reviewer: Reviewer, *, team: bool, in_queue: int = 0,
               with_sample: bool = False) -> str | None:
    """The session's token for the save route (`ui/review_card/route.py`), or None when this server does not
    serve it or nobody is named: the card then sends its labels through the component's channel. `in_queue` and
    `with_sample`: what the route's fresh progress line needs (`ui.queue_progress.progress_line`)."""
    if served_url() is None or not reviewer.name:
        return None
    grant = Grant(db_path=db_path, run_row=run_view.row, policy=run_view.policy, reviewer=reviewer.name,
                  role=reviewer.role, blind=reviewer.blind, sampled=reviewer.sampled, queue=token, team=team,
                  subject=reviewer.identity.get("auth_subject"), email=reviewer.identity.get("auth_email"),
                  in_queue=in_queue, with_sample=with_sample)
    st.session_state[GRANT] = GRANTS.issue(grant, st.session_state.get(GRANT))
    return st.session_state[GRANT]


def review_card(conn: Database, run_view: RunView, ids: Sequence[int], *, token: str, reviewer: Reviewer,
                connect: Callable[[], Database], payload: Callable[[str], dict], progress: str,
                start: int = 0, grant: str | None = None) -> None:
    """Mount the review card for queue `ids` (named `token`).

    `connect()` opens the connection the callback stores through; `payload(doc)` reads a document's payload for
    the context lines; `progress` is the line above the card; `start` the position a fresh card opens at;
    `grant` the session's token for the save route (`save_grant`; None: labels go through the channel)."""
    if st.session_state.get(ACKS, {}).get("token") != token:
        st.session_state[ACKS] = {"token": token, "acks": {}}
        st.session_state[CURSOR] = start

    def on_outbox() -> None:
        box = _outbox()
        events = box.get("events") if isinstance(box.get("events"), list) else []
        answered = st.session_state[ACKS]["acks"]
        if events and box.get("queue") == token:
            store_events(connect(), run_view, events, reviewer, answered)
        cursor = box.get("cursor")
        if isinstance(cursor, int) and not isinstance(cursor, bool) and box.get("queue") == token:
            st.session_state[CURSOR] = max(0, min(cursor, len(ids)))

    cursor = st.session_state[CURSOR]
    held = [str(ev.get("cid")) for ev in (_outbox().get("events") or []) if isinstance(ev, Mapping)]
    answered = st.session_state[ACKS]["acks"]
    data = {
        "queue": token, "run": run_view.name, "who": reviewer.name, "blind": reviewer.blind, "total": len(ids),
        "cursor": cursor, "progress": progress, "can_review": bool(reviewer.name),
        "items": build_buffer(conn, run_view, ids, cursor - BUFFER_BEHIND, cursor + BUFFER_AHEAD, who=reviewer.name,
                              role=reviewer.role, blind=reviewer.blind, payload=payload),
        "acks": {cid: answered[cid] for cid in held if cid in answered},
        "doc_link": link("document"), "decision_key": URL_DECISION,
        "doc_noun": doc_noun(run_view.task.name), "problems": list(PROBLEMS.items()),
        "max_note": MAX_NOTE_CHARS, "max_item": MAX_ITEM_CHARS,
        "save_url": served_url() if grant else None, "grant": grant,
    }
    result = _COMPONENT(key=KEY, data=data, on_outbox_change=on_outbox, on_open_change=lambda: None)
    open_document(conn, run_view, getattr(result, "open", None))


def open_document(conn: Database, run_view: RunView, decision_id: object) -> None:
    """The card's "open the whole document" link, followed in this session (a plain click; a new tab follows
    the link's own address): the Document page of that decision's document, the decision selected."""
    if not isinstance(decision_id, int) or isinstance(decision_id, bool):
        return
    try:
        doc = decision_view(conn, run_view, decision_id)["doc"]
    except KeyError:  # not a decision of this run: the browser's word is not enough
        return
    number = run_view.on(conn).decision_numbers([decision_id])[decision_id]
    st.switch_page("pages/document.py", query_params=link_params(doc=doc, **decision_param(number)))
