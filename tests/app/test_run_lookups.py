"""One run lookup per page render: a page reads its run through one `RunView` (`ui.state.current_view`), not by
looking the run up again in every helper (issue 21, item 2). Counted on every SQLite connection the render opens,
with a trace callback."""

from __future__ import annotations

import re

import pytest

import audit.store.database
from tests.app.conftest import open_page

RUN_LOOKUP = re.compile(r"FROM\s+runs\s+WHERE\s+name\s*=", re.IGNORECASE)


@pytest.fixture
def lookups(monkeypatch):
    """The statements that look a run up by name, on every connection opened from now on."""
    seen: list[str] = []
    connect = audit.store.database._connect

    def traced(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        db = connect(*args, **kwargs)
        db.conn.set_trace_callback(lambda sql: seen.append(sql) if RUN_LOOKUP.search(sql) else None)
        return db

    monkeypatch.setattr(audit.store.database, "_connect", traced)
    return seen


@pytest.mark.parametrize("policy", ["unanimous", "majority"])
@pytest.mark.parametrize("page", ["scores", "overview", "queue", "agreement", "document", "export", "errata"])
def test_a_page_render_looks_its_run_up_once(app, lookups, page, policy):
    app.session_state["effective_policy"] = policy
    lookups.clear()
    at = open_page(app, page, reviewer="ana")
    assert not at.exception, at.exception
    assert len(lookups) == 1, f"{page}: {len(lookups)} run lookups in one render"


def test_the_counter_sees_lookups(app, lookups):
    """The trace sees what it counts: a helper called with a run name looks the run up itself."""
    from audit.store.database import open_db
    from audit.views import decisions

    lookups.clear()
    decisions(open_db(audit.store.database.default_db_path()), app.session_state["current_run"])
    assert len(lookups) == 1
