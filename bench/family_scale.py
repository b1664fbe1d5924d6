"""CHIMERA, LitXBench or ideation at a realistic size: every CLI step and one review -> audited metrics, for one or
more source trees in one invocation (before / after ratios at the same load; #38).

    python bench/family_scale.py chimera 100000 --import-reviews 1000000 --tree /tmp/before --tree .
    python bench/family_scale.py litxbench 500 --tree /tmp/before --tree .
    python bench/family_scale.py ideation 500 --tree /tmp/before --tree .     # 500 questions x 5 systems

Inputs are generated once (seeded) under `$REJUDGE_BENCH_DIR`: CHIMERA abstracts (`bench/generate.py N DIR`, one
decision or more per abstract, a replay judge log), LitXBench papers drawn from the bundled 19
(`bench/generate.py N DIR --family litxbench`, the official matcher as judge), ideation questions x 5 systems with
ratings and pairwise calls in both orders (`bench/ideation_speed.generate`, file judge). For each tree, in a fresh
database, each step is a child process of that tree's code (`python -m audit ...` run from the tree): wall time,
CPU time and peak RSS from wait4:

1. `score`; 2. one review -> audited metrics (`--reviews` reviews spread over the run in one warm process, each
followed by `load_view(db, run).audit.metrics`: median wall and CPU); 3. `plan --seed 1`, `queue --next`,
`estimate`, `report --out`, `export --format json --out`; 4. with `--import-reviews K`: `import-reviews` of K
generated review lines (9 reviewers or more per decision, 80 % confirming the judge), then the review step again.

`--scored DB` starts every tree from a copy of a database where the run was scored already (on a loaded machine
`score` of 500 LitXBench papers outlasts any timeout, and it is not what the other steps measure).

The 1-minute load is printed before and after: wall times on a shared machine are inflated, CPU seconds are the
steadier figure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import REVIEW_CHILD, print_table, timed_child, workdir  # noqa: E402

RUN = "bench"
GOALS = {"score": 15.0, "review (median)": 0.05, "plan": 10.0, "queue --next": 1.0, "estimate": 5.0,
         "report": 5.0, "export": 5.0, "import-reviews": None, "review after import": 0.05}
"""Issue 38's goals at 10,000 retrieval queries, which it sets for these families' realistic sizes too ("the same
goals": met, or what bounds them said)."""
MEMORY_GOALS = {"score": 600.0, "plan": 600.0}
STEPS = tuple(GOALS)



def inputs(family: str, n: int, seed: int) -> list[str]:
    """The `score` arguments of the generated run of size n (generated on first use)."""
    data = workdir() / f"{family}-{n}-s{seed}"
    if family == "chimera":
        if not (data / "judge.jsonl").is_file():
            from devtools.generate import generate

            generate(n, data, seed=seed)
        return ["chimera", "--gold", str(data / "gold.csv"), "--pred", str(data / "pred.jsonl"),
                "--judge", f"replay:{data / 'judge.jsonl'}"]
    if family == "litxbench":
        if not (data / "papers").is_dir():
            from devtools.generate_litxbench import generate_litxbench

            generate_litxbench(n, data, seed=seed)
        return ["litxbench", "--gold", str(data / "gold"), "--pred", str(data / "pred"), "--text",
                str(data / "papers")]
    if not (data / "pairwise.jsonl").is_file():
        from bench.ideation_speed import generate

        data.mkdir(parents=True, exist_ok=True)
        generate(data, n, 5, random.Random(seed))
    return ["ideation", *(a for k in ("ideas", "absolute", "pairwise") for a in (f"--{k}", str(data / f"{k}.jsonl")))]


def write_reviews(db: Path, n: int, path: Path, seed: int = 0) -> None:
    """`n` review lines (the `export-reviews` format) over the run's decisions in id order, reviewer k labelling
    every decision in its k-th pass; 80 % confirm the judge, the rest pick another label of the kind."""
    from scoring.families import get_task

    con = sqlite3.connect(db)
    task = get_task(con.execute("SELECT task FROM runs WHERE name = ?", [RUN]).fetchone()[0])
    decs = con.execute("SELECT doc_id, kind, type, left, right, judge_label FROM decisions ORDER BY id").fetchall()
    con.close()
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            doc, kind, typ, left, right, judge = decs[i % len(decs)]
            labels = list(task.label_schemes[kind].labels)
            label = judge if judge in labels and rng.random() < 0.8 else rng.choice(labels)
            k = i // len(decs)
            f.write(json.dumps({"uid": f"bench-{i}", "doc": doc, "kind": kind, "type": typ, "left": left,
                                "right": right, "reviewer": f"reviewer{k}", "label": label, "role": "reviewer",
                                "note": None, "blind": False,
                                "created": f"2026-01-{1 + k % 28:02d}T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:"
                                           f"{i % 60:02d}+00:00"}) + "\n")


def measure(tree: Path, score: list[str], folder: Path, reviews: int, import_reviews: int, timeout: float,
            steps: list[str], scored: Path | None = None) -> dict[str, dict]:
    db = folder / "bench.db"
    audit = ["-m", "audit", "--db", str(db)]
    nan = {"wall": float("nan"), "rss": float("nan"), "cpu": float("nan")}
    out = {step: dict(nan) for step in STEPS}
    if scored is not None:  # a copy of a run scored once: `score` is not measured
        with sqlite3.connect(scored) as src, sqlite3.connect(db) as dst:
            src.backup(dst)
        out["score"]["db_mb"] = db.stat().st_size / 2**20
    else:
        out["score"] = timed_child([*audit, "score", *score, "--run", RUN], tree, timeout)
    out["score"]["db_mb"] = db.stat().st_size / 2**20
    if out["score"]["wall"] == float("inf"):
        return out

    def review(step: str) -> None:
        r = timed_child(["-c", REVIEW_CHILD, str(db), str(reviews)], tree, timeout)
        figures = json.loads(r["out"].strip().splitlines()[-1]) if r["out"] else {"median": float("inf"),
                                                                                   "cpu": float("nan")}
        out[step] = {"wall": figures["median"], "cpu": figures["cpu"], "rss": float("nan"),
                     "p90": figures.get("p90")}

    if "review (median)" in steps:
        review("review (median)")
    commands = {"plan": ["plan", "--run", RUN, "--seed", "1"], "queue --next": ["queue", "--run", RUN, "--next"],
                "estimate": ["estimate", "--run", RUN],
                "report": ["report", "--run", RUN, "--out", str(folder / "report.html")],
                "export": ["export", "--run", RUN, "--format", "json", "--out", str(folder / "export.json")]}
    for step, command in commands.items():
        if step in steps:
            out[step] = timed_child([*audit, *command], tree, timeout)
    if import_reviews and "import-reviews" in steps:
        lines = workdir() / f"reviews-{score[0]}-{import_reviews}.jsonl"
        if not lines.is_file():
            write_reviews(db, import_reviews, lines)
        out["import-reviews"] = timed_child([*audit, "import-reviews", "--run", RUN, str(lines)], tree, timeout)
        if out["import-reviews"]["wall"] != float("inf"):
            review("review after import")
    return out


def _fmt(x: float) -> str:
    return "—" if x != x else "timeout" if x == float("inf") else f"{x:.3g}"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("family", choices=("chimera", "litxbench", "ideation"))
    ap.add_argument("n", type=int, help="abstracts, papers or questions")
    ap.add_argument("--tree", action="append", type=Path, help="source tree to measure (repeatable; default: this "
                    "one); the first is 'before', the last 'after'")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reviews", type=int, default=20)
    ap.add_argument("--import-reviews", type=int, default=0, help="review lines to import after the steps")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--scored", type=Path, default=None, help=f"a database holding the run {RUN!r} scored from "
                    "these inputs: each tree starts from a copy of it and `score` is not measured (a loaded machine)")
    ap.add_argument("--steps", default=",".join(STEPS), help=f"comma-separated, of: {', '.join(STEPS)} (score "
                    "always runs)")
    args = ap.parse_args(argv)
    trees = [t.resolve() for t in (args.tree or [ROOT])]
    score = inputs(args.family, args.n, args.seed)
    load_before = os.getloadavg()
    results = []
    with tempfile.TemporaryDirectory(dir=workdir()) as tmp:
        for k, tree in enumerate(trees):
            folder = Path(tmp) / f"tree{k}"
            folder.mkdir()
            results.append(measure(tree, score, folder, args.reviews, args.import_reviews, args.timeout,
                                   args.steps.split(","), args.scored))
    load_after = os.getloadavg()
    head = ["step"]
    for k in range(len(trees)):
        head += [f"[{k}] wall s", f"[{k}] CPU s", f"[{k}] peak MiB"]
    head += ["CPU before/after", "goal"]
    rows = []
    for step, goal in GOALS.items():
        row = [step]
        for r in results:
            row += [_fmt(r[step]["wall"]), _fmt(r[step]["cpu"]), _fmt(r[step]["rss"])]
        first, last = results[0][step]["cpu"], results[-1][step]["cpu"]
        row.append(_fmt(first / last) if last == last and last > 0 and first == first else "—")
        mem = MEMORY_GOALS.get(step)
        row.append(("—" if goal is None else f"≤ {goal:g} s") + (f", ≤ {mem:g} MiB" if mem else ""))
        rows.append(row)
    print_table(f"{args.family} at {args.n:,} (seed {args.seed}); trees: "
                + "; ".join(f"[{k}] {t}" for k, t in enumerate(trees))
                + f"; load {load_before[0]:.1f} before, {load_after[0]:.1f} after ({os.cpu_count()} cores)",
                head, rows)
    print("\ndatabase after score: " + ", ".join(f"[{k}] {r['score']['db_mb']:.0f} MB" for k, r in enumerate(results)))


if __name__ == "__main__":
    main()
