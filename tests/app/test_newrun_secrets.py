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
