"""Improve the judge is the owner's in team mode (issue #37)."""

from __future__ import annotations

from audit.review.roles import refusal
from tests.auth.conftest import team_app
from tests.auth.test_team_mode import ADJUDICATOR, OWNER, texts

DEMO_IDEATION = "demo-ideation-si2024-humans"


def test_only_the_owner_may_improve_the_judge_in_team_mode(app_db, roles_file, discovery_url):
    at = team_app(discovery_url, ADJUDICATOR, run=DEMO_IDEATION).run()
    at.switch_page("pages/improve_judge.py").run()
    assert not at.exception
    assert refusal("adjudicator", "improve_judge") in texts(at)
    assert not [b for b in at.button if b.key == "improve.go"]
    at = team_app(discovery_url, OWNER, run=DEMO_IDEATION).run()
    at.switch_page("pages/improve_judge.py").run()
    assert not at.exception and at.button(key="improve.go")
