"""The review card's save route: `POST {base}/api/review-card/events` stores the card's labels at once.

Through the component's channel each save waited for a rerun of the card's fragment, and ten sessions' reruns
queued behind each other (27 s from key to "saved" on a loaded box, issue 38). This route is a plain HTTP
endpoint of the same server (`st.App(routes=...)` in `app.py`): no rerun, one short write per request.

The request names a grant (`ui.review_card.grants`: issued by the queue page that drew the card); without a
known grant it is refused (403) and nothing is read. A team grant is honoured only while the browser's sign-in
cookie names its address (401 after a sign-out, or another sign-in, in another tab). The events are stored by
`store.store_events`, the channel's own function, with a reviewer built from the grant alone and the role checked
at every request: in team mode the roles file's role of the grant's signed-in address now (a revoked role stops the
next save), and a server that turned to team mode (or whose sign-in set-up broke) refuses a local-mode grant.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ui.review_card.grants import GRANTS, Grant, Grants

if TYPE_CHECKING:
    from audit.store.database import Database
    from ui.review_card.store import Reviewer

# The store, the roles and the family registry are imported at the first request, not here: `app.py` imports this
# module before Streamlit's runtime exists (their `st.cache_data` functions would not find it).

PATH = "api/review-card/events"
MAX_BODY = 4_000_000
"""Bytes read from one request: the events one request may carry (`store.MAX_EVENTS`) with long notes fit."""


def save_url(base_url_path: str) -> str:
    """The route's address as the browser calls it (under the server's `server.baseUrlPath`)."""
    base = base_url_path.strip("/")
    return f"/{base}/{PATH}" if base else f"/{PATH}"


def _role_now(grant: Grant) -> str | None:
    from audit.review.roles import LOCAL
    from ui import auth

    if not grant.team:
        return None if auth.team_mode() else LOCAL
    if not auth.team_mode() or auth.config_problem():
        return None
    return auth.role_of(grant.email)


def _check(grant: Grant, action: str) -> None:
    from audit.review.roles import permits, refusal
    from ui import auth

    role = _role_now(grant)
    if not permits(role, action):
        raise auth.Refused(refusal(role, action))


def reviewer_of(grant: Grant) -> Reviewer:
    """The reviewer a grant stores as, every check made against the role held now."""
    from ui import auth
    from ui.review_card.store import Reviewer

    return Reviewer(name=grant.reviewer, role=grant.role, blind=grant.blind, sampled=grant.sampled,
                    identity={"auth_subject": grant.subject, "auth_email": grant.email} if grant.team else
                    {"auth_subject": None, "auth_email": None},
                    authorize=lambda r: _check(grant, auth.review_action(r)),
                    check=lambda action: _check(grant, action))


_threads = threading.local()


def _connection(path: str) -> Database:
    """This pool thread's connection to `path`, opened once (opening and closing, with its WAL checkpoint, was
    most of a request's time; a connection belongs to the thread that opened it)."""
    from audit.store.database import open_db

    conns: dict[str, Database] = _threads.__dict__.setdefault("conns", {})
    if path not in conns:
        conns[path] = open_db(path)
    return conns[path]


def store_for(grant: Grant, events: list) -> tuple[dict[str, dict], str | None]:
    """Store `events` under `grant` (the route serves from a thread pool: each thread its own connection); the
    acks, and the progress line read after them (None when it cannot be read: the labels are stored all the same,
    and the card keeps the line it had)."""
    from audit.views import RunView
    from ui.queue_progress import progress_line
    from ui.review_card.store import store_events

    conn = _connection(grant.db_path)
    acks = store_events(conn, RunView(conn, grant.run_row, grant.policy), events, reviewer_of(grant), {})
    try:  # a view of the state after these labels (a view keeps what it read)
        now = RunView(conn, grant.run_row, grant.policy)
        line = progress_line(now, reviewer=grant.reviewer, in_queue=grant.in_queue, sample=grant.with_sample,
                             blind=grant.blind)
    except Exception:  # noqa: BLE001 - a line that cannot be read must not turn stored labels into an error
        logging.getLogger(__name__).exception("review card: the progress line could not be read")
        line = None
    return acks, line


def browser_email(request: Request) -> str | None:
    """The address this browser is signed in as now (its sign-in cookie, read as Streamlit reads it), None when it
    is signed out. A tab drawn before a sign-out, or before another person signed in, in the same browser kept
    storing labels as the person who left, marked as a verified identity."""
    from streamlit.web.server.starlette.starlette_auth_routes import (  # Streamlit's own reader (pinned version)
        USER_COOKIE_NAME,
        _get_cookie_value_from_request,
    )

    raw = _get_cookie_value_from_request(request, USER_COOKIE_NAME)
    try:
        info = json.loads(raw) if raw else None
    except ValueError:
        return None
    email = info.get("email") if isinstance(info, dict) and info.get("is_logged_in") else None
    return email if isinstance(email, str) else None


def _refuse(status: int, why: str) -> JSONResponse:
    return JSONResponse({"error": why}, status_code=status)


def make_endpoint(grants: Grants = GRANTS) -> Callable[[Request], Awaitable[JSONResponse]]:
    async def events_endpoint(request: Request) -> JSONResponse:
        """`{"grant", "queue", "events": [...]}` → `{"acks": {client id: ack}, "progress": line}`: the channel's
        answers and the progress line above the card, read after them."""
        raw = await request.body()
        if len(raw) > MAX_BODY:
            return _refuse(413, f"request larger than {MAX_BODY} bytes")
        try:
            body = json.loads(raw)
        except ValueError:
            return _refuse(400, "the request is not JSON")
        if not isinstance(body, dict):
            return _refuse(400, "the request is not a JSON object")
        grant = grants.lookup(body.get("grant"))
        if grant is None:
            return _refuse(403, "no review grant: reload the page (labels are kept and sent again)")
        if grant.team:
            now = browser_email(request)
            if now is None or now.strip().lower() != (grant.email or "").strip().lower():
                return _refuse(401, f"this browser is no longer signed in as {grant.email} (signed "
                                    f"{'out' if now is None else 'in as someone else'} in another tab): reload the "
                                    "page; labels not yet saved are kept and sent again")
        if body.get("queue") != grant.queue:
            return _refuse(409, "this card's queue changed: its labels are sent with the next render")
        events = body.get("events")
        if not isinstance(events, list):
            return _refuse(400, "events must be a list")
        from audit.errors import AuditError

        try:
            acks, line = await run_in_threadpool(store_for, grant, events)  # store_events reads MAX_EVENTS
        except AuditError as e:  # the database cannot be opened or written: the card keeps the labels pending
            return _refuse(503, f"not stored: {e}")
        return JSONResponse({"acks": acks} if line is None else {"acks": acks, "progress": line})

    return events_endpoint


_served: list[str] = []


def served_url() -> str | None:
    """The route's address when this server serves it (`app.py` run as `st.App`), else None: the card then sends
    its labels through the component's channel (AppTest, a server started another way)."""
    return _served[0] if _served else None


def routes(base_url_path: str, grants: Grants = GRANTS) -> list[Route]:
    """The route for `st.App(routes=...)`; from now on the queue page gives the card its address."""
    url = save_url(base_url_path)
    _served[:] = [url]
    return [Route(url, make_endpoint(grants), methods=["POST"])]
