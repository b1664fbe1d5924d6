"""Improve the judge in a real browser (issue #37): a deep link on the running server, the fit, the result drawn
(kappa cards, the kappa-vs-threshold curve, the tables) without an exception."""

from __future__ import annotations

from contextlib import closing

import pytest

pytest.importorskip("playwright.sync_api")

from playwright.sync_api import expect  # noqa: E402

from audit.runs import score_run  # noqa: E402
from audit.store.database import open_db  # noqa: E402
from devtools.paraphrase_run import GOLD, write_paraphrase_predictions  # noqa: E402
from tests.cli.test_improve_judge import RUN, review_documents  # noqa: E402
from tests.e2e.e2e_helpers import RERUN_TIMEOUT, assert_no_exception, open_url, shoot, wait_idle  # noqa: E402

pytestmark = pytest.mark.e2e


def test_the_owner_improves_a_too_strict_judge_in_the_browser(demo_app, new_page, shots, tmp_path):
    truth = write_paraphrase_predictions(tmp_path / "pred.jsonl", seed=0)
    db = open_db(demo_app.db)
    with closing(db.conn):
        score_run(db, "chimera", {"gold": str(GOLD), "pred": str(tmp_path / "pred.jsonl")}, "fuzzy:95", run=RUN)
    review_documents(demo_app.db, truth, 30)
    page = new_page()
    open_url(page, f"{demo_app.url}/improve_judge?run={RUN}", "Improve the judge")
    page.get_by_role("button", name="Fit and evaluate").click()
    expect(page.get_by_text("improvement shown")).to_be_visible(timeout=RERUN_TIMEOUT * 4)
    wait_idle(page)
    assert_no_exception(page)
    expect(page.get_by_test_id("stMarkdown").filter(has_text="Judge after")).to_contain_text("fuzzy:")
    expect(page.get_by_test_id("stVegaLiteChart").or_(page.get_by_test_id("stArrowVegaLiteChart"))).to_have_count(1)
    shoot(page, shots, "improve_judge")
