"""Review-queue key latency in a real browser: key press -> the next decision on screen, the browser review card
(`ui/review_card`, the queue's default) side by side with the classic card (a Python rerun per key).

Setting: `streamlit run app.py` (headless, its own HOME, `--server.fileWatcherType none`) on
1. the demo database (a fresh database: the app scores its bundled demo runs on the first visit), run
   `demo-chimera-mixed` (216 abstracts);
2. a copy of the scored N-abstract generated CHIMERA run (`bench/common.py`, default N = 10,000), run `bench`.

Headless Debian chromium (Python playwright, 1280x720) opens `/queue?run=RUN&reviewer=NAME` for a reviewer who
has labelled nothing (one reviewer per card), then presses the review keys `--presses` times, alternating `a`
(confirm the judge) and `o` (overrule), then `Backspace` (undo) and `p` (back) 5 times each. Timestamps come from
the page itself: a capturing `keydown` listener on `window` (it runs before the card's own) and a
MutationObserver on the document that notes the first mutation after which the card shows another queue position.
The classic card waits for the app to be idle before the next key (as a reviewer must); the browser card waits
`--pace` ms (a fast reviewer), its saves running in the background; at the end the browser card must say that
every label is saved. Goals: browser card median <= 50 ms, p90 <= 100 ms. It also checks that the card's buttons
are above the fold (their bottom edge within the 720-pixel viewport).

Page switches (`bench/page_switches.py`): in one session, a click on each sidebar link in turn (`--rounds` times
round the sidebar) -> the clicked page drawn (its script run, nothing stale, tables and charts drawn), timed in the
page. Goal: median <= 0.5 s at 10,000 abstracts. With `REJUDGE_RERUN_LOG=FILE` in the environment the server logs
each rerun's `app.py` preamble and page time (`ui/rerun_timing.py`): what of a switch is our script.

Before anything is timed, one visit to the app's root waits for its first start (a database without the demo runs
gets them scored into it: 10-30 s, the "server's first visit" line), so the first card measured does not carry it.

    python bench/ui_latency.py [--n 10000] [--presses 20] [--pace 150] [--rounds 3] [--seed 0] [--skip-demo]
                               [--skip-large] [--skip-keys] [--skip-switches]
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import RUN_NAME, median, pct, print_table, scored_db, verdict, workdir  # noqa: E402
from bench.page_switches import page_switches  # noqa: E402

TARGET_MS = {"browser card": (50, 100), "classic card": (300, None)}
SWITCH_TARGET_MS = 500
"""Goal of a page switch's median (ms)."""
"""Goals per card: median and p90 (ms); the classic card's 300 ms median is the earlier batch's goal."""
VIEWPORT = {"width": 1280, "height": 720}
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
# The queue position the page shows: the browser card's `data-pos`, the classic card's "decision #n (id i) · k of".
_POSITION_JS = {
    "browser card": """() => { const c = document.querySelector('.rjrc-card');
        return c ? c.getAttribute('data-pos') : null; }""",
    "classic card": r"""() => {
        const main = document.querySelector('[data-testid="stMainBlockContainer"]') || document.body;
        const m = main.textContent.match(/decision #\d+ \(id (\d+)\) · (\d+) of/);
        return m ? m[1] + '/' + m[2] : null; }""",
}
_OBSERVER_JS = """(position) => {
  const where = eval(position);
  const lat = window.__rjLatency = {samples: [], t0: null, old: null};
  window.addEventListener('keydown', () => { lat.t0 = performance.now(); lat.old = where(); }, true);
  new MutationObserver(() => {
    if (lat.t0 === null) return;
    const now = where();
    if (now !== null && now !== lat.old) { lat.samples.push(performance.now() - lat.t0); lat.t0 = null; }
  }).observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
}"""
_IDLE_JS = """() => { const a = document.querySelector('[data-testid="stApp"]');
  return !!a && a.getAttribute('data-test-script-state') === 'notRunning'; }"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(db_path: Path, tree: Path = ROOT, wait: float = 60) -> tuple[subprocess.Popen, str]:
    """The dashboard of `tree` (its code: PYTHONPATH too) on `db_path`, on a free port; (process, base URL) once its
    health check answers, within `wait` seconds."""
    port = _free_port()
    env = {**os.environ, "REJUDGE_DB": str(db_path), "HOME": tempfile.mkdtemp(prefix="rejudge-bench-home-"),
           "PYTHONPATH": str(tree)}
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port",
           str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none"]
    server = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + wait
    while True:
        try:
            if urllib.request.urlopen(base + "/_stcore/health", timeout=2).read() == b"ok":
                return server, base
        except OSError:
            pass
        if time.time() > deadline or server.poll() is not None:
            server.kill()
            raise RuntimeError("streamlit did not start")
        time.sleep(0.3)


def stop_server(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()


def _press(page, key: str, card: str, pace_ms: int) -> float:  # noqa: ANN001 - a playwright Page
    """Press `key`; the page's own key -> next-position time (ms)."""
    n = page.evaluate("() => window.__rjLatency.samples.length")
    page.keyboard.press(key)
    page.wait_for_function(f"() => window.__rjLatency.samples.length > {n}", timeout=60_000)
    if card == "classic card":
        page.wait_for_function(_IDLE_JS, timeout=60_000)
    else:
        page.wait_for_timeout(pace_ms)
    return page.evaluate(f"() => window.__rjLatency.samples[{n}]")


def warm_up(base: str) -> float:
    """One visit to the root, waited out (a first start scores the demo runs into the database); its time, ms."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        t0 = time.perf_counter()
        page.goto(base)
        page.get_by_test_id("stSidebarNav").wait_for(timeout=300_000)
        page.wait_for_function(_IDLE_JS, timeout=300_000)
        ms = (time.perf_counter() - t0) * 1000
        browser.close()
    return ms


def measure_switches(base: str, run: str, rounds: int, label: str) -> list[list]:
    """Rows of the page-switch table: every page, then all switches together."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            times = page_switches(browser, base, run, rounds, VIEWPORT)
        finally:
            browser.close()
    every = [t for v in times.values() for t in v]
    rows = [[label, title, len(v), median(v), pct(v, 90), max(v), ""] for title, v in times.items()]
    rows.append([label, "all switches", len(every), median(every), pct(every, 90), max(every),
                 verdict(median(every) <= SWITCH_TARGET_MS)])
    return rows


def measure(base: str, run: str, presses: int, label: str, card: str, pace_ms: int) -> tuple[list[list], dict]:
    from playwright.sync_api import sync_playwright

    reviewer = f"latency-{card.split()[0]}-{int(time.time())}"
    times: dict[str, list[float]] = {"a / o (label → next)": [], "Backspace (undo)": [], "p (back)": []}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        t0 = time.perf_counter()
        page.goto(f"{base}/queue?run={quote(run)}&reviewer={quote(reviewer)}")
        page.locator(".rjrc-card[data-decision]:not([data-decision=''])").wait_for(timeout=180_000)
        page.wait_for_function(_IDLE_JS, timeout=180_000)
        if card == "classic card":
            page.get_by_text("Review card in the browser", exact=True).click()
            page.get_by_role("paragraph").filter(has_text=re.compile(r"decision #\d+ \(id \d+\) · 1 of")).first \
                .wait_for(timeout=60_000)
            page.wait_for_function(_IDLE_JS, timeout=60_000)
            page.wait_for_function("() => !document.querySelector('.rjrc')", timeout=60_000)  # the browser card gone
        page.wait_for_timeout(1500)  # the first render's lazy elements settle
        first_ms = (time.perf_counter() - t0) * 1000
        box = ".rjrc-buttons" if card == "browser card" else ".st-key-queue-card"
        fold = page.evaluate(f"""() => {{
          const card = document.querySelector('{box}');
          const bs = card ? [...card.querySelectorAll('button')] : [];
          return bs.length ? Math.max(...bs.map(b => b.getBoundingClientRect().bottom)) : -1; }}""")
        page.evaluate(_OBSERVER_JS, _POSITION_JS[card])
        page.get_by_role("heading", name="Review queue").click()  # focus the page, not a text box
        for i in range(presses):
            times["a / o (label → next)"].append(_press(page, "a" if i % 2 == 0 else "o", card, pace_ms))
        for _ in range(min(5, presses)):
            times["Backspace (undo)"].append(_press(page, "Backspace", card, pace_ms))
        for _ in range(min(5, presses - 6)):  # after the undos the queue is at least one item in
            times["p (back)"].append(_press(page, "p", card, pace_ms))
        saved = ""
        if card == "browser card":  # every label and undo must end up stored
            want = presses + min(5, presses)
            try:
                page.wait_for_function(f"() => /\\b{want} saved/.test(document.querySelector('.rjrc-status')"
                                       ".innerText)", timeout=60_000)
                saved = f"{want} of {want} saved"
            except Exception:  # noqa: BLE001 - reported in the table
                saved = page.locator(".rjrc-status").inner_text() + f" (of {want})"
        shot = workdir() / f"ui-latency-{label}-{card.split()[0]}.png"
        page.screenshot(path=str(shot))
        browser.close()
    goal_median, goal_p90 = TARGET_MS[card]
    rows = [[label, card, key, len(v), median(v), pct(v, 90), max(v),
             verdict(median(v) <= goal_median and (goal_p90 is None or pct(v, 90) <= goal_p90))]
            for key, v in times.items() if v]
    return rows, {"first_render_ms": first_ms, "buttons_bottom_px": fold, "screenshot": str(shot), "saved": saved}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--presses", type=int, default=20)
    ap.add_argument("--pace", type=int, default=150, help="ms between the browser card's key presses")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-demo", action="store_true")
    ap.add_argument("--skip-large", action="store_true")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the sidebar's links for the page switches")
    ap.add_argument("--skip-keys", action="store_true", help="no key-press latency")
    ap.add_argument("--skip-switches", action="store_true", help="no page switches")
    args = ap.parse_args(argv)
    setups = []
    if not args.skip_demo:
        setups.append(("demo (216 abstracts)", workdir() / "ui-latency-demo.db", "demo-chimera-mixed", None))
    if not args.skip_large:
        setups.append((f"N = {args.n:,}", workdir() / f"ui-latency-{args.n}.db", RUN_NAME, args.n))
    rows, notes, switches, starts = [], [], [], []
    for label, path, run, n in setups:
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
        if n is not None:
            scored_db(n, path, args.seed)
        server, base = start_server(path)
        try:
            starts.append([label, warm_up(base)])
            for card in TARGET_MS if not args.skip_keys else ():
                r, info = measure(base, run, args.presses, label.split(" ")[0] if n is None else str(n), card,
                                  args.pace)
                rows += r
                notes.append([label, card, info["first_render_ms"], info["buttons_bottom_px"],
                              verdict(0 < info["buttons_bottom_px"] <= VIEWPORT["height"]), info["saved"],
                              info["screenshot"]])
            if not args.skip_switches:
                switches += measure_switches(base, run, args.rounds, label)
        finally:
            stop_server(server)
    print_table("Server's first visit (not in the figures below)", ["setting", "ms"], starts)
    if switches:
        print_table("Page switches: sidebar link click -> the clicked page drawn (ms, in-page MutationObserver, real "
                    "chromium, 1280x720)", ["setting", "page", "switches", "median ms", "p90 ms", "max ms",
                                           f"goal (median <= {SWITCH_TARGET_MS})"], switches)
    if args.skip_keys:
        return
    print_table("Review queue: key press -> next decision on screen (ms, in-page MutationObserver, real chromium, "
                "1280x720)", ["setting", "card", "key", "presses", "median ms", "p90 ms", "max ms",
                              "goal (card: median <= 50, p90 <= 100; classic: median <= 300)"], rows)
    print_table("First render, fold and saves", ["setting", "card", "first render ms", "card buttons' bottom px",
                                                 "above the 720 px fold", "stored", "screenshot"], notes)


if __name__ == "__main__":
    main()
