"""The new-run form with an OpenAI-compatible judge (issue 28): the model, endpoint, key and concurrency are
asked for, the run is stored under the model the server serves, and no cost is shown for a model without a price.
AppTest on the Runs page against the scripted server (devtools/judge_server.py)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from devtools.judge_server import JudgeServer
from tests.app.conftest import plain
from tests.conftest import ROOT

KEY = "sk-form-test-key-93c1"


def test_the_new_run_form_names_the_model_the_server_serves(monkeypatch: pytest.MonkeyPatch, app_db: Path) -> None:
    """AppTest on the Runs page: openai-json with the endpoint typed and the model left empty is stored as the
    one model the server lists (never a hard-wired gpt-4o-mini), with no cost for a model without a price."""
    from streamlit.testing.v1 import AppTest

    db_file = app_db
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with JudgeServer(models=["smollm2-135m"], api_key=KEY) as srv:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
        at.selectbox(key="newrun.chimera.pred.choice").set_value("chimera/pred_perfect.jsonl")
        label = next(o for o in at.selectbox(key="newrun.chimera.judge").options if o.startswith("openai-json:"))
        at.selectbox(key="newrun.chimera.judge").set_value(label).run()
        assert at.text_input(key="newrun.model").value == ""  # no model is assumed
        at.text_input(key="newrun.base_url").set_value(srv.base_url)
        at.text_input(key="newrun.api_key").set_value(KEY)
        at.number_input(key="newrun.concurrency").set_value(2)
        at.text_input(key="newrun.name").set_value("smol")
        at.button(key="newrun.score").click().run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        assert at.success
        assert {b["model"] for b in srv.bodies} == {"smollm2-135m"}
    row = sqlite3.connect(db_file).execute("SELECT judge_spec, judge_identity, summary FROM runs WHERE name = 'smol'"
                                           ).fetchone()
    identity, summary = json.loads(row[1]), json.loads(row[2])
    assert row[0] == "openai-json:smollm2-135m" == identity["spec"] and identity["model"] == "smollm2-135m"
    assert "gpt-4o-mini" not in row[0] + row[1] and identity["price_usd_per_1m"] is None
    assert summary["judge"]["cost_usd"] is None and KEY not in row[1] + row[2]
    at.switch_page("pages/overview.py")
    at.query_params["run"] = "smol"
    at.run()
    assert not at.exception
    assert any("judge openai-json:smollm2-135m" in plain(c.value) for c in at.caption)
    assert not [m for m in at.metric if m.label == "Estimated cost" and m.value != "—"]
