"""Real browser (issue 28): a run scored from the new-run form with `openai-json` against a local server is shown
on its overview under the model the server serves, never a hard-wired one, and with no cost."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("playwright.sync_api")

from playwright.sync_api import expect  # noqa: E402

from tests.e2e.e2e_helpers import RERUN_TIMEOUT, enter_text, open_url, select, wait_idle, widget  # noqa: E402

pytestmark = pytest.mark.e2e

RUNS_TITLE = re.compile(r"^Rejudge")


def test_a_run_from_the_form_shows_the_model_that_answered(demo_app, new_page, shots):
    from devtools.judge_server import JudgeServer

    with JudgeServer(models=["smollm2-135m"]) as srv:
        page = new_page()
        open_url(page, demo_app.url, RUNS_TITLE)
        page.locator("summary").filter(has_text="Score a new run").click()
        wait_idle(page)
        select(page, "newrun.chimera.pred.choice", "chimera/pred_perfect.jsonl")
        select(page, "newrun.chimera.judge",
               "openai-json:MODEL — any OpenAI-compatible endpoint, structured JSON answers")
        expect(widget(page, "newrun.model").get_by_role("textbox")).to_have_value("")
        enter_text(page, "newrun.base_url", srv.base_url)
        enter_text(page, "newrun.concurrency", "2", role="spinbutton")
        enter_text(page, "newrun.name", "e2e-smollm2")
        page.get_by_role("button", name="Score", exact=True).click()
        expect(page.get_by_text("Scored and stored run")).to_be_visible(timeout=120_000)
        assert {b["model"] for b in srv.bodies} == {"smollm2-135m"}
    page.goto(f"{demo_app.url}/overview?run=e2e-smollm2")
    expect(page.get_by_text("judge openai-json:smollm2-135m")).to_be_visible(timeout=RERUN_TIMEOUT)
    expect(page.get_by_text("gpt-4o-mini")).to_have_count(0)
    expect(page.get_by_text(re.compile(r"\$\d"))).to_have_count(0)
