"""Saves of the browser review card with many sessions at once (issue 38): key press -> "saved" shown.

Setting: `streamlit run app.py` (headless, its own HOME, `--server.fileWatcherType none`) on a copy of the scored
N-abstract generated CHIMERA run (`bench/common.py`, default N = 10,000, run `bench`); `--tree DIR` runs the server
from another checkout (e.g. `git archive COMMIT | tar -x -C DIR`) for a before / after pair on the same data.

One headless chromium with `--sessions` browser contexts (one Streamlit session each, reviewer `cs{k}-{stamp}`)
opens `/queue?run=bench&reviewer=...`; after every card is drawn, each session presses a label key (`a` / `o`
alternating) every `--every` seconds for `--duration` seconds, the sessions staggered evenly within the period.
Timestamps come from each page itself: a capturing `keydown` listener notes the press, a MutationObserver on the
card's status line notes when "K saved" first counts that label (the card counts a label saved only once
Python's answer says it is stored). After the last press the bench waits up to `--drain` s for every label.

Reports key -> saved p50 / p90 / max over the labels shown saved (goal p90 <= 1 s), labels pressed, stored, not
stored when the drain ended (still pending in their tab, which would send them on: lost only if it never does) and
duplicated (a client id or a reviewer's decision stored twice), and the 1-minute load average during the run
(`os.getloadavg`, sampled every 5 s; the goal is for a machine at load < 2).

    python bench/concurrent_saves.py [--n 10000] [--sessions 10] [--every 2] [--duration 120] [--tree DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from contextlib import closing
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import RUN_NAME, median, pct, print_table, scored_db, verdict, workdir  # noqa: E402
from bench.ui_latency import CHROMIUM_ARGS, VIEWPORT, start_server, stop_server, warm_up  # noqa: E402

GOAL_P90_S = 1.0
_SAVED_JS = """() => {
  const rec = window.__rjSaves = {keys: [], saved: []};
  window.addEventListener('keydown', (e) => { if (e.key === 'a' || e.key === 'o') rec.keys.push(performance.now()); },
                          true);
  const count = () => {
    const s = document.querySelector('.rjrc-status');
    const m = s && s.innerText.match(/(\\d+) saved/);
    return m ? Number(m[1]) : 0;
  };
  new MutationObserver(() => {
    const n = count(), now = performance.now();
    while (rec.saved.length < Math.min(n, rec.keys.length)) rec.saved.push(now);
  }).observe(document, {subtree: true, childList: true, characterData: true});
}"""


def stored(db_path: Path, prefix: str) -> list[tuple]:
    from audit.store.database import open_db

    with closing(open_db(db_path).conn) as conn:
        return conn.execute("SELECT reviewer, decision_id, client_id FROM reviews WHERE reviewer LIKE ?",
                            [prefix + "%"]).fetchall()


def run_sessions(base: str, sessions: int, every: float, duration: float, drain: float, stamp: str) -> dict:
    from playwright.sync_api import sync_playwright

    loads: list[float] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            pages = []
            for k in range(sessions):
                page = browser.new_context(viewport=VIEWPORT).new_page()
                page.goto(f"{base}/queue?run={quote(RUN_NAME)}&reviewer=cs{k}-{stamp}")
                pages.append(page)
            for page in pages:
                page.locator(".rjrc-card[data-decision]:not([data-decision=''])").wait_for(timeout=600_000)
                page.evaluate(_SAVED_JS)
                page.get_by_role("heading", name="Review queue").click()
            presses = [0] * sessions
            t0 = time.monotonic()
            next_load = t0
            ticks = int(duration / every)
            for tick in range(ticks):
                for k, page in enumerate(pages):
                    due = t0 + tick * every + k * every / sessions
                    while (now := time.monotonic()) < due:
                        time.sleep(min(0.02, due - now))
                    page.keyboard.press("a" if presses[k] % 2 == 0 else "o")
                    presses[k] += 1
                    if time.monotonic() >= next_load:
                        loads.append(os.getloadavg()[0])
                        next_load += 5
            deadline = time.monotonic() + drain
            for page, n in zip(pages, presses, strict=True):
                left = max(0.5, deadline - time.monotonic())
                try:
                    page.wait_for_function(f"() => window.__rjSaves.saved.length >= {n}", timeout=left * 1000)
                except Exception:  # noqa: BLE001 - an unsaved label is counted below
                    pass
            loads.append(os.getloadavg()[0])
            records = [page.evaluate("() => window.__rjSaves") for page in pages]
        finally:
            browser.close()
    lat = [(s - k) / 1000 for r in records for k, s in zip(r["keys"], r["saved"], strict=False)]
    unsaved = sum(len(r["keys"]) - len(r["saved"]) for r in records)
    return {"presses": sum(presses), "latencies": lat, "unsaved": unsaved, "loads": loads}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--every", type=float, default=2.0, help="seconds between one session's labels")
    ap.add_argument("--duration", type=float, default=120.0, help="seconds of labelling")
    ap.add_argument("--drain", type=float, default=120.0, help="seconds to wait for the last saves")
    ap.add_argument("--tree", type=Path, default=ROOT, help="the checkout the server runs from")
    ap.add_argument("--label", default="", help="name of this run in the table (e.g. before / after)")
    args = ap.parse_args(argv)
    path = workdir() / f"concurrent-saves-{args.n}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    scored_db(args.n, path, args.seed)
    stamp = str(int(time.time()))
    server, base = start_server(path, args.tree.resolve(), wait=120)
    try:
        first_visit_ms = warm_up(base)
        res = run_sessions(base, args.sessions, args.every, args.duration, args.drain, stamp)
    finally:
        stop_server(server)
    rows = stored(path, "cs")
    mine = [r for r in rows if r[0].endswith("-" + stamp)]
    dup = (len(mine) - len({r[2] for r in mine})) + (len(mine) - len({(r[0], r[1]) for r in mine}))
    lat, loads = res["latencies"], res["loads"]
    label = args.label or str(args.tree)
    print_table(f"Key -> 'saved' shown, {args.sessions} sessions, one label each every {args.every:g} s for "
                f"{args.duration:g} s, N = {args.n:,} (server's first visit {first_visit_ms / 1000:.1f} s)",
                ["run", "labels", "saved p50 s", "saved p90 s", "max s", "not shown saved at the end", "stored",
                 "not stored at the end", "duplicated", "load 1-min min / median / max",
                 f"goal (p90 <= {GOAL_P90_S:g} s, 0 lost, 0 dup)"],
                [[label, res["presses"], median(lat), pct(lat, 90), max(lat, default=float("nan")),
                  res["unsaved"], len(mine), res["presses"] - len({r[2] for r in mine}), dup,
                  f"{min(loads):.1f} / {median(loads):.1f} / {max(loads):.1f}",
                  verdict(bool(lat) and pct(lat, 90) <= GOAL_P90_S and len(mine) == res["presses"] and dup == 0)]])


if __name__ == "__main__":
    main()
