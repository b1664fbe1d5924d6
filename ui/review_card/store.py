"""Store the labels the browser's review card sends: each event once, in the order sent.

An event is `{"cid", "type": "label" | "undo", "decision", "label", "note", "undo_of", "run", "who"}`; `cid` is
the card's own id of that key press. A flag of a gold error is `{"cid", "type": "erratum", "decision", "item"
(the listed gold item, or null), "typed", "problem", "correction", "note", "run", "who"}`: stored like the classic
card's errata form stores it (`audit.review.errata`), its document the decision's (never the browser's word).

An event whose client id is stored already (a re-send after a reconnect or a reload) is acknowledged without
writing (only to the reviewer who sent it); an undo restores the label this reviewer (adjudicator: the
adjudication) had before the review it undoes, and names only the reviewer's own review in this run, in a role
they hold now. Each answer (`ack`) says whether it is stored and, for the change strip, what it
changed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from audit.errors import AuditError, NotASampleDraw
from audit.review.errata import add_erratum, flagged_item
from audit.review.queue import change_strip, decision_view
from audit.review.reviews import (
    UNDO_NOTE,
    add_review,
    newest_seen,
    review_by_client_id,
    review_note,
    stored_client_ids,
    undo_label,
)
from audit.store.database import Database
from audit.views import RunView
from ui.blind import is_blind

MAX_EVENTS = 200
"""Events read from one message (the card never holds more unsent ones; more is not a review card)."""


@dataclass
class Reviewer:
    """Who stores the labels, as the session knows it (never as the browser says)."""

    name: str
    role: str
    blind: bool
    sampled: bool = False
    identity: Mapping[str, str | None] = field(default_factory=dict)
    authorize: Callable[[str], None] = lambda _role: None
    """Raises AuditError when the session may not review in this role (`ui.auth`)."""
    check: Callable[[str], None] = lambda _action: None
    """Raises AuditError when the session may not do an action, e.g. "flag_erratum" (`ui.auth.check`)."""


def _own(row: Mapping, run_view: RunView, who: Reviewer) -> bool:
    """Whether a stored review is the session's reviewer's, in this run (what an undo or a re-sent event may name)."""
    return row["run_id"] == run_view.id and row["reviewer"] == who.name


def _store_one(conn: Database, run_view: RunView, ev: Mapping, who: Reviewer) -> dict:
    task = run_view.task
    cid = str(ev.get("cid") or "")
    if ev.get("run") != run_view.name or ev.get("who") != who.name:
        return {"ok": False, "error": "not stored: this label was given for another run or reviewer"}
    who.authorize(who.role)
    if ev.get("type") == "undo":
        row = review_by_client_id(conn, str(ev.get("undo_of") or ""))
        if row is None:
            return {"ok": False, "error": "nothing to undo: the review it undoes was not stored"}
        if not _own(row, run_view, who):
            return {"ok": False, "error": "not undone: an undo withdraws only your own label in this run"}
        who.authorize(row["role"])  # an adjudication is withdrawn only by someone who may adjudicate now
        decision_id, role = int(row["decision_id"]), row["role"]
        d = decision_view(conn, run_view, decision_id)
        label = undo_label(d["reviews"], row["id"], who=who.name, role=row["role"])
        note, verb, seen = UNDO_NOTE, "Undone:", newest_seen(d["reviews"])
    else:
        decision_id, label, role = ev.get("decision"), ev.get("label"), who.role
        if not isinstance(decision_id, int) or isinstance(decision_id, bool):
            return {"ok": False, "error": f"not stored: {decision_id!r} is not a decision id"}
        try:
            d = decision_view(conn, run_view, decision_id)
        except KeyError:
            return {"ok": False, "error": f"not stored: decision {decision_id} is not in run {run_view.name}"}
        note, verb, seen = review_note(ev.get("note")), "Stored", None
    before = run_view.on(conn).audit.metrics
    row = add_review(conn, run_view.name, decision_id, label, who.name, note=note, role=role,
                     blind=is_blind(d, blind=who.blind, role=who.role, who=who.name),
                     sampled=who.sampled and verb == "Stored", client_id=cid, expect_last_review=seen,
                     **dict(who.identity))
    scheme = task.label_schemes[d["kind"]]
    title = scheme.title(label) if label is not None else None
    if row.get("duplicate"):  # `#n` is the decision's number in its run, as in every other strip
        strip = f"Stored earlier: #{run_view.on(conn).decision_numbers([decision_id])[decision_id]}"
    else:
        strip = change_strip(run_view.on(conn), decision_id, title, before, verb, blind=who.blind)
    return {"ok": True, "strip": strip, "decision": decision_id, "label": label}


def _text(ev: Mapping, key: str) -> str | None:
    value = ev.get(key)
    return value if isinstance(value, str) else None


def _flag_one(conn: Database, run_view: RunView, ev: Mapping, who: Reviewer) -> dict:
    if ev.get("run") != run_view.name or ev.get("who") != who.name:
        return {"ok": False, "error": "not flagged: this flag was given for another run or reviewer"}
    who.check("flag_erratum")
    decision_id = ev.get("decision")
    if not isinstance(decision_id, int) or isinstance(decision_id, bool):
        return {"ok": False, "error": f"not flagged: {decision_id!r} is not a decision id"}
    try:
        doc = decision_view(conn, run_view, decision_id)["doc"]
    except KeyError:
        return {"ok": False, "error": f"not flagged: decision {decision_id} is not in run {run_view.name}"}
    item, problem = flagged_item(_text(ev, "item"), _text(ev, "typed")), str(ev.get("problem") or "")
    row = add_erratum(conn, run_view, doc, item, problem, who.name, correction=_text(ev, "correction"),
                      note=_text(ev, "note"), decision_id=decision_id, client_id=str(ev.get("cid")),
                      **dict(who.identity))
    said = f"{row['item'] or '(missing item)'} — {row['problem']}"
    return {"ok": True, "decision": decision_id, "erratum": True,
            "strip": f"Flagged earlier: {said}" if row.get("duplicate") else
            f"Flagged: {said}. See the Gold errata page."}


def refusal_text(e: AuditError) -> str:
    """A review refused, in the pages' words (both cards): a label that is no sample draw says what to do on the
    page, where the CLI's refusal names its flags."""
    if isinstance(e, NotASampleDraw):
        first = ("draw the sample first (the Review queue's sample queue)" if e.no_plan else
                 "take the document the sample queue serves now (reload the queue)")
        return f"{e.reason}; {first}, or review this one on its Document page, as a hand-picked review"
    return str(e)


def store_events(conn: Database, run_view: RunView, events: Sequence[Mapping], who: Reviewer,
                 answered: dict[str, dict]) -> dict[str, dict]:
    """Store the events not answered yet (`answered`: client id -> ack, updated in place and returned).

    Events stored by an earlier session (the page was reloaded, the card re-sends) are answered from the store.
    An event that cannot be stored is answered with its error (it is not sent again)."""
    fresh = [ev for ev in list(events)[:MAX_EVENTS] if isinstance(ev, Mapping) and ev.get("cid")
             and str(ev["cid"]) not in answered]
    stored = stored_client_ids(conn, [str(ev["cid"]) for ev in fresh])
    for ev in fresh:
        cid = str(ev["cid"])
        if cid in stored:
            r = stored[cid]
            answered[cid] = ({"ok": True, "strip": "", "decision": r["decision_id"], "label": r["label"]}
                             if _own(r, run_view, who) else  # never another reviewer's decision and label
                             {"ok": False, "error": "not stored: this client id belongs to another review"})
            continue
        try:
            store = _flag_one if ev.get("type") == "erratum" else _store_one
            answered[cid] = store(conn, run_view, ev, who)
        except AuditError as e:
            answered[cid] = {"ok": False, "error": f"not stored: {refusal_text(e)}"}
        except (KeyError, ValueError, TypeError) as e:  # a malformed event is refused alone; the rest are stored
            answered[cid] = {"ok": False, "error": f"not stored: the event cannot be read ({e.__class__.__name__})"}
    return answered
