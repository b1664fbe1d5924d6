"""The browser review card's buffer and store (`ui/review_card`): a blind buffer carries nothing derived from the
judge or other reviewers, on every family's demo run; a label sent twice (same client id) is stored once."""

from __future__ import annotations

import json

import pytest

from audit.errors import AuditError
from audit.review.queue import decision_view, queue_ids
from audit.review.reviews import add_review
from audit.views import RunView, as_view, document
from ui.blind import JUDGE_DERIVED
from ui.review_card.buffer import CARD_FIELDS, build_buffer, card_item
from ui.review_card.store import Reviewer, store_events


def _views(conn) -> list[RunView]:
    names = [r[0] for r in conn.execute("SELECT name FROM runs ORDER BY id")]
    return [as_view(conn, name) for name in names]


def test_every_family_runs_in_the_fixture(conn):
    assert len({v.task.name for v in _views(conn)}) >= 4


def test_a_blind_buffer_carries_no_judge_derived_field_on_every_demo_run(conn):
    for view in _views(conn):
        # another reviewer's labels on the first decisions: a blind card must not carry them either
        ids = queue_ids(conn, view, "blindrev", "all")[:12]
        for i in ids[:4]:
            d = decision_view(conn, view, i)
            add_review(conn, view.name, i, view.task.label_schemes[d["kind"]].labels[-1], "other")
        payload = lambda doc, v=view: document(conn, v, doc)["payload"]  # noqa: E731
        cards = build_buffer(conn, view, ids, 0, len(ids), who="blindrev", role="reviewer", blind=True,
                             payload=payload)
        assert [c["pos"] for c in cards] == list(range(len(ids)))
        for card, i in zip(cards, ids, strict=True):
            assert set(card) == CARD_FIELDS
            assert not set(card) & JUDGE_DERIVED
            d = decision_view(conn, view, i)
            assert "judge label <span" not in card["html"] and "effective <span" not in card["html"]
            assert "other:" not in card["html"]
            # the same card whatever the judge or the others answered: nothing of it reached the buffer
            scrambled = d | {"judge": "zz-judge", "effective": "zz-eff", "source": "zz", "moot": True,
                             "human": {"other": "zz-other"}, "reviews": [{"reviewer": "other", "label": "zz"}],
                             "detail": {**d["detail"], "rationale": "zz-why", "calls": [{"rationale": "zz"}]}}
            scheme = view.task.label_schemes[d["kind"]]
            kwargs = {"pos": card["pos"], "number": card["num"], "who": "blindrev", "role": "reviewer", "blind": True}
            assert (card_item(scrambled, view.task.name, scheme, **kwargs)["html"]
                    == card_item(d, view.task.name, scheme, **kwargs)["html"])
            assert "zz" not in json.dumps(card_item(scrambled, view.task.name, scheme, **kwargs))


def test_a_sighted_buffer_shows_the_judge_and_the_buttons_of_the_kind(conn):
    for view in _views(conn):
        ids = queue_ids(conn, view, "ana", "all")[:6]
        cards = build_buffer(conn, view, ids, 0, 6, who="ana", role="reviewer", blind=False)
        for card, i in zip(cards, ids, strict=True):
            d = decision_view(conn, view, i)
            scheme = view.task.label_schemes[d["kind"]]
            assert {b["label"] for b in card["buttons"]} <= set(scheme.labels)
            assert all(b["key"] and b["key"] in b["aria"] for b in card["buttons"])
            if scheme.scale == "binary" and d["judge"] in scheme.labels:
                assert "judge label" in card["html"]
                assert [b["key"] for b in card["buttons"]] == ["a", "o"]
            else:
                assert [b["label"] for b in card["buttons"]] == list(scheme.labels)


def test_the_buffer_is_the_window_clipped_to_the_queue(conn):
    view = _views(conn)[0]
    ids = queue_ids(conn, view, "ana", "all")
    assert [c["id"] for c in build_buffer(conn, view, ids, -5, 3, who="ana", role="reviewer", blind=True)] == ids[:3]
    tail = build_buffer(conn, view, ids, len(ids) - 2, len(ids) + 10, who="ana", role="reviewer", blind=True)
    assert [c["pos"] for c in tail] == [len(ids) - 2, len(ids) - 1]


def test_a_duplicate_client_id_is_stored_once(conn):
    view = _views(conn)[0]
    i = queue_ids(conn, view, "ana", "all")[0]
    label = view.task.label_schemes[decision_view(conn, view, i)["kind"]].labels[0]
    first = add_review(conn, view.name, i, label, "ana", client_id="card-1")
    again = add_review(conn, view.name, i, label, "ana", client_id="card-1")
    assert again["id"] == first["id"] and again["duplicate"]
    assert conn.execute("SELECT COUNT(*) FROM reviews WHERE client_id = 'card-1'").fetchone()[0] == 1
    add_review(conn, view.name, i, label, "ana", client_id="card-2")
    add_review(conn, view.name, i, label, "ana")  # rows without a client id are not unique among themselves
    add_review(conn, view.name, i, label, "ana")
    assert conn.execute("SELECT COUNT(*) FROM reviews WHERE decision_id = ? AND reviewer = 'ana'",
                        [i]).fetchone()[0] == 4
    for bad in ("", "x" * 101, "tab\there", "é"):
        with pytest.raises(AuditError):
            add_review(conn, view.name, i, label, "ana", client_id=bad)


def _event(view, cid, decision, label, **kw):
    return {"cid": cid, "type": "label", "decision": decision, "label": label, "run": view.name, "who": "ana", **kw}


def test_events_sent_again_and_again_are_stored_once_in_order_and_undo_restores(conn):
    view = _views(conn)[0]
    ids = queue_ids(conn, view, "ana", "all")[:10]
    schemes = view.task.label_schemes
    labels = [schemes[decision_view(conn, view, i)["kind"]].labels for i in ids]
    events = [_event(view, f"c{k}", i, labs[k % len(labs)]) for k, (i, labs) in enumerate(zip(ids, labels,
                                                                                                 strict=True))]
    who = Reviewer(name="ana", role="reviewer", blind=False)
    answered: dict = {}
    for n in range(1, len(events) + 1):  # the outbox grows one label per message, each message sends all
        store_events(conn, view, events[:n], who, answered)
    store_events(conn, view, events, who, {})  # a reload: a new session re-sends everything
    rows = list(conn.query("SELECT decision_id, label, client_id FROM reviews WHERE reviewer = 'ana' ORDER BY id"))
    assert [(r["decision_id"], r["label"], r["client_id"]) for r in rows] == [
        (e["decision"], e["label"], e["cid"]) for e in events]
    assert all(answered[e["cid"]]["ok"] and answered[e["cid"]]["strip"] for e in events)
    undo = {"cid": "u1", "type": "undo", "undo_of": "c9", "decision": ids[9], "run": view.name, "who": "ana"}
    store_events(conn, view, [undo], who, answered)
    assert "ana" not in decision_view(conn, view, ids[9])["human"]
    foreign = _event(view, "f1", ids[0], labels[0][0], who="mallory")
    store_events(conn, view, [foreign], who, answered)
    assert not answered["f1"]["ok"]
    assert conn.execute("SELECT COUNT(*) FROM reviews WHERE client_id = 'f1'").fetchone()[0] == 0


def test_a_family_card_context_sees_only_the_blind_decision(conn, monkeypatch):
    """Blind safety does not rest on each family's `card_context` reading only question fields: in a blind buffer
    it is handed the blind decision, whose judge, effective label, reviews and non-blind detail are empty."""
    from ui.families import view as family_view

    for run in _views(conn):
        module = family_view(run.task.name)
        if getattr(module, "card_context", None) is None:
            continue
        seen: list[dict] = []
        monkeypatch.setattr(module, "card_context", lambda payload, d, seen=seen: seen.append(d) or [])
        ids = queue_ids(conn, run, "blindrev2", "all")[:6]
        payload = lambda doc, v=run: document(conn, v, doc)["payload"]  # noqa: E731
        build_buffer(conn, run, ids, 0, len(ids), who="blindrev2", role="reviewer", blind=True, payload=payload)
        assert len(seen) == len(ids)
        allowed = set(getattr(module, "BLIND_DETAIL", ()))
        for d in seen:
            assert d["judge"] == "" and d["effective"] == "" and d["human"] == {} and d["reviews"] == []
            assert set(d["detail"]) <= allowed, (run.task.name, set(d["detail"]) - allowed)
        monkeypatch.undo()
