"""The review card's save route (`ui/review_card/route.py`, issue 38): labels stored without a rerun, through the
same `store_events` as the component's channel, and only under a grant the queue page issued; the role is checked
again at every request (team mode: the roles file's role of the grant's address now)."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from audit.review.queue import decision_view, queue_ids
from audit.views import as_view
from ui import auth
from ui.review_card import route
from ui.review_card.grants import Grant, Grants

URL = "/" + route.PATH


@pytest.fixture
def grants() -> Grants:
    return Grants()


@pytest.fixture
def client(grants):
    with TestClient(Starlette(routes=route.routes("", grants))) as c:
        yield c


@pytest.fixture
def view(conn):
    return as_view(conn, conn.execute("SELECT name FROM runs ORDER BY id").fetchone()[0])


def _grant(app_db, view, **kw) -> Grant:
    fields = {"db_path": str(app_db), "run_row": view.row, "policy": view.policy, "reviewer": "ana",
              "role": "reviewer", "blind": False, "sampled": False, "queue": "q1", "team": False} | kw
    return Grant(**fields)


def _events(conn, view, who: str = "ana", n: int = 3, prefix: str = "c") -> list[dict]:
    ids = queue_ids(conn, view, who, "all")[:n]
    return [{"cid": f"{prefix}{k}", "type": "label", "run": view.name, "who": who, "decision": i,
             "label": view.task.label_schemes[decision_view(conn, view, i)["kind"]].labels[0]}
            for k, i in enumerate(ids)]


def _rows(conn, who: str = "ana") -> list[tuple]:
    return conn.execute("SELECT decision_id, client_id, blind, auth_email FROM reviews WHERE reviewer = ? "
                        "ORDER BY id", [who]).fetchall()


def test_labels_under_a_grant_are_stored_once_and_answered(client, grants, conn, view, app_db):
    token = grants.issue(_grant(app_db, view))
    events = _events(conn, view)
    r = client.post(URL, json={"grant": token, "queue": "q1", "events": events})
    assert r.status_code == 200
    acks = r.json()["acks"]
    assert [acks[e["cid"]]["ok"] for e in events] == [True] * 3
    assert [row[1] for row in _rows(conn)] == ["c0", "c1", "c2"]
    again = client.post(URL, json={"grant": token, "queue": "q1", "events": events})  # a re-send: stored once
    assert all(a["ok"] for a in again.json()["acks"].values())
    assert len(_rows(conn)) == 3


@pytest.mark.parametrize("body", [{}, {"grant": None}, {"grant": "made-up-token"}, {"grant": ["x"]}])
def test_a_request_without_a_known_grant_is_refused_and_stores_nothing(client, grants, conn, view, app_db, body):
    grants.issue(_grant(app_db, view))  # some grant exists; the request does not name it
    r = client.post(URL, json=body | {"queue": "q1", "events": _events(conn, view)})
    assert r.status_code == 403
    assert _rows(conn) == []


def test_a_grant_is_for_its_reviewer_and_run_only(client, grants, conn, view, app_db):
    token = grants.issue(_grant(app_db, view))
    bob = _events(conn, view, who="bob", n=1)  # the browser claims to be bob: the grant is ana's
    r = client.post(URL, json={"grant": token, "queue": "q1", "events": bob})
    assert r.json()["acks"]["c0"]["ok"] is False
    assert _rows(conn, "bob") == [] and _rows(conn) == []
    assert client.post(URL, json={"grant": token, "queue": "other", "events": bob}).status_code == 409


def test_a_blind_grant_stores_blind_reviews(client, grants, conn, view, app_db):
    token = grants.issue(_grant(app_db, view, blind=True))
    client.post(URL, json={"grant": token, "queue": "q1", "events": _events(conn, view, n=2)})
    assert [row[2] for row in _rows(conn)] == [1, 1]


def _team(monkeypatch, roles: dict[str, str], signed_in: str | None = "ana@lab.org") -> None:
    monkeypatch.setattr(auth, "team_mode", lambda: True)
    monkeypatch.setattr(auth, "config_problem", lambda: None)
    monkeypatch.setattr(auth, "role_of", lambda email: roles.get(email))
    monkeypatch.setattr(route, "browser_email", lambda request: signed_in)  # the browser's sign-in cookie now


@pytest.mark.parametrize("signed_in", [None, "bob@lab.org"])
def test_a_team_grant_stores_nothing_once_the_browser_signed_out_or_in_as_someone_else(
        client, grants, conn, view, app_db, monkeypatch, signed_in):
    """Signed out in one tab, the other tab's card kept storing as the person who left (marked signed in); so did
    it after someone else signed in in the same browser."""
    _team(monkeypatch, {"ana@lab.org": "reviewer", "bob@lab.org": "reviewer"}, signed_in=signed_in)
    token = grants.issue(_grant(app_db, view, team=True, subject="sub-ana", email="ana@lab.org"))
    r = client.post(URL, json={"grant": token, "queue": "q1", "events": _events(conn, view, n=1)})
    assert r.status_code == 401 and "no longer signed in as ana@lab.org" in r.json()["error"]
    assert _rows(conn) == []


def test_the_browser_email_is_read_from_streamlits_signed_cookie(monkeypatch):
    """The reader itself, on a cookie signed as Streamlit signs it: a forged or missing cookie reads as signed out."""
    import json as _json

    from starlette.requests import Request
    from streamlit.web.server.starlette import starlette_auth_routes as sar
    from streamlit.web.server.starlette.starlette_app_utils import create_signed_value

    monkeypatch.setattr(sar, "get_cookie_secret", lambda: "s3cret")

    def request(cookie: bytes | None) -> Request:
        headers = [(b"cookie", b"_streamlit_user=" + cookie)] if cookie else []
        return Request({"type": "http", "headers": headers})

    info = _json.dumps({"email": "ana@lab.org", "is_logged_in": True}).encode()
    assert route.browser_email(request(create_signed_value("s3cret", "_streamlit_user", info))) == "ana@lab.org"
    assert route.browser_email(request(create_signed_value("other", "_streamlit_user", info))) is None
    assert route.browser_email(request(None)) is None


def test_team_mode_checks_the_role_held_now_at_every_request(client, grants, conn, view, app_db, monkeypatch):
    roles = {"ana@lab.org": "reviewer"}
    _team(monkeypatch, roles)
    token = grants.issue(_grant(app_db, view, team=True, subject="sub-ana", email="ana@lab.org"))
    first, second = _events(conn, view, n=1), _events(conn, view, n=2, prefix="d")[1:]
    assert client.post(URL, json={"grant": token, "queue": "q1", "events": first}).json()["acks"]["c0"]["ok"]
    assert _rows(conn)[0][3] == "ana@lab.org"  # stored under the signed-in identity
    del roles["ana@lab.org"]  # the owner takes the role away while the tab is open
    ack = client.post(URL, json={"grant": token, "queue": "q1", "events": second}).json()["acks"]["d1"]
    assert ack["ok"] is False and "no role" in ack["error"]
    assert len(_rows(conn)) == 1


def test_team_mode_refuses_adjudication_to_a_reviewer(client, grants, conn, view, app_db, monkeypatch):
    _team(monkeypatch, {"ana@lab.org": "reviewer"})
    token = grants.issue(_grant(app_db, view, role="adjudicator", team=True, subject="s", email="ana@lab.org"))
    ack = client.post(URL, json={"grant": token, "queue": "q1", "events": _events(conn, view, n=1)}).json()
    assert ack["acks"]["c0"]["ok"] is False and "adjudicator" in ack["acks"]["c0"]["error"]
    assert _rows(conn) == []


def test_a_local_grant_is_refused_once_the_server_is_in_team_mode(client, grants, conn, view, app_db, monkeypatch):
    token = grants.issue(_grant(app_db, view))
    _team(monkeypatch, {"ana@lab.org": "owner"})
    ack = client.post(URL, json={"grant": token, "queue": "q1", "events": _events(conn, view, n=1)}).json()
    assert ack["acks"]["c0"]["ok"] is False
    assert _rows(conn) == []


def test_a_rerun_keeps_its_token_and_a_changed_grant_replaces_it(app_db, view):
    grants = Grants()
    first = grants.issue(_grant(app_db, view))
    assert grants.issue(_grant(app_db, view), first) == first
    blind = grants.issue(_grant(app_db, view, blind=True), first)
    assert blind != first and grants.lookup(first) is None and grants.lookup(blind).blind


def test_tokens_expire_and_are_bounded(app_db, view, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr("ui.review_card.grants.time.monotonic", lambda: clock[0])
    grants = Grants(ttl_s=60, max_grants=2)
    a = grants.issue(_grant(app_db, view))
    clock[0] += 61
    assert grants.lookup(a) is None
    b, c, d = (grants.issue(_grant(app_db, view, reviewer=n)) for n in "bcd")
    assert grants.lookup(b) is None and grants.lookup(c) and grants.lookup(d)


def _labelled(conn, view, who: str = "ana") -> int:
    return conn.execute("SELECT COUNT(DISTINCT decision_id) FROM reviews WHERE reviewer = ? AND run_id = ?",
                        [who, view.id]).fetchone()[0]


def test_each_answer_carries_the_progress_line_read_after_its_labels(client, grants, conn, view, app_db):
    from ui.queue_progress import progress_line

    token = grants.issue(_grant(app_db, view, in_queue=17))
    for n in (1, 3):  # the card was drawn at 0 labels; each answer moves its line on without a rerun
        body = client.post(URL, json={"grant": token, "queue": "q1", "events": _events(conn, view, n=n)}).json()
        assert _labelled(conn, view) == n
        now = as_view(conn, view.name)  # a view of the state now (a view keeps what it read)
        assert body["progress"] == progress_line(now, reviewer="ana", in_queue=17, sample=False, blind=False)
        assert body["progress"].startswith(f"You have labelled {n} of {view.row['n_decisions']:,} decisions")
        assert "17 in this queue" in body["progress"]


def test_the_sample_queues_line_says_the_samples_progress_after_each_answer(client, grants, conn, view, app_db):
    from audit.review.sampling import create_plan, next_sample
    from ui.queue_progress import progress_line

    create_plan(conn, view.name, seed=1)
    token = grants.issue(_grant(app_db, view, sampled=True, in_queue=5, with_sample=True))
    before = progress_line(view, reviewer="ana", in_queue=5, sample=True, blind=False)
    served = next_sample(conn, view)
    events = [{"cid": f"s{k}", "type": "label", "run": view.name, "who": "ana", "decision": i,
               "label": view.task.label_schemes[decision_view(conn, view, i)["kind"]].labels[0]}
              for k, i in enumerate(served["decisions"])]
    body = client.post(URL, json={"grant": token, "queue": "q1", "events": events}).json()
    assert all(a["ok"] for a in body["acks"].values())
    now = as_view(conn, view.name)
    assert body["progress"] == progress_line(now, reviewer="ana", in_queue=5, sample=True, blind=False) != before
    assert " · " in body["progress"]  # the sample's part follows the count


def test_labels_are_answered_when_the_line_cannot_be_read(client, grants, conn, view, app_db, monkeypatch):
    def broken(*_a, **_k):
        raise RuntimeError("planted")

    monkeypatch.setattr("ui.queue_progress.progress_line", broken)
    token = grants.issue(_grant(app_db, view))
    body = client.post(URL, json={"grant": token, "queue": "q1", "events": _events(conn, view, n=2)}).json()
    assert [a["ok"] for a in body["acks"].values()] == [True, True] and "progress" not in body
    assert _labelled(conn, view) == 2


def test_a_rerun_updates_the_queue_size_its_grant_answers_with(app_db, view):
    grants = Grants()
    first = grants.issue(_grant(app_db, view, in_queue=10))
    assert grants.issue(_grant(app_db, view, in_queue=9, with_sample=True), first) == first  # the same right
    assert grants.lookup(first).in_queue == 9 and grants.lookup(first).with_sample
