"""One decision numbering across card, URL and CLI (issue 40 point 7): a link to a decision carries the number the
card shows (`decision_no=`), which opens that decision on the Document page; an old link carrying the database id
(`decision=`) still opens it and the URL is rewritten to the number; an id of another run opens nothing. Runs whose
numbers differ from their ids (any run but the database's first) are the ones that tell the two apart."""

from __future__ import annotations

import re

from streamlit.testing.v1 import AppTest

from audit.views import as_view
from tests.app.conftest import open_page
from tests.conftest import ROOT


def _later_run(conn) -> tuple[str, dict, int]:
    """A run whose decisions' numbers are not their ids, a decision of it and its number."""
    name = [r[0] for r in conn.execute("SELECT name FROM runs ORDER BY id")][-1]
    view = as_view(conn, name)
    d = view.decisions()[2]
    number = view.decision_numbers([d["id"]])[d["id"]]
    assert number != d["id"]
    return name, d, number


def _focused(at: AppTest) -> str | None:
    """The focused (linked) card's title on the Document page: `#N (id I)`."""
    for h in at.get("html"):
        m = re.search(r'rj-card focus"><b>(.*?)</b>', h.proto.body)
        if m:
            return re.sub(r"<[^>]+>", "", m.group(1))
    return None


def _document(app_db, **params: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at = open_page(at, "document", reviewer="ana", **params)
    assert not at.exception, at.exception
    return at


def test_the_number_in_the_url_opens_the_decision_the_card_numbers(app_db, conn):
    run, d, number = _later_run(conn)
    at = _document(app_db, run=run, doc=d["doc"], decision_no=str(number))
    assert _focused(at) == f"#{number} (id {d['id']})"


def test_an_old_link_with_the_id_opens_it_and_shows_the_number(app_db, conn):
    run, d, number = _later_run(conn)
    at = _document(app_db, run=run, doc=d["doc"], decision=str(d["id"]))
    assert _focused(at) == f"#{number} (id {d['id']})"
    assert at.query_params.get("decision_no") in (str(number), [str(number)])
    assert "decision" not in at.query_params


def test_a_number_or_id_the_run_does_not_have_opens_nothing(app_db, conn):
    run, d, _ = _later_run(conn)
    first_run_id = conn.execute("SELECT MIN(id) FROM decisions").fetchone()[0]  # a decision of another run
    for params in ({"decision": str(first_run_id)}, {"decision_no": "999999"}, {"decision_no": "0"},
                   {"decision_no": "x"}):
        at = _document(app_db, run=run, doc=d["doc"], **params)
        assert _focused(at) is None, params


def _queue(conn) -> tuple[str, AppTest, str]:
    """The classic queue on the database's last run (numbers differ from ids there), and its head line."""
    run = [r[0] for r in conn.execute("SELECT name FROM runs ORDER BY id")][-1]
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at = open_page(at, "queue", reviewer="ana", run=run, queue="all")
    assert not at.exception, at.exception
    return run, at, next(m.value for m in at.markdown if "· decision #" in m.value)


def test_the_queue_links_the_document_page_by_the_number(app_db, conn):
    run, at, head = _queue(conn)
    number = int(re.search(r"decision #(\d+)", head).group(1))
    links = [p.proto for p in at.get("page_link") if "document" in p.proto.page]
    assert links and f"decision_no={number}" in links[0].query_string, links[0]
    doc = re.search(r"doc=([^&]+)", links[0].query_string).group(1)
    from urllib.parse import unquote_plus
    at = _document(app_db, run=run, doc=unquote_plus(doc), decision_no=str(number))
    assert _focused(at).startswith(f"#{number} ")


def test_the_queue_card_numbers_its_decision_as_its_head_does(app_db, conn):
    # the classic card's title said `#<id>` under a head saying `decision #<number> (id <id>)`: two numbers for one
    # decision, and `review --decision '#<id>'` opens another one
    _, at, head = _queue(conn)
    number, ident = re.search(r"decision #(\d+) \(id (\d+)\)", head).groups()
    assert number != ident
    titles = [re.sub(r"<[^>]+>", "", m.group(1)) for h in at.get("html")
              for m in [re.search(r'class="rj-card[^"]*"><b>(.*?)</b>', h.proto.body)] if m]
    assert titles == [f"#{number} (id {ident})"], titles
