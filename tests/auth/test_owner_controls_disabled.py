"""Owner-only controls are drawn disabled for anyone else, with the reason beside them, before any click (issue #40
point 8, second half): not enabled and then refused after the click."""

from __future__ import annotations

from contextlib import closing

import pytest

from audit.review.roles import refusal
from audit.runs import delete_run
from audit.store.database import open_db
from tests.app.conftest import plain
from tests.auth.conftest import team_app

DEMO = "demo-chimera-mixed"
ADJUDICATOR, OWNER = "adam@lab.org", "olga@lab.org"


def _runs_page(at, db_path):
    with closing(open_db(db_path).conn) as conn:
        from sqlite_utils import Database
        delete_run(Database(conn), "demo-ideation-si2024-humans", force=True)  # so "Load the demo runs" is drawn
    at.run()


def _queue_sample(at, _db_path):
    at.run()
    at.switch_page("pages/queue.py")
    at.query_params["run"] = DEMO
    at.run()
    at.selectbox(key="queue.mode").set_value("sample").run()


CONTROLS = {"runs.load_demo": ("load_runs", _runs_page), "newrun.score": ("score_run", lambda at, _db: at.run()),
            "queue.create_plan": ("edit_assignments", _queue_sample)}


@pytest.mark.parametrize("key", sorted(CONTROLS))
def test_an_owner_control_is_disabled_with_the_reason_for_others(app_db, roles_file, discovery_url, key):
    action, reach = CONTROLS[key]
    at = team_app(discovery_url, ADJUDICATOR, run=DEMO)
    reach(at, app_db)
    assert not at.exception
    button = at.button(key=key)
    assert button.disabled
    why = refusal("adjudicator", action)
    assert plain(button.proto.help) == plain(why)
    assert why in [plain(c.value) for c in at.caption]


@pytest.mark.parametrize("key", sorted(CONTROLS))
def test_the_owner_gets_the_control_enabled(app_db, roles_file, discovery_url, key):
    _action, reach = CONTROLS[key]
    at = team_app(discovery_url, OWNER, run=DEMO)
    reach(at, app_db)
    assert not at.exception
    assert not at.button(key=key).disabled
    assert not any(plain(c.value).startswith("Only an") for c in at.caption)


def test_the_import_uploader_is_disabled_with_the_reason_for_others(app_db, roles_file, discovery_url):
    at = team_app(discovery_url, ADJUDICATOR, run=DEMO)
    at.run()
    at.switch_page("pages/export.py")
    at.query_params["run"] = DEMO
    at.run()
    assert not at.exception
    (up,) = at.get("file_uploader")
    assert up.proto.disabled
    assert refusal("adjudicator", "import_reviews") in [plain(c.value) for c in at.caption]
