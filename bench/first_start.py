"""First start on a new database (#40.9): `python -m audit demo` and the dashboard as the README starts it.

    python bench/first_start.py [--repeat 3] [--tree PATH ...] [--no-dashboard]

For each source tree (default: this checkout; give two, e.g. an older commit's `git archive`, to compare them in
one paired run), alternating trees every repeat so machine load hits each alike:

- CLI: `python -m audit --db NEW demo` in a fresh interpreter: wall time and the CPU time it used (user + system,
  its children included). On a shared machine wall - CPU is mostly time spent runnable but waiting for a core.
- dashboard: `streamlit run app.py` on a new database, then headless Debian chromium (Python playwright) opens the
  root; the time from starting the server until the Runs page shows the runs table (the "Open run" button), the
  demo runs scored; and the server's CPU time.

Prints the load average before and after, and medians per tree.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.ui_latency import CHROMIUM_ARGS, _free_port, stop_server  # noqa: E402

READY_TIMEOUT_S = 300


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def cli_demo(tree: Path, tmp: Path) -> tuple[float, float]:
    """(wall s, CPU s) of `python -m audit --db NEW demo` run from `tree`."""
    env = os.environ | {"PYTHONPATH": str(tree)}
    cpu, t = _children_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-m", "audit", "--db", str(tmp / "cli.db"), "demo"], cwd=tree, env=env,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t, _children_cpu() - cpu


def dashboard(tree: Path, tmp: Path, browser) -> tuple[float, float]:  # noqa: ANN001 - a playwright Browser
    """(s from `streamlit run app.py` until the Runs page lists the demo runs, the server's CPU s)."""
    port = _free_port()
    env = os.environ | {"REJUDGE_DB": str(tmp / "app.db"), "HOME": str(tmp), "PYTHONPATH": str(tree)}
    cmd = [str(Path(sys.executable).parent / "streamlit"), "run", "app.py", "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none"]
    cpu, t = _children_cpu(), time.perf_counter()
    server = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        page = browser.new_page()
        while True:  # the server is up when the page loads at all
            try:
                page.goto(f"http://127.0.0.1:{port}/", timeout=READY_TIMEOUT_S * 1000)
                break
            except Exception:  # noqa: BLE001 - connection refused until streamlit listens
                if server.poll() is not None or time.perf_counter() - t > READY_TIMEOUT_S:
                    raise
                time.sleep(0.1)
        page.get_by_role("button", name="Open run").wait_for(timeout=READY_TIMEOUT_S * 1000)
        wall = time.perf_counter() - t
        page.close()
    finally:
        stop_server(server)
    return wall, _children_cpu() - cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tree", type=Path, action="append", help="a source tree to start (repeatable)")
    ap.add_argument("--no-dashboard", action="store_true")
    args = ap.parse_args()
    trees = [t.resolve() for t in args.tree or [ROOT]]
    results: dict[tuple[Path, str], list[tuple[float, float]]] = {}
    print(f"load average before: {os.getloadavg()}, {os.cpu_count()} cores", flush=True)
    pw = browser = None
    if not args.no_dashboard:
        from playwright.sync_api import sync_playwright

        pw = sync_playwright().start()
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
    try:
        for i in range(args.repeat):
            for tree in trees if i % 2 == 0 else trees[::-1]:
                with tempfile.TemporaryDirectory(prefix="rejudge-first-start-") as tmp:
                    results.setdefault((tree, "CLI demo"), []).append(cli_demo(tree, Path(tmp)))
                    if browser is not None:
                        results.setdefault((tree, "dashboard"), []).append(dashboard(tree, Path(tmp), browser))
                print(f"  repeat {i + 1}, {tree}: " + ", ".join(
                    f"{what} {ts[-1][0]:.1f} s (CPU {ts[-1][1]:.1f} s)"
                    for (t, what), ts in results.items() if t == tree), flush=True)
    finally:
        if browser is not None:
            browser.close()
            pw.stop()
    print(f"load average after: {os.getloadavg()}")
    print("| tree | first start | median wall (s) | median CPU (s) | runs |")
    print("|---|---|---|---|---|")
    for (tree, what), ts in results.items():
        print(f"| {tree} | {what} | {statistics.median(w for w, _ in ts):.1f} | "
              f"{statistics.median(c for _, c in ts):.1f} | {len(ts)} |")


if __name__ == "__main__":
    main()
