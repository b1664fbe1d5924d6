"""The browser review card's store (`ui.review_card.store.store_events`, its real entry point) refuses what a
session may not do, event by event (issue 34): another reviewer's client id, an undo of a review that is not the
session's own in this run or is in a role the session does not hold, a malformed event, without losing the events
sent behind it."""

from __future__ import annotations

from audit.errors import AuditError
from audit.review.queue import decision_view, queue_ids
from audit.review.reviews import add_review
from audit.views import as_view
from ui.review_card.store import Reviewer, store_events


def _runs(conn):
    names = [r[0] for r in conn.execute("SELECT name FROM runs ORDER BY id")]
    return [as_view(conn, n) for n in names]


def _reviewer(name: str, may_adjudicate: bool = False) -> Reviewer:
    def authorize(role: str) -> None:  # as the page's: ui.auth.check(ui.auth.review_action(role))
        if role == "adjudicator" and not may_adjudicate:
            raise AuditError(f"Only an adjudicator may settle conflicts as adjudicator; {name} is a reviewer.")
    return Reviewer(name=name, role="reviewer", blind=False, authorize=authorize)


def _label(conn, view, i: int) -> str:
    return view.task.label_schemes[decision_view(conn, view, i)["kind"]].labels[0]


def _event(view, cid: str, who: str, **kw) -> dict:
    return {"cid": cid, "type": "label", "run": view.name, "who": who, **kw}


def _rows(conn, where: str, args=()) -> list[tuple]:
    return conn.execute(f"SELECT reviewer, role, label, client_id FROM reviews WHERE {where} ORDER BY id",
                        args).fetchall()


def test_a_client_id_of_another_reviewer_is_not_answered_with_their_label(conn):
    view = _runs(conn)[0]
    i = queue_ids(conn, view, "ana", "all")[0]
    add_review(conn, view.name, i, _label(conn, view, i), "ana", note="ana's private note", client_id="ana-1")
    answered = store_events(conn, view, [_event(view, "ana-1", "bob", decision=i, label=_label(conn, view, i))],
                            _reviewer("bob"), {})
    assert answered["ana-1"]["ok"] is False
    assert "decision" not in answered["ana-1"] and "label" not in answered["ana-1"]
    assert _rows(conn, "reviewer = 'bob'") == []


def test_an_undo_naming_a_review_of_another_run_is_refused_alone_and_the_rest_are_stored(conn):
    run_a, run_b = _runs(conn)[:2]
    b = queue_ids(conn, run_b, "ana", "all")[0]
    add_review(conn, run_b.name, b, _label(conn, run_b, b), "ana", client_id="in-b")
    ids = queue_ids(conn, run_a, "ana", "all")[:3]
    events = [_event(run_a, "a-0", "ana", decision=ids[0], label=_label(conn, run_a, ids[0])),
              {"cid": "forged", "type": "undo", "undo_of": "in-b", "run": run_a.name, "who": "ana"},
              _event(run_a, "a-1", "ana", decision=ids[1], label=_label(conn, run_a, ids[1])),
              _event(run_a, "bad", "ana", decision=ids[2], label=_label(conn, run_a, ids[2]), note=["not", "text"]),
              _event(run_a, "a-2", "ana", decision=ids[2], label=_label(conn, run_a, ids[2]))]
    answered: dict = {}
    store_events(conn, run_a, events, _reviewer("ana"), answered)
    assert answered["forged"]["ok"] is False
    assert [cid for cid in ("a-0", "a-1", "a-2") if answered[cid]["ok"]] == ["a-0", "a-1", "a-2"]
    assert [r[3] for r in _rows(conn, "reviewer = 'ana' AND client_id LIKE 'a-%'")] == ["a-0", "a-1", "a-2"]
    assert _rows(conn, "client_id = 'forged'") == []


def test_an_undo_of_an_adjudication_is_refused_to_a_reviewer_session(conn):
    """The undo names (1) another person's adjudication, (2) the session's own adjudication from when it held the
    role: neither is stored, and the effective label does not move."""
    view = _runs(conn)[0]
    i = queue_ids(conn, view, "rita", "all")[0]
    label = _label(conn, view, i)
    add_review(conn, view.name, i, label, "adam", role="adjudicator", client_id="adam-adj")
    add_review(conn, view.name, i, label, "rita", role="adjudicator", client_id="rita-adj")
    before = decision_view(conn, view, i)["effective"]
    undos = [{"cid": f"u-{n}", "type": "undo", "undo_of": n, "run": view.name, "who": "rita"}
             for n in ("adam-adj", "rita-adj")]
    answered = store_events(conn, view, undos, _reviewer("rita"), {})
    assert [answered[u["cid"]]["ok"] for u in undos] == [False, False]
    assert _rows(conn, "client_id LIKE 'u-%'") == []
    assert decision_view(conn, view, i)["effective"] == before
    # an adjudicator's session withdraws its own adjudication
    answered = store_events(conn, view, [undos[1] | {"cid": "u-own"}], _reviewer("rita", may_adjudicate=True), {})
    assert answered["u-own"]["ok"] is True
    assert _rows(conn, "client_id = 'u-own'") == [("rita", "adjudicator", label, "u-own")]  # back to adam's


def test_a_label_that_is_no_sample_draw_is_refused_in_the_pages_words_on_both_cards(conn):
    """The card sent a sample-mode label for a document the queue would not serve: the refusal told the browser's
    reviewer to "review it without --sampled", a CLI flag. Both cards now say what to do on the page; the CLI keeps
    its flags."""
    from audit.review.sampling import check_sample_draw, create_plan, load_plan
    from ui.review_card.store import refusal_text

    view = _runs(conn)[0]
    create_plan(conn, view.name, seed=2)
    plan = load_plan(conn, view.name)
    first = plan.blocks[0]
    later = next(b for b in plan.blocks[1:] if b.stratum == first.stratum)
    dec = int(later.units[0])
    who = Reviewer(name="ana", role="reviewer", blind=False, sampled=True)
    answered = store_events(conn, view, [_event(view, "s-1", "ana", decision=dec, label=_label(conn, view, dec))],
                            who, {})
    error = answered["s-1"]["error"]
    assert answered["s-1"]["ok"] is False and f"document {later.id!r} is not what the sample queue serves" in error
    assert "Document page" in error and "--sampled" not in error and "queue --next" not in error
    assert _rows(conn, "reviewer = 'ana'") == []
    try:
        check_sample_draw(conn, view.name, dec)
    except AuditError as e:  # the classic card shows the same words; the CLI's own names its flags
        assert refusal_text(e) == error.removeprefix("not stored: ") and "--sampled" in str(e)
    else:
        raise AssertionError("no refusal")


def test_a_sample_label_in_a_run_without_a_plan_says_to_draw_the_sample_first(conn):
    """Without a plan there is no sample queue to reload: the refusal said to take the document it serves."""
    view = _runs(conn)[1]
    dec = queue_ids(conn, view, "ana", "all")[0]
    who = Reviewer(name="ana", role="reviewer", blind=False, sampled=True)
    error = store_events(conn, view, [_event(view, "np-1", "ana", decision=dec, label=_label(conn, view, dec))],
                         who, {})["np-1"]["error"]
    assert "has no sampling plan" in error and "draw the sample first" in error and "reload the queue" not in error
    assert "--sampled" not in error


def test_an_undo_on_the_browser_card_never_overwrites_an_adjudication_stored_in_between(conn, monkeypatch):
    """The card's undo read the decision's reviews, then wrote: olga's adjudication stored in the moment between was
    overwritten by the label adam's undo restored. Now the undo is refused alone and olga's holds."""
    import ui.review_card.store as card_store

    view = _runs(conn)[0]
    i = queue_ids(conn, view, "adam", "all")[0]
    labels = view.task.label_schemes[decision_view(conn, view, i)["kind"]].labels
    add_review(conn, view.name, i, labels[0], "adam", role="adjudicator", client_id="adam-adj")
    real = card_store.undo_label

    def olga_in_between(*args, **kw):
        label = real(*args, **kw)
        add_review(conn, view.name, i, labels[1], "olga", role="adjudicator")
        return label

    monkeypatch.setattr(card_store, "undo_label", olga_in_between)
    answered = store_events(conn, view, [{"cid": "u", "type": "undo", "undo_of": "adam-adj", "run": view.name,
                                          "who": "adam"}], _reviewer("adam", may_adjudicate=True), {})
    assert answered["u"]["ok"] is False and "reviewed by someone else since" in answered["u"]["error"]
    assert _rows(conn, "client_id = 'u'") == []
    e = as_view(conn, view.name).effective[i]
    assert (e.label, e.adjudicator) == (labels[1], "olga")
