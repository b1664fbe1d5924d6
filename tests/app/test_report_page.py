"""The Report page: the same HTML the CLI writes, shown in the page and offered as a one-click download."""

from __future__ import annotations

import json
import re

from tests.app.conftest import open_page

DEMO_IDEATION = "demo-ideation-si2024-humans"


def test_report_page_shows_and_offers_the_report(app):
    at = open_page(app, "report", run=DEMO_IDEATION)
    assert not at.exception
    assert [t.value for t in at.title] == ["Audit report"]
    buttons = at.get("download_button")
    assert len(buttons) == 1 and "Download the report" in buttons[0].proto.label
    frames = at.get("iframe")
    assert len(frames) == 1
    page = frames[0].proto.srcdoc
    data = json.loads(re.search(r'id="rejudge-data">(.*?)</script>', page, re.S).group(1))
    assert data["run"] == DEMO_IDEATION and data["figures"]
    assert any(f"{len(data['figures'])} figures" in c.value for c in at.caption)


def test_report_page_is_hidden_while_reviewing_blind(app):
    app.session_state["blind_mode"] = True
    at = open_page(app, "report", reviewer="ana", run=DEMO_IDEATION)
    assert not at.exception
    assert not at.get("download_button")
    assert any("hidden while you review blind" in i.value for i in at.info)
