"""Page switches in a real browser: a click on a sidebar link -> the clicked page drawn, timed in the page.

A capturing `click` listener on `window` notes the click; a MutationObserver notes the first mutation after which
the app has run the new page's script (the app's script state went to "running" after the click and is back to
"notRunning"), the URL is the clicked page's, nothing is stale (faded), no table skeleton or undrawn chart is left,
and a review card on the page is not still loading. Used by `bench/ui_latency.py`.
"""

from __future__ import annotations

import re
import time
from urllib.parse import quote, urlparse

SIDEBAR_PAGES = [("Run overview", "overview"), ("Document review", "document"), ("Review queue", "queue"),
                 ("Scores", "scores"), ("Agreement", "agreement"), ("Compare judges", "compare"),
                 ("Gold errata", "errata"), ("Export", "export"), ("Report", "report"), ("Runs", "runs")]
"""(sidebar link, URL path) in the order the bench clicks them; "Runs" is the default page ("/" or "/runs")."""

_SWITCH_JS = """() => {
  const sw = window.__rjSwitch = {t0: null, path: null, ran: false, samples: []};
  const app = () => document.querySelector('[data-testid="stApp"]');
  const drawn = () => {
    const a = app();
    return !!a && a.getAttribute('data-test-script-state') === 'notRunning'
      && sw.path.test(location.pathname)
      && !document.querySelector('[data-stale="true"]')
      && !document.querySelector('[data-testid="stSkeleton"]')
      && !document.querySelector('.rjrc [aria-busy="true"]')
      && [...document.querySelectorAll('[data-testid="stVegaLiteChart"], [data-testid="stArrowVegaLiteChart"]')]
           .every((c) => c.querySelector('canvas, svg'));
  };
  window.addEventListener('click', (e) => {
    const link = e.target.closest('[data-testid="stSidebarNav"] a');
    if (link && window.__rjTarget) { sw.t0 = performance.now(); sw.path = window.__rjTarget; sw.ran = false; }
  }, true);
  new MutationObserver((records) => {
    if (sw.t0 === null) return;
    const a = app();
    // a fast script's running -> notRunning can fall into one batch of records: its old value says it ran
    if (a && (a.getAttribute('data-test-script-state') === 'running' || records.some((r) =>
        r.target === a && r.attributeName === 'data-test-script-state' && r.oldValue === 'running'))) sw.ran = true;
    if (sw.ran && drawn()) { sw.samples.push(performance.now() - sw.t0); sw.t0 = null; }
  }).observe(document, {subtree: true, childList: true, characterData: true, attributes: true,
                        attributeOldValue: true});
}"""


_WHY_JS = """() => ({path: location.pathname, ran: window.__rjSwitch.ran,
  state: document.querySelector('[data-testid="stApp"]').getAttribute('data-test-script-state'),
  stale: document.querySelectorAll('[data-stale="true"]').length,
  skeletons: document.querySelectorAll('[data-testid="stSkeleton"]').length,
  busyCard: document.querySelectorAll('.rjrc [aria-busy="true"]').length,
  undrawnCharts: [...document.querySelectorAll('[data-testid="stVegaLiteChart"], [data-testid="stArrowVegaLiteChart"]')]
    .filter((c) => !c.querySelector('canvas, svg')).length})"""


def _path_pattern(url_path: str) -> str:
    """A JS regex of the page's location.pathname (the default page also answers at "/")."""
    return rf"^/{url_path}/?$" if url_path != "runs" else r"^/(runs)?/?$"


def page_switches(browser, base: str, run: str, rounds: int, viewport: dict) -> dict[str, list[float]]:  # noqa: ANN001 - a playwright Browser
    """Click through `SIDEBAR_PAGES` `rounds` times in one session (a reviewer with no labels yet; the queue
    opens its default, the browser review card); per page, the click -> drawn times (ms)."""
    reviewer = f"switcher-{int(time.time())}"
    times: dict[str, list[float]] = {title: [] for title, _ in SIDEBAR_PAGES}
    ctx = browser.new_context(viewport=viewport)
    try:
        page = ctx.new_page()
        page.goto(f"{base}/?run={quote(run)}&reviewer={quote(reviewer)}")
        page.get_by_test_id("stSidebarNav").wait_for(timeout=180_000)
        page.wait_for_function("""() => document.querySelector('[data-testid="stApp"]')
            .getAttribute('data-test-script-state') === 'notRunning'""", timeout=180_000)
        page.evaluate(_SWITCH_JS)
        nav = page.get_by_test_id("stSidebarNav")
        for _ in range(rounds):
            for title, url_path in SIDEBAR_PAGES:
                n = page.evaluate("() => window.__rjSwitch.samples.length")
                page.evaluate("(p) => { window.__rjTarget = new RegExp(p); }", _path_pattern(url_path))
                page.wait_for_timeout(300)  # a reviewer reads the page a moment before the next click
                nav.get_by_role("link", name=title, exact=True).click()
                try:
                    page.wait_for_function(f"() => window.__rjSwitch.samples.length > {n}", timeout=120_000)
                except Exception as e:  # noqa: BLE001 - says which condition of "drawn" never held
                    raise RuntimeError(f"{title!r} not drawn after 120 s: {page.evaluate(_WHY_JS)}") from e
                times[title].append(page.evaluate(f"() => window.__rjSwitch.samples[{n}]"))
                if not re.search(_path_pattern(url_path), urlparse(page.url).path):
                    raise RuntimeError(f"clicked {title!r}, landed on {page.url}")
    finally:
        ctx.close()
    return times
