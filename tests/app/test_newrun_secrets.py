"""Issue 27, Security: the new-run form's base-URL placeholder shows `$OPENAI_BASE_URL` through the one endpoint
redaction (scoring/judges/redact.py): no user info, no query, no key in the path. AppTest on the Runs page."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT

PATH_TOKEN = "key-7f3a9c2e41b84d6f"


def test_the_new_run_forms_placeholder_shows_the_redacted_endpoint(monkeypatch: pytest.MonkeyPatch,
                                                                   app_db: Path) -> None:
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("OPENAI_BASE_URL", f"https://ana:pw-9@api.example.org/v1/{PATH_TOKEN}?sig=zz-77")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    label = next(o for o in at.selectbox(key="newrun.chimera.judge").options if o.startswith("openai:"))
    at.selectbox(key="newrun.chimera.judge").set_value(label).run()
    placeholder = at.text_input(key="newrun.base_url").placeholder
    assert placeholder == "https://api.example.org/v1/[redacted]"


def test_the_overview_shows_a_stored_identity_as_the_export_does(app, app_db) -> None:
    """A run stored before redaction: the overview's judge table shows the endpoint and sidecar redacted."""
    import json

    from audit.store.database import open_db
    from tests.app.conftest import open_page

    token = "sk-" + "Q7x" * 12
    db = open_db(app_db)
    ident = {"base_url": f"http://ana:pw@h/v1/{token}?key=abc", "source": {"path": "/home/ana/private/j.jsonl"}}
    db.execute("UPDATE runs SET judge_identity = ? WHERE name = 'demo-chimera-mixed'", [json.dumps(ident)])
    db.conn.commit()
    at = open_page(app, "overview", run="demo-chimera-mixed")
    assert not at.exception
    shown = json.dumps([df.value.to_dict() for df in at.dataframe], default=str)
    assert "h/v1/[redacted]" in shown
    assert all(leak not in shown for leak in (token, "pw", "abc", "/home/ana"))
