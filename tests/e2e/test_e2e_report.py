"""The audit report in a real browser, opened from disk with every request blocked: each family's demo report
draws one chart (svg or canvas) per figure and asks the network for nothing. With UPDATE_SCREENSHOTS=1 the full
page (1400 px wide) is saved as docs/report-<family>.png for the README."""

from __future__ import annotations

import json
import os
import re

import pytest

from audit.demo import demo_runs
from audit.outputs.report import DATA_ELEMENT_ID, build_report, report_html
from audit.store.database import open_db
from audit.views import load_view
from tests.e2e.e2e_config import ROOT
from tests.e2e.e2e_server import copy_db
from ui.families import report_panel

pytestmark = pytest.mark.xdist_group("e2e-report")  # the reports are built once, for the module's tests
FIRST_DEMO = {}
for _task, _demo in demo_runs():
    FIRST_DEMO.setdefault(_task, _demo.name)


@pytest.fixture(scope="module")
def report_files(tmp_path_factory, demo_db):
    folder = tmp_path_factory.mktemp("reports")
    db = open_db(copy_db(demo_db, folder / "demo.db"))  # the demo runs, as `load_demo` scored them
    out = {}
    for task, run in FIRST_DEMO.items():
        view = load_view(db, run)
        page = report_html(build_report(view, report_panel(view.task.name)))
        path = folder / f"{run}.report.html"
        path.write_text(page, encoding="utf-8")
        figures = json.loads(re.search(rf'id="{DATA_ELEMENT_ID}">(.*?)</script>', page, re.S).group(1))["figures"]
        out[task] = (path, len(figures))
    return out


@pytest.mark.parametrize("task", list(FIRST_DEMO))
def test_report_renders_every_chart_offline(browser, report_files, task):
    path, n_figures = report_files[task]
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    requests: list[str] = []
    url = path.as_uri()

    def block(route):  # the report file itself is the only thing the page may read
        if route.request.url == url:
            route.continue_()
        else:
            requests.append(route.request.url)
            route.abort()

    ctx.route("**/*", block)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    charts = page.locator(".chart")
    assert charts.count() == n_figures > 0
    page.wait_for_function(f"document.querySelectorAll('.chart svg, .chart canvas').length >= {n_figures}",
                           timeout=30_000)
    per_chart = page.evaluate("[...document.querySelectorAll('.chart')].map(c => "
                              "c.querySelectorAll(':scope > svg, :scope > canvas').length)")
    assert per_chart == [1] * n_figures
    assert not page.get_by_text("chart failed").count()
    assert not errors, errors
    assert not requests, requests
    if os.environ.get("UPDATE_SCREENSHOTS") == "1":
        page.wait_for_timeout(500)
        page.screenshot(path=str(ROOT / "docs" / f"report-{task}.png"), full_page=True)
    ctx.close()
