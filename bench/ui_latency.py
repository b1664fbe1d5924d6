"""Review-queue key latency in a real browser: key press -> the next decision on screen.

Setting: `streamlit run app.py` (headless, its own HOME, `--server.fileWatcherType none`) on
1. the demo database (a fresh database: the app scores its bundled demo runs on the first visit), run
   `demo-chimera-mixed` (216 abstracts);
2. a copy of the scored N-abstract generated CHIMERA run (`bench/common.py`, default N = 10,000), run `bench`.

Headless Debian chromium (Python playwright, 1280x720) opens `/queue?run=RUN&reviewer=NAME` for a reviewer who
has labelled nothing, then presses the review keys `--presses` times, alternating `a` (confirm the judge) and
`o` (overrule). Each press is timed from the key press until the card shows another decision id and the
script is idle again (polled on every animation frame). Then `Backspace` (undo) and `p` (back) are timed the
same way. The table gives median, 90th percentile and max per key; the goal is a median <= 300 ms. It also
checks that the card's buttons are above the fold (their bottom edge within the 720-pixel viewport).

    python bench/ui_latency.py [--n 10000] [--presses 20] [--seed 0] [--skip-demo] [--skip-large]
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

TARGET_MS = 300
VIEWPORT = {"width": 1280, "height": 720}
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
_HEAD = re.compile(r"decision #\d+ \(id (\d+)\) · (\d+) of")
_CHANGED_JS = """(old) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  const m = document.body.innerText.match(/decision #\\d+ \\(id (\\d+)\\) · (\\d+) of/);
  return !!m && (m[1] + '/' + m[2]) !== old;
}"""
_IDLE_JS = """() => { const a = document.querySelector('[data-testid="stApp"]');
  return !!a && a.getAttribute('data-test-script-state') === 'notRunning'; }"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(db_path: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    env = {**os.environ, "REJUDGE_DB": str(db_path), "HOME": tempfile.mkdtemp(prefix="rejudge-bench-home-")}
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port",
           str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none"]
    server = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
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


def _head(page) -> str:  # noqa: ANN001 - a playwright Page
    m = _HEAD.search(page.inner_text("body"))
    if not m:
        raise RuntimeError("no decision on the queue page")
    return f"{m[1]}/{m[2]}"


def _timed(page, key: str) -> float:  # noqa: ANN001
    old = _head(page)
    t0 = time.perf_counter()
    page.keyboard.press(key)
    page.wait_for_function(_CHANGED_JS, arg=old, polling="raf", timeout=60_000)
    return (time.perf_counter() - t0) * 1000


def measure(base: str, run: str, presses: int, label: str) -> tuple[list[list], dict]:
    from playwright.sync_api import sync_playwright

    reviewer = f"latency-{int(time.time())}"
    times: dict[str, list[float]] = {"a / o (label → next)": [], "Backspace (undo)": [], "p (back)": []}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        t0 = time.perf_counter()
        page.goto(f"{base}/queue?run={quote(run)}&reviewer={quote(reviewer)}")
        page.get_by_text(re.compile(r"decision #\d+ \(id \d+\) · 1 of")).wait_for(timeout=180_000)
        page.wait_for_function(_IDLE_JS, timeout=180_000)
        page.wait_for_timeout(1500)  # the first render's lazy elements settle
        first_ms = (time.perf_counter() - t0) * 1000
        fold = page.evaluate("""() => {
          const card = document.querySelector('.st-key-queue-card');
          const bs = card ? [...card.querySelectorAll('button')] : [];
          return bs.length ? Math.max(...bs.map(b => b.getBoundingClientRect().bottom)) : -1; }""")
        page.get_by_role("heading", name="Review queue").click()  # focus the page, not a text box
        for i in range(presses):
            times["a / o (label → next)"].append(_timed(page, "a" if i % 2 == 0 else "o"))
        for _ in range(min(5, presses)):
            times["Backspace (undo)"].append(_timed(page, "Backspace"))
        for _ in range(min(5, presses - 6)):  # after the undos the queue is at least one item in
            times["p (back)"].append(_timed(page, "p"))
        shot = workdir() / f"ui-latency-{label}.png"
        page.screenshot(path=str(shot))
        browser.close()
    rows = [[label, key, len(v), median(v), pct(v, 90), max(v), verdict(median(v) <= TARGET_MS)]
            for key, v in times.items() if v]
    return rows, {"first_render_ms": first_ms, "buttons_bottom_px": fold, "screenshot": str(shot)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--presses", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-demo", action="store_true")
    ap.add_argument("--skip-large", action="store_true")
    args = ap.parse_args(argv)
    setups = []
    if not args.skip_demo:
        setups.append(("demo (216 abstracts)", workdir() / "ui-latency-demo.db", "demo-chimera-mixed", None))
    if not args.skip_large:
        setups.append((f"N = {args.n:,}", workdir() / f"ui-latency-{args.n}.db", RUN_NAME, args.n))
    rows, notes = [], []
    for label, path, run, n in setups:
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
        if n is not None:
            scored_db(n, path, args.seed)
        server, base = start_server(path)
        try:
            r, info = measure(base, run, args.presses, label.split(" ")[0] if n is None else str(n))
        finally:
            stop_server(server)
        rows += r
        notes.append([label, info["first_render_ms"], info["buttons_bottom_px"],
                      verdict(0 < info["buttons_bottom_px"] <= VIEWPORT["height"]), info["screenshot"]])
    print_table("Review queue: key press -> next decision on screen (ms, real chromium, 1280x720)",
                ["setting", "key", "presses", "median ms", "p90 ms", "max ms", f"median <= {TARGET_MS} ms"], rows)
    print_table("First render and fold", ["setting", "first render ms", "card buttons' bottom px",
                                          "above the 720 px fold", "screenshot"], notes)


if __name__ == "__main__":
    main()
