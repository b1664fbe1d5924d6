"""The offline report with hostile markup in every text field (issue #34, third round), opened from disk in a real
browser with a console, page-error, CSP-violation and request listener: no planted script or handler runs, nothing
remote is asked for, the report's own scripts cause no CSP violation and every chart still draws. The report's
Content-Security-Policy allows its two inline scripts by hash only: markup that escaped the escaping (simulated by
inserting it raw) would not run either."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from audit.outputs.report import DATA_ELEMENT_ID, build_report, report_html
from audit.review.errata import add_erratum
from audit.review.reviews import add_review
from audit.runs import score_run
from audit.store.database import open_db
from audit.views import load_view
from tests.conftest import GOLD, JUDGE_LOG, PRED_MIXED
from ui.families import report_panel

HOSTILE = ['<img src=x onerror="window.__pwned=1">', "<script>window.__pwned=2</script>",
           "</script><script>window.__pwned=3</script>", '"><svg onload="window.__pwned=4">',
           "<a href=\"javascript:window.__pwned=5\">x</a>", "<img src='http://127.0.0.1:9/track.png'>",
           "<iframe src='http://127.0.0.1:9/'></iframe>", "<style>@import 'http://127.0.0.1:9/x.css'</style>"]
RUN = "r" + HOSTILE[0]
pytestmark = pytest.mark.xdist_group("r3-report")  # the hostile report is built once, for the module's tests
LISTEN = """
window.__violations = [];
document.addEventListener('securitypolicyviolation',
  e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + (e.sample || '')));
"""


def hostile_report(folder: Path) -> tuple[str, int]:
    """The report of a CHIMERA run whose run name, judge spec, input names, entity types, spans, reviewer names,
    notes and errata all carry HOSTILE markup; (its HTML, its number of figures)."""
    db = open_db(folder / "hostile.db")
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, f"replay:{JUDGE_LOG}", run="mixed")
    ids = [r[0] for r in db.execute("SELECT id FROM decisions ORDER BY id")]
    doc = db.execute("SELECT doc_id FROM decisions WHERE id = ?", [ids[0]]).fetchone()[0]
    for i, h in enumerate(HOSTILE):
        add_review(db, "mixed", ids[i], "no-match", f"rev{i}", note=h)
        add_erratum(db, "mixed", doc, h + f" {i}", "other", f"rev{i}", correction=h, note=h)
    types = [r[0] for r in db.execute("SELECT DISTINCT type FROM decisions ORDER BY type")]
    row, identity, inputs = db.execute("SELECT original_metrics, judge_identity, inputs FROM runs").fetchone()
    spec = "replay:" + HOSTILE[1] + ".jsonl"
    with db.conn:
        for t, h in zip(types, HOSTILE, strict=False):
            db.execute("UPDATE decisions SET type = ? WHERE type = ?", [h, t])
            row = row.replace(json.dumps(t), json.dumps(h))
        db.execute("UPDATE decisions SET left = left || ?, right = right || ?", [HOSTILE[3], HOSTILE[5]])
        for i, h in enumerate(HOSTILE):
            db.execute("UPDATE reviews SET reviewer = ? WHERE reviewer = ?", [h + f" {i}", f"rev{i}"])
            db.execute("UPDATE errata SET reviewer = ? WHERE reviewer = ?", [h + f" {i}", f"rev{i}"])
        inputs = json.loads(inputs)
        for v in inputs.values():
            if isinstance(v, dict):
                v["name"] = HOSTILE[6] + str(v.get("name"))
        db.execute("UPDATE runs SET name = ?, original_metrics = ?, judge_spec = ?, judge_identity = ?, inputs = ?",
                   [RUN, row, spec, json.dumps(json.loads(identity) | {"spec": spec}), json.dumps(inputs)])
    view = load_view(db, RUN)
    page = report_html(build_report(view, report_panel(view.task.name)))
    db.conn.close()
    figures = json.loads(re.search(rf'id="{DATA_ELEMENT_ID}">(.*?)</script>', page, re.S).group(1))["figures"]
    return page, len(figures)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[str, int]:
    return hostile_report(tmp_path_factory.mktemp("hostile-report"))


def open_report(browser, path: Path) -> tuple:  # noqa: ANN001 (playwright Browser)
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    url = path.as_uri()
    requests: list[str] = []

    def block(route):  # noqa: ANN001, ANN202 - the report file itself is the only thing the page may read
        if route.request.url == url:
            route.continue_()
        else:
            requests.append(route.request.url)
            route.abort()

    ctx.route("**/*", block)
    ctx.add_init_script(LISTEN)
    page = ctx.new_page()
    console: list[str] = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    page.goto(url)
    return ctx, page, requests, console


def test_the_csp_allows_inline_script_only_by_hash(report) -> None:
    page, _ = report
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1)
    script_src = re.search(r"script-src ([^;]*)", csp).group(1).split()
    assert "'unsafe-inline'" not in script_src and "'unsafe-hashes'" not in script_src
    assert sum(s.startswith("'sha256-") for s in script_src) == 2
    assert "window.__pwned" in page  # the planted markup is in the file (escaped)


def test_hostile_text_runs_nothing_asks_nothing_and_the_charts_draw(browser, report, tmp_path) -> None:
    page_html, n_figures = report
    path = tmp_path / "hostile.report.html"
    path.write_text(page_html, encoding="utf-8")
    ctx, page, requests, console = open_report(browser, path)
    page.wait_for_function(f"document.querySelectorAll('.chart svg, .chart canvas').length >= {n_figures}",
                           timeout=30_000)
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("window.__violations") == []  # neither the report's own scripts nor any data
    assert requests == []
    assert [m for m in console if m.startswith(("error", "pageerror"))] == []
    assert not page.get_by_text("chart failed").count()
    assert page.get_by_text(HOSTILE[0], exact=False).count() > 0  # shown as text
    ctx.close()


def test_markup_that_escaped_the_escaping_still_would_not_run(browser, report, tmp_path) -> None:
    page_html, n_figures = report
    raw = page_html.replace("<main>", "<main>" + "".join(HOSTILE[:5]), 1)  # as if `esc` had been forgotten
    path = tmp_path / "raw.report.html"
    path.write_text(raw, encoding="utf-8")
    ctx, page, requests, _ = open_report(browser, path)
    page.wait_for_function(f"document.querySelectorAll('.chart svg, .chart canvas').length >= {n_figures}",
                           timeout=30_000)
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None
    assert any("script-src" in v for v in page.evaluate("window.__violations"))  # refused, and said so
    assert requests == [] or all(not r.startswith("http") for r in requests)
    ctx.close()
