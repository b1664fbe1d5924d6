"""Dashboard page render times (AppTest) and the peak RSS of a real `streamlit run app.py` with the run open.

Setting: a fresh copy of the scored N-abstract run (`bench/common.py`) with 5% of its decisions reviewed by
`ana` (30% overruling the judge); 40% of those also reviewed by `ben` (agreeing with `ana` 80% of the time),
so the agreement page has human-vs-human pairs to show.

1. AppTest (`streamlit.testing.v1`, REJUDGE_DB = that database): for each page that exists in `pages/` (run
   overview, one abstract's review page, agreement, scores, review queue), one warm-up render after switching
   to it, then `--renders` timed reruns; the table gives the warm-up and the median. The abstract is one with
   a reviewed decision and the most decisions among those (a heavy one).
2. A real server: `python -m streamlit run app.py` (headless, a free port, `--server.fileWatcherType none`);
   headless Debian chromium (Python playwright) opens the run overview and that abstract; VmHWM (peak RSS)
   and VmRSS of the server process are read from /proc/PID/status.

    python bench/pages.py N [--seed S] [--renders 5] [--no-browser]

3. `--db DB [--tree BEFORE --tree AFTER] [--page-reviews 3] [--rounds 2] [--pages overview,scores,queue]`: pages
   after a review on a given database holding the run `bench` (e.g. CHIMERA at 100,000 abstracts after importing a
   million reviews, `bench/family_scale.py`'s inputs): per round and tree (alternating), a fresh copy of DB and an
   AppTest child of that tree's code (`bench/retrieval_scale.PAGES_CHILD`: per page a warm-up render, then
   `--page-reviews` times one review and a timed rerun); median wall and CPU of the child's reruns per tree, the
   CPU ratio first/last tree, the load before and after (#38).
"""

from __future__ import annotations

import argparse
import os
import random
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

from bench.common import (  # noqa: E402
    RUN_NAME,
    median,
    print_table,
    proc_status_kb,
    scored_db,
    verdict,
    workdir,
)
from bench.rescore import LABELS, other, pre_review  # noqa: E402

PAGE_TARGET_S, DOC_TARGET_S, RSS_TARGET_MB = 1.0, 0.3, 500
PAGES = [("run overview", "overview"), ("abstract review", "document"), ("agreement", "agreement"),
         ("scores", "scores"), ("review queue", "queue")]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def prepare(n: int, seed: int) -> tuple[Path, str, int]:
    """(database, paper id of the abstract to open, its number of decisions)."""
    from audit.review.reviews import add_review
    from audit.store.database import open_db, run_row

    path = scored_db(n, workdir() / f"pages-{n}.db", seed)
    db = open_db(path)
    rng = random.Random(seed + 1)
    ids = pre_review(db, RUN_NAME, 0.05, rng, reviewer="ana")
    ana = {r[0]: r[1] for r in db.conn.execute("SELECT decision_id, label FROM reviews WHERE reviewer = 'ana'")}
    for dec in rng.sample(ids, round(len(ids) * 0.4)):
        label = ana[dec] if rng.random() < 0.8 else other(ana[dec])
        add_review(db, RUN_NAME, dec, label if label in LABELS else "no-match", "ben")
    run_id = run_row(db, RUN_NAME)["id"]
    doc, n_dec = db.conn.execute(
        "SELECT d.doc_id, COUNT(*) AS n FROM decisions d WHERE d.run_id = ? AND d.doc_id IN "
        "(SELECT x.doc_id FROM decisions x JOIN reviews r ON r.decision_id = x.id WHERE x.run_id = ?) "
        "GROUP BY d.doc_id ORDER BY n DESC, d.doc_id LIMIT 1", [run_id, run_id]).fetchone()
    db.conn.close()
    return path, doc, n_dec


def apptest_renders(db_path: Path, doc: str, renders: int) -> list[list]:
    import logging

    from streamlit.testing.v1 import AppTest

    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").addFilter(
        lambda rec: "missing ScriptRunContext" not in rec.getMessage())  # AppTest's bare-mode noise

    os.environ["REJUDGE_DB"] = str(db_path)
    os.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    t0 = time.perf_counter()
    at.run()
    first = time.perf_counter() - t0
    rows: list[list] = [["app start (runs page, scores the demo run once)", first, "", "", "", ""]]
    for title, page in PAGES:
        if not (ROOT / "pages" / f"{page}.py").is_file():
            rows.append([title, "", "", "", "", "page does not exist"])
            continue
        at.switch_page(f"pages/{page}.py")
        at.query_params["run"] = RUN_NAME
        if page == "document":
            at.query_params["doc"] = doc
        at.session_state["reviewer_name"] = "bench"
        t0 = time.perf_counter()
        at.run()
        warm = time.perf_counter() - t0
        times = []
        for _ in range(renders):
            t0 = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - t0)
        err = "; ".join(str(e.message)[:120] for e in at.exception) if at.exception else ""
        target = DOC_TARGET_S if page == "document" else PAGE_TARGET_S
        rows.append([title, warm, median(times), max(times), f"<= {target:g} s: {verdict(median(times) <= target)}",
                     err or "ok"])
    return rows


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_rendered(page, content: str, timeout_s: float = 180) -> None:
    """Until `content` (a CSS selector) is on the page, the script has finished ('Running...' status widget
    gone) and no element is still a loading skeleton, three polls in a row."""
    page.locator(content).first.wait_for(state="attached", timeout=timeout_s * 1000)
    deadline = time.time() + timeout_s
    quiet = 0
    while time.time() < deadline:
        busy = page.locator('[data-testid="stStatusWidget"], [data-testid="stSkeleton"]').count() > 0
        quiet = 0 if busy else quiet + 1
        if quiet >= 3:
            return
        time.sleep(0.2)
    raise TimeoutError("page did not finish rendering")


def browser_rss(db_path: Path, doc: str) -> list[list]:
    from playwright.sync_api import expect, sync_playwright

    port = _free_port()
    home = tempfile.mkdtemp(prefix="rejudge-bench-home-")
    env = {**os.environ, "REJUDGE_DB": str(db_path), "HOME": home}
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port",
           str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none"]
    server = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    rows: list[list] = []
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.time() + 60
        while True:
            try:
                if urllib.request.urlopen(base + "/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                pass
            if time.time() > deadline or server.poll() is not None:
                raise RuntimeError("streamlit did not start: " + (server.stderr.read().decode()[-2000:]
                                                                 if server.poll() is not None else "timeout"))
            time.sleep(0.3)
        rows.append(["server started (no session yet)", proc_status_kb(server.pid, "VmHWM") / 1024,
                     proc_status_kb(server.pid, "VmRSS") / 1024, ""])
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            t0 = time.perf_counter()
            page.goto(f"{base}/run?run={quote(RUN_NAME)}")
            expect(page.get_by_role("heading", name="Run overview")).to_be_visible(timeout=120_000)
            _wait_rendered(page, '[data-testid="stDataFrame"]')
            t_over = time.perf_counter() - t0
            over_shot = workdir() / "pages-overview.png"
            page.screenshot(path=str(over_shot), full_page=False)
            rows.append(["after the run overview", proc_status_kb(server.pid, "VmHWM") / 1024,
                         proc_status_kb(server.pid, "VmRSS") / 1024,
                         f"shown in {t_over:.1f} s (screenshot {over_shot})"])
            t0 = time.perf_counter()
            page.goto(f"{base}/document?run={quote(RUN_NAME)}&doc={quote(doc)}")
            expect(page.get_by_role("heading", name="Abstract review")).to_be_visible(timeout=120_000)
            _wait_rendered(page, ".rj-card")
            t_doc = time.perf_counter() - t0
            shot = workdir() / "pages-document.png"
            page.screenshot(path=str(shot), full_page=False)
            rows.append(["after one abstract", proc_status_kb(server.pid, "VmHWM") / 1024,
                         proc_status_kb(server.pid, "VmRSS") / 1024, f"shown in {t_doc:.1f} s (screenshot {shot})"])
            browser.close()
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
    return rows


def paired_pages(db: Path, trees: list[Path], pages: list[str], page_reviews: int, rounds: int,
                 timeout: float) -> None:
    """Section 3 of the module's docstring: pages after a review, trees alternated on copies of `db`."""
    import json
    import shutil
    import sqlite3

    from bench.common import commit_of, timed_child
    from bench.retrieval_scale import PAGES_CHILD

    with sqlite3.connect(db) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        n_rev, n_dec = con.execute("SELECT (SELECT COUNT(*) FROM reviews), (SELECT COUNT(*) FROM decisions)").fetchone()
    load_before = os.getloadavg()
    figures: dict[tuple[int, str], dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(dir=workdir()) as tmp:
        copy = Path(tmp) / "pages.db"
        for _ in range(rounds):
            for k, tree in enumerate(trees):
                shutil.copyfile(db, copy)
                r = timed_child(["-c", PAGES_CHILD, str(copy), str(page_reviews), ",".join(pages)], tree, timeout)
                found = json.loads(r["out"].strip().splitlines()[-1]) if r["out"] else {}
                for page in pages:
                    f = found.get(page, {"median": float("inf"), "cpu": float("nan"), "error": "timeout"})
                    if f["error"]:
                        print(f"[{k}] {page}: {f['error']}", file=sys.stderr)
                    slot = figures.setdefault((k, page), {"wall": [], "cpu": [], "rss": []})
                    slot["wall"].append(f["median"])
                    slot["cpu"].append(f["cpu"])
                    slot["rss"].append(r["rss"])
                for suffix in ("", "-wal", "-shm"):
                    Path(str(copy) + suffix).unlink(missing_ok=True)
    load_after = os.getloadavg()
    head = ["page after a review"]
    for k in range(len(trees)):
        head += [f"[{k}] wall s", f"[{k}] CPU s"]
    head += ["CPU first/last", "goal"]
    rows = []
    for page in pages:
        row: list = [page]
        for k in range(len(trees)):
            f = figures[(k, page)]
            row += [f"{median(f['wall']):.3g}", f"{median(f['cpu']):.3g}"]
        first, last = median(figures[(0, page)]["cpu"]), median(figures[(len(trees) - 1, page)]["cpu"])
        row += [f"{first / last:.3g}" if last > 0 else "—", "≤ 1 s"]
        rows.append(row)
    print_table(f"Pages after a review, {db.name} ({n_dec:,} decisions, {n_rev:,} reviews), medians of {rounds} "
                f"rounds x {page_reviews} reviews; trees: " + "; ".join(f"[{k}] {commit_of(t)}" for k, t in
                                                                     enumerate(trees))
                + f"; load {load_before[0]:.1f} before, {load_after[0]:.1f} after ({os.cpu_count()} cores)",
                head, rows)
    print("peak RSS of the child (all pages), MiB: " + ", ".join(
        f"[{k}] {max(max(figures[(k, p)]['rss']) for p in pages):.0f}" for k in range(len(trees))))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("n", type=int, nargs="?", default=0)
    ap.add_argument("--db", type=Path, help="pages after a review on this database (section 3 of the docstring)")
    ap.add_argument("--tree", action="append", type=Path, help="source tree (repeatable; with --db)")
    ap.add_argument("--pages", default="overview,scores,queue")
    ap.add_argument("--page-reviews", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--renders", type=int, default=5)
    ap.add_argument("--no-browser", action="store_true", help="skip the real-server RSS measurement")
    args = ap.parse_args(argv)
    if args.db is not None:
        paired_pages(args.db.resolve(), [t.resolve() for t in (args.tree or [ROOT])], args.pages.split(","),
                     args.page_reviews, args.rounds, args.timeout)
        return
    db_path, doc, n_dec = prepare(args.n, args.seed)
    from audit.store.database import open_db

    db = open_db(db_path)
    n_rev, n_revd = db.conn.execute("SELECT COUNT(*), COUNT(DISTINCT decision_id) FROM reviews").fetchone()
    n_all = db.conn.execute("SELECT n_decisions FROM runs WHERE name = ?", [RUN_NAME]).fetchone()[0]
    db.conn.close()
    rss_rows = [] if args.no_browser else browser_rss(db_path, doc)
    rows = apptest_renders(db_path, doc, args.renders)
    print_table(f"AppTest render times, N = {args.n:,} abstracts ({n_revd:,} of {n_all:,} decisions reviewed, "
                f"{n_rev:,} reviews; abstract {doc} with {n_dec} decisions)",
                ["page", "warm-up s", f"median of {args.renders} s", "max s", "target", "errors"], rows)
    if rss_rows:
        peak = max(r[1] for r in rss_rows)
        print_table("Real `streamlit run app.py` (headless chromium opened the overview, then the abstract)",
                    ["moment", "VmHWM (peak RSS) MiB", "VmRSS MiB", "note"],
                    [*rss_rows, ["target: peak <= 500 MB", peak, "", verdict(peak * 2**20 <= RSS_TARGET_MB * 1e6)]])


if __name__ == "__main__":
    main()
