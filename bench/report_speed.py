"""Audit report time: every demo run and the generated 10,000-abstract CHIMERA run (goal: <= 5 s at 10k).

Times `audit.outputs.report.build_report` + `report_html` (reads the run view, the JSON export with its agreement
bootstrap,
every figure's spec, the HTML with Vega inlined) after one warm-up that builds the cached Vega bundle, and, apart,
`write_figures` (SVG + PDF of every figure through vl-convert). Prints a Markdown table.

Usage: python bench/report_speed.py [--n 10000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from audit.demo import demo_runs, load_demo
from audit.outputs.report import build_report, javascript_bundle, report_html, write_figures
from audit.runs import score_run
from audit.store.database import open_db
from audit.views import load_view
from bench.common import data_paths, workdir
from ui.families import report_panel


def timed(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    t = time.perf_counter()
    javascript_bundle()
    print(f"Vega bundle (first use, then cached on disk): {time.perf_counter() - t:.2f} s")
    db = open_db(Path(tempfile.mkdtemp(dir=workdir())) / "report.db")
    load_demo(db)
    paths = data_paths(args.n)
    name = f"chimera-{args.n}"
    t = time.perf_counter()
    score_run(db, "chimera", {"gold": str(paths["gold"]), "pred": str(paths["pred"])}, f"replay:{paths['log']}",
              run=name)
    scoring = time.perf_counter() - t
    runs = [(task, d.name) for task, d in demo_runs()] + [("chimera", name)]
    print("\n| run | decisions | figures | report (median) | HTML size | SVG+PDF of every figure |")
    print("|---|---:|---:|---:|---:|---:|")
    for _task, run in runs:
        view = load_view(db, run)
        panel = report_panel(view.task.name)
        secs, (page, report) = timed(lambda v=view, p=panel: (lambda r: (report_html(r), r))(
            build_report(v.on(v.db), p)), args.repeats)
        t = time.perf_counter()
        write_figures(report, view, tempfile.mkdtemp(dir=workdir()))
        figs = time.perf_counter() - t
        print(f"| {run} | {view.row['n_decisions']} | {len(report.figures)} | {secs:.2f} s | "
              f"{len(page) / 1e6:.2f} MB | {figs:.2f} s |")
    print(f"\nScoring the {args.n}-abstract run itself (replay judge): {scoring:.1f} s")


if __name__ == "__main__":
    main()
