"""The browser review card's note, gold-errata flag and whole-document link (issue 25), on the Python side: what
the queue page sends the browser (AppTest reads the component's data) and what it does with what the browser sends
back (messages injected as the browser's component state), against the database.

Rules they hold: one note rule for both cards (`audit.review.reviews.review_note`); a flag is stored once with the
decision's own document, only for a session that may flag; a blind card's data says nothing of the judge."""

from __future__ import annotations

import json

import pytest
from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates
from streamlit.testing.v1 import AppTest

from audit.errors import AuditError
from audit.review.errata import PROBLEMS, flagged_item, history
from audit.review.queue import decision_view, queue_ids
from audit.review.reviews import MAX_NOTE_CHARS, add_review, review_note
from audit.views import as_view, document
from tests.app.conftest import open_page
from tests.conftest import ROOT
from ui.families import gold_items
from ui.review_card.store import Reviewer, store_events

CHIMERA = "demo-chimera-mixed"
NOTES = ["  both spans name it  ", "\tline one\nline two\n", "   ", "", None, "x" * MAX_NOTE_CHARS]


def _runs(conn) -> list[str]:
    return [r[0] for r in conn.execute("SELECT name FROM runs ORDER BY id")]


# ---- what the browser is sent ------------------------------------------------------------------------------------

def _card_data(at: AppTest) -> tuple[str, dict]:
    found = [el for el in at.main.children.values() for el in _walk(el) if getattr(el, "type", "") == "bidi_component"
             and getattr(el, "key", None) == "queue.review_card"]  # not the page-rerun trigger beside it (#38)
    assert len(found) == 1
    proto = found[0].proto
    return proto.id, json.loads(proto.json)


def _walk(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def _queue(app_db, run: str, who: str, *, blind: bool = False) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.session_state["blind_mode"] = blind  # the URL's blind=1 is read once, by a session's first run
    at = open_page(at, "queue", reviewer=who, card="browser", run=run)
    assert not at.exception
    return at


JUDGE_SAID, OTHER, OTHER_SAID = "zz-judge-said-this", "zz-other-reviewer", "zz-other-noted-this"


def _mark_judge_and_others(conn, run: str, who: str) -> None:
    """Text only the judge (a rationale in every decision's detail) and another reviewer (a label with a note on
    the first decisions) said: a blind card's data must carry neither."""
    view = as_view(conn, run)
    conn.execute("UPDATE decisions SET detail = json_set(detail, '$.rationale', ?) WHERE run_id = ?",
                 [JUDGE_SAID, view.id])
    for i in queue_ids(conn, view, who, "all")[:3]:
        scheme = view.task.label_schemes[decision_view(conn, view, i)["kind"]]
        add_review(conn, run, i, scheme.labels[-1], OTHER, note=OTHER_SAID)
    conn.conn.commit()


@pytest.mark.parametrize("blind", [False, True])
def test_the_card_is_sent_its_document_link_errata_form_and_note_limit(app_db, conn, blind):
    at = _queue(app_db, CHIMERA, "ana", blind=blind)
    _, data = _card_data(at)
    assert data["doc_link"].startswith("document?")
    carried = data["doc_link"].split("?", 1)[1]
    assert f"run={CHIMERA}" in carried and "reviewer=ana" in carried and ("blind=1" in carried) == blind
    assert data["problems"] == [list(p) for p in PROBLEMS.items()] and data["max_note"] == MAX_NOTE_CHARS
    view = as_view(conn, CHIMERA)
    assert data["items"]
    for card in data["items"]:
        d = decision_view(conn, view, card["id"])
        assert card["doc"] == d["doc"]
        assert [raw for raw, _ in card["gold"]] == gold_items("chimera", document(conn, view, d["doc"])["payload"])
        assert card["gold_item"] is None or card["gold_item"] in [raw for raw, _ in card["gold"]]


def test_a_blind_card_of_every_family_sends_nothing_the_judge_or_others_said(app_db, conn):
    sighted_saw = set()
    for run in _runs(conn):
        _mark_judge_and_others(conn, run, "rev")
        _, blind = _card_data(_queue(app_db, run, "rev", blind=True))
        sent = json.dumps(blind)
        assert blind["items"] and not [w for w in (JUDGE_SAID, OTHER, OTHER_SAID) if w in sent], run
        _, sighted = _card_data(_queue(app_db, run, "rev"))
        sighted_saw |= {w for w in (JUDGE_SAID, OTHER) if w in json.dumps(sighted)}
    assert sighted_saw == {JUDGE_SAID, OTHER}  # the marks do reach a sighted card: the blind one left them out


# ---- what the browser sends back ---------------------------------------------------------------------------------

def _send(at: AppTest, component_id: str, *, events: list[dict] | None = None, open_decision: int | None = None,
          token: str) -> AppTest:
    """Run the page as if the browser had sent its outbox (and/or followed the document link)."""
    states = WidgetStates()
    states.widgets.extend(w for w in at._tree.get_widget_states().widgets if w.id != component_id)
    if events is not None:
        states.widgets.append(WidgetState(id=component_id, json_value=json.dumps(
            {"outbox": {"queue": token, "events": events, "cursor": 0, "nonce": len(events)}})))
    if open_decision is not None:
        states.widgets.append(WidgetState(id=_make_trigger_id(component_id, "events"), json_trigger_value=json.dumps(
            [{"event": "open", "value": open_decision}])))
    out = at._run(states)
    assert not out.exception
    return out


def test_a_note_and_a_flag_sent_by_the_browser_are_stored_once_a_link_opens_the_document(app_db, conn):
    at = _queue(app_db, CHIMERA, "ana")
    component_id, data = _card_data(at)
    first, second = data["items"][0], data["items"][1]
    label = first["buttons"][0]["label"]
    base = {"run": CHIMERA, "who": "ana"}
    events = [{"cid": "n-1", "type": "label", "decision": first["id"], "label": label, "note": "  odd span  ", **base},
              {"cid": "f-1", "type": "erratum", "decision": second["id"], "item": second["gold"][0][0],
               "typed": "", "problem": "wrong type", "correction": "material: Fe", "note": "see the text",
               "doc": "not-this-document", **base}]
    at = _send(at, component_id, events=events, token=data["queue"])
    at = _send(at, component_id, events=events, token=data["queue"])  # re-sent: answered, not stored again
    rows = conn.execute("SELECT decision_id, label, note FROM reviews WHERE reviewer = 'ana'").fetchall()
    assert rows == [(first["id"], label, "odd span")]
    flags = [r for r in history(conn, CHIMERA) if r["reviewer"] == "ana"]
    assert len(flags) == 1
    assert (flags[0]["doc_id"], flags[0]["decision_id"], flags[0]["item"], flags[0]["problem"],
            flags[0]["correction"], flags[0]["note"]) == (second["doc"], second["id"], second["gold"][0][0],
                                                          "wrong type", "material: Fe", "see the text")
    _, data = _card_data(at)
    assert data["acks"]["f-1"]["ok"] and data["acks"]["f-1"]["strip"].startswith("Flagged:")
    assert data["acks"]["n-1"]["ok"]
    # the document link, followed in this session: the Document page of that decision
    at = _send(at, component_id, open_decision=second["id"], token=data["queue"])
    assert at.query_params["doc"] == second["doc"] and at.query_params["decision_no"] == str(
        as_view(conn, CHIMERA).decision_numbers([second["id"]])[second["id"]])
    assert at.query_params["reviewer"] == "ana"
    assert any("review" in t.value for t in at.title)


def test_a_link_to_a_decision_of_another_run_opens_nothing(app_db, conn):
    at = _queue(app_db, CHIMERA, "ana")
    component_id, data = _card_data(at)
    other = queue_ids(conn, as_view(conn, _runs(conn)[-1]), "ana", "all")[0]
    at = _send(at, component_id, open_decision=other, token=data["queue"])
    assert [t.value for t in at.title] == ["Review queue"]


def test_the_classic_card_stores_its_note_by_the_same_rule(app_db, conn):
    """The classic card's note box and the browser card's note both go through `review_note`."""
    view = as_view(conn, CHIMERA)
    ids = queue_ids(conn, view, "cleo", "all")
    for k, note in enumerate(NOTES[:4]):
        at = open_page(AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run(), "queue", reviewer="cleo",
                       run=CHIMERA)
        at.text_input(key="queue.note").input(note or "")
        at.button(key="queue.label.0").click().run()
        assert not at.exception
        classic = conn.execute("SELECT note FROM reviews WHERE reviewer = 'cleo' ORDER BY id DESC").fetchone()[0]
        decision = ids[len(NOTES) + k]
        scheme = view.task.label_schemes[decision_view(conn, view, decision)["kind"]]
        store_events(conn, view, [{"cid": f"cl-{k}", "type": "label", "decision": decision, "label": scheme.labels[0],
                                   "note": note, "run": CHIMERA, "who": "cleo"}],
                     Reviewer(name="cleo", role="reviewer", blind=False), {})
        browser = conn.execute("SELECT note FROM reviews WHERE client_id = ?", [f"cl-{k}"]).fetchone()[0]
        assert classic == browser == review_note(note), note


# ---- the store's rules, event by event ---------------------------------------------------------------------------

def _flag(view, cid: str, decision: int, **kw) -> dict:
    return {"cid": cid, "type": "erratum", "decision": decision, "item": None, "typed": "a gold item",
            "problem": "other", "correction": "", "note": "", "run": view.name, "who": "ana", **kw}


def test_review_note_strips_and_refuses_what_check_note_refuses():
    assert [review_note(n) for n in NOTES] == ["both spans name it", "line one\nline two", None, None, None,
                                               "x" * MAX_NOTE_CHARS]
    for bad in ("x" * (MAX_NOTE_CHARS + 1), 3, ["a"]):
        with pytest.raises(AuditError):
            review_note(bad)


def test_flagged_item_is_the_listed_one_else_the_typed_one():
    assert flagged_item("gold: Fe", "ignored") == "gold: Fe"
    assert flagged_item(None, "  typed  ") == "typed" and flagged_item(None, None) == ""


def test_a_label_whose_note_is_too_long_is_not_stored(conn):
    view = as_view(conn, CHIMERA)
    i = queue_ids(conn, view, "ana", "all")[0]
    label = view.task.label_schemes[decision_view(conn, view, i)["kind"]].labels[0]
    acks = store_events(conn, view, [{"cid": "long", "type": "label", "decision": i, "label": label,
                                      "note": "x" * (MAX_NOTE_CHARS + 1), "run": CHIMERA, "who": "ana"}],
                        Reviewer(name="ana", role="reviewer", blind=False), {})
    assert not acks["long"]["ok"] and "note" in acks["long"]["error"]
    assert conn.execute("SELECT COUNT(*) FROM reviews WHERE reviewer = 'ana'").fetchone()[0] == 0


def test_a_flag_is_refused_without_the_right_the_run_or_a_decision_and_stored_nowhere(conn):
    view = as_view(conn, CHIMERA)
    i = queue_ids(conn, view, "ana", "all")[0]

    def refuse(action: str) -> None:
        if action == "flag_erratum":
            raise AuditError("your role may not flag gold errors")

    cases = {"role": (_flag(view, "r1", i), Reviewer(name="ana", role="reviewer", blind=False, check=refuse)),
             "run": (_flag(view, "r2", i, run="another-run"), Reviewer(name="ana", role="reviewer", blind=False)),
             "who": (_flag(view, "r3", i, who="bo"), Reviewer(name="ana", role="reviewer", blind=False)),
             "decision": (_flag(view, "r4", 10**12), Reviewer(name="ana", role="reviewer", blind=False)),
             "not an id": (_flag(view, "r5", True), Reviewer(name="ana", role="reviewer", blind=False)),
             "problem": (_flag(view, "r6", i, problem="nope"), Reviewer(name="ana", role="reviewer", blind=False)),
             "no item": (_flag(view, "r7", i, typed="  "), Reviewer(name="ana", role="reviewer", blind=False))}
    for why, (event, who) in cases.items():
        acks = store_events(conn, view, [event], who, {})
        assert not acks[event["cid"]]["ok"] and acks[event["cid"]]["error"], why
    assert history(conn, view) == []


def test_a_flag_resent_by_a_new_session_is_stored_once_and_its_id_is_not_anyone_elses(conn):
    view = as_view(conn, CHIMERA)
    i = queue_ids(conn, view, "ana", "all")[0]
    ana = Reviewer(name="ana", role="reviewer", blind=False)
    for _ in range(3):  # a reload re-sends from the tab's outbox: each a new session (empty answers)
        acks = store_events(conn, view, [_flag(view, "same", i)], ana, {})
        assert acks["same"]["ok"]
    assert len(history(conn, view)) == 1 and acks["same"]["strip"].startswith("Flagged earlier")
    bo = Reviewer(name="bo", role="reviewer", blind=False)
    acks = store_events(conn, view, [_flag(view, "same", i, who="bo")], bo, {})
    assert not acks["same"]["ok"] and len(history(conn, view)) == 1
