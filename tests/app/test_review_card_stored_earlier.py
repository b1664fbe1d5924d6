"""A label another session stored between the card's client-id look-up and its write is answered "Stored earlier"
with the decision's number, what the pages and the other strips call it (`#n`), not its database id."""

from __future__ import annotations

import ui.review_card.store as card_store
from audit.review.queue import queue_ids
from audit.views import as_view
from ui.review_card.store import Reviewer, store_events


def test_stored_earlier_names_the_decision_number(conn, monkeypatch):
    run = [r[0] for r in conn.execute("SELECT name FROM runs ORDER BY id")][-1]  # not the first: ids != numbers
    view = as_view(conn, run)
    decision = min(queue_ids(conn, view, "ana", "unreviewed"))
    number = view.decision_numbers([decision])[decision]
    assert number != decision
    kind = conn.execute("SELECT kind FROM decisions WHERE id = ?", [decision]).fetchone()[0]
    ev = {"cid": "race-1", "type": "label", "decision": decision, "label": view.task.label_schemes[kind].labels[0],
          "run": run, "who": "ana"}
    who = Reviewer(name="ana", role="reviewer", blind=False)
    assert store_events(conn, view, [ev], who, {})["race-1"]["ok"]
    monkeypatch.setattr(card_store, "stored_client_ids", lambda _db, _ids: {})  # the look-up ran before the write
    ack = store_events(conn, view, [ev], who, {})["race-1"]
    assert ack["ok"] and ack["strip"] == f"Stored earlier: #{number}"
    assert conn.execute("SELECT COUNT(*) FROM reviews WHERE client_id = 'race-1'").fetchone()[0] == 1
