"""Retrieval (or ideation) at a realistic size: every CLI step and one review -> audited metrics, against the demo
run (#38).

For the demo run (`data/retrieval/demo_rankings.jsonl`, 252 queries) and a generated run of N queries with the
demo's rank distribution (`bench/generate.py N DIR --family retrieval`, seeded), each in a fresh database:

1. `python -m audit score retrieval --pred FILE` (a child process: wall time, peak RSS via wait4, database size);
2. one review -> audited metrics: in a child process (warm: the run opened once), `--reviews` reviews of
   decisions spread over the run, alternately accepting a candidate and confirming the judge, each followed by
   `load_view(db, run).audit.metrics` (what every page and `review --json` reads); median and p90 wall and CPU;
3. `plan --seed 1`, `queue --next`, `estimate`, `report --out`, `export --format json --out` (children);
4. `pages`: the run overview, Scores and review queue pages (AppTest of app.py in a child, the run and its plan
   open): one warm-up render per page, then `--page-reviews` times one review (`add_review`) and a timed rerun;
   median wall and CPU of the reruns (peak RSS is the child's, all pages together).

Ratios are N-run / demo-run in the same invocation; the load (`os.getloadavg`) is printed with the figures.

    python bench/retrieval_scale.py [N] [--seed S] [--reviews 40] [--tree BEFORE --tree AFTER]
    python bench/retrieval_scale.py 500 --family ideation   # 500 questions x 5 systems against 80 x 5
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import REVIEW_CHILD, commit_of, print_table, timed_child, workdir  # noqa: E402
from devtools.generate_retrieval import SOURCE, generate_retrieval  # noqa: E402

RUN = "bench"
PAGES = {"overview after a review": "overview", "Scores after a review": "scores",
         "queue after a review": "queue"}
GOALS = {"score": 15.0, "review (median)": 0.05, "plan": 10.0, "queue --next": 1.0, "estimate": 5.0,
         "report": 5.0, "export": 5.0, **dict.fromkeys(PAGES, 1.0)}
MEMORY_GOALS = {"score": 600.0, "plan": 600.0}



PAGES_CHILD = r"""
import json, logging, os, statistics, sys, time
from streamlit.testing.v1 import AppTest
from audit.demo import _mark_seeded
from audit.review.reviews import add_review
from audit.store.database import open_db
from audit.views import load_view
logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").addFilter(
    lambda rec: "missing ScriptRunContext" not in rec.getMessage())  # AppTest's bare-mode noise
path, n, pages = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
db = open_db(path)
_mark_seeded(db)  # no demo runs scored into the bench database on the first render
task = load_view(db, "bench").task
rows = db.execute("SELECT id, kind FROM decisions ORDER BY id").fetchall()
os.environ["REJUDGE_DB"] = path
at = AppTest.from_file("app.py", default_timeout=600)
at.run()
out, k = {}, 0
for page in pages:
    at.switch_page(f"pages/{page}.py")
    at.query_params["run"] = "bench"
    at.session_state["reviewer_name"] = "bench"
    at.run()  # warm-up: the page's caches, the run's counts
    wall, cpu = [], []
    for _ in range(n):
        d, kind = rows[(k * 7919 + 13) % len(rows)]
        labels = task.label_schemes[kind].labels
        add_review(db, "bench", d, labels[k % len(labels)], "bench")
        k += 1
        t, c = time.perf_counter(), time.process_time()
        at.run()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    err = "; ".join(str(e.message)[:200] for e in at.exception) if at.exception else ""
    out[page] = {"median": statistics.median(wall), "max": max(wall), "cpu": statistics.median(cpu), "error": err}
print(json.dumps(out))
"""


STEPS = ("score", "review (median)", "plan", "queue --next", "estimate", "report", "export", "pages")


def measure(score: list[str], folder: Path, reviews: int, timeout: float,
            steps: Sequence[str] = STEPS, page_reviews: int = 3, tree: Path = ROOT) -> dict[str, dict]:
    """Each step's figures on a fresh database scored by `score ...` (the CLI's arguments after `score`); after a
    step that did not finish (or one skipped) the ones that need it are reported as not run."""
    db = folder / "bench.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    audit = ["-m", "audit", "--db", str(db)]
    not_run = {"wall": float("nan"), "rss": float("nan"), "cpu": float("nan"), "p90": float("nan")}
    out = {step: dict(not_run) for step in (*STEPS, *PAGES)}
    out["score"] = timed_child([*audit, "score", *score, "--run", RUN], tree, timeout)
    out["score"]["db_mb"] = db.stat().st_size / 2**20
    if out["score"]["wall"] == float("inf"):
        return out
    if "review (median)" in steps:
        r = timed_child(["-c", REVIEW_CHILD, str(db), str(reviews)], tree, timeout)
        figures = (json.loads(r["out"].strip().splitlines()[-1]) if r["out"]
                   else {"median": float("inf"), "p90": float("inf"), "cpu": float("nan")})
        out["review (median)"] = {"wall": figures["median"], "rss": float("nan"), "cpu": figures["cpu"],
                                  "p90": figures["p90"]}
    commands = {"plan": ["plan", "--run", RUN, "--seed", "1"], "queue --next": ["queue", "--run", RUN, "--next"],
                "estimate": ["estimate", "--run", RUN],
                "report": ["report", "--run", RUN, "--out", str(folder / "report.html")],
                "export": ["export", "--run", RUN, "--format", "json", "--out", str(folder / "export.json")]}
    for step, command in commands.items():
        if step in steps:
            out[step] = timed_child([*audit, *command], tree, timeout)
    if "pages" in steps:
        r = timed_child(["-c", PAGES_CHILD, str(db), str(page_reviews), ",".join(PAGES.values())], tree, timeout)
        found = json.loads(r["out"].strip().splitlines()[-1]) if r["out"] else {}
        for step, page in PAGES.items():
            if page in found:
                f = found[page]
                if f["error"]:
                    print(f"{step}: the page raised {f['error']}", file=sys.stderr)
                out[step] = {"wall": f["median"], "rss": r["rss"], "cpu": f["cpu"], "p90": f["max"]}
    return out


def _inputs(family: str, n: int, seed: int) -> tuple[int, list[str], list[str]]:
    """(size of the small run, `score` arguments of the small run, of the generated run of size n)."""
    if family == "retrieval":
        data = workdir() / f"retrieval-{n}-s{seed}"
        if not (data / "rankings.jsonl").is_file():
            generate_retrieval(n, data, seed=seed)
        return 252, ["retrieval", "--pred", str(SOURCE)], ["retrieval", "--pred", str(data / "rankings.jsonl")]
    import random

    from bench.ideation_speed import generate

    def ideation(questions: int) -> list[str]:
        data = workdir() / f"ideation-{questions}-s{seed}"
        if not (data / "pairwise.jsonl").is_file():
            data.mkdir(parents=True, exist_ok=True)
            generate(data, questions, 5, random.Random(seed))
        files = [(f"--{k}", str(data / f"{k}.jsonl")) for k in ("ideas", "absolute", "pairwise")]
        return ["ideation", *(a for pair in files for a in pair)]
    return 80, ideation(80), ideation(n)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("n", type=int, nargs="?", default=10_000, help="generated queries (default 10,000), or "
                    "questions with --family ideation")
    ap.add_argument("--family", choices=("retrieval", "ideation"), default="retrieval",
                    help="ideation: N questions x 5 systems, ratings and pairwise calls in both orders "
                    "(bench/ideation_speed.generate), against its 80-question run")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reviews", type=int, default=40)
    ap.add_argument("--timeout", type=float, default=600, help="seconds after which a step is stopped")
    ap.add_argument("--page-reviews", type=int, default=3, help="reviews per page in the `pages` step, each "
                    "followed by a timed rerun of the page (AppTest; median)")
    ap.add_argument("--steps", default=",".join(STEPS), help=f"comma-separated, of: {', '.join(STEPS)} (score "
                    "always runs)")
    ap.add_argument("--tree", action="append", type=Path, help="a checkout whose code the steps run (repeat: "
                    "before and after in one invocation, each measured in turn; default this one)")
    args = ap.parse_args(argv)
    small_n, small_score, big_score = _inputs(args.family, args.n, args.seed)
    steps = args.steps.split(",")
    what = "Retrieval at {:,} queries" if args.family == "retrieval" else "Ideation at {:,} questions x 5 systems"
    results = []
    for tree in args.tree or [ROOT]:
        load_before = os.getloadavg()
        with tempfile.TemporaryDirectory(dir=workdir()) as tmp:
            (Path(tmp) / "demo").mkdir()
            (Path(tmp) / "big").mkdir()
            demo = measure(small_score, Path(tmp) / "demo", args.reviews, args.timeout, steps, args.page_reviews,
                           tree)
            big = measure(big_score, Path(tmp) / "big", args.reviews, args.timeout, steps, args.page_reviews, tree)
        load_after = os.getloadavg()
        results.append((tree, big))
        rows = []
        for step, goal in GOALS.items():
            b, d = big[step], demo[step]
            mem_goal = MEMORY_GOALS.get(step)
            memory_ok = mem_goal is None or b["rss"] <= mem_goal
            verdict = ("not run" if b["wall"] != b["wall"] else "met" if b["wall"] <= goal and memory_ok
                       else "met in CPU" if b["cpu"] <= goal and memory_ok else "MISSED")
            rows.append([step, b["wall"], b["cpu"], b["rss"], b["wall"] / d["wall"],
                         f"≤ {goal:g} s" + (f", ≤ {mem_goal:g} MiB" if mem_goal else ""), verdict])
        print_table(f"{what.format(args.n)} (seed {args.seed}) against the run of {small_n}, code of {tree} "
                    f"({commit_of(tree)}); load {load_before[0]:.1f} before, {load_after[0]:.1f} after (1-min average, "
                    f"{os.cpu_count()} cores)", ["step", "wall s", "CPU s", "peak RSS MiB", "× demo", "goal", ""], rows)
        print(f"\nreview p90 {big['review (median)']['p90'] * 1000:.0f} ms; database {big['score']['db_mb']:.0f} MB "
              f"(demo {demo['score']['db_mb']:.1f} MB)\n")
    if len(results) > 1:
        (t0, first), (t1, last) = results[0], results[-1]
        print_table(f"CPU s / peak RSS MiB: {commit_of(t0)} against {commit_of(t1)}",
                    ["step", commit_of(t0), commit_of(t1), "CPU ratio"],
                    [[step, f"{first[step]['cpu']:.2f} / {first[step]['rss']:.0f}",
                      f"{last[step]['cpu']:.2f} / {last[step]['rss']:.0f}", last[step]["cpu"] / first[step]["cpu"]]
                     for step in GOALS])


if __name__ == "__main__":
    main()
