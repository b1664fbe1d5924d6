"""Start-up time of the CLI against `python -c "import sqlite3"` in the same run (issues 20 and 38).

    python bench/startup.py [--repeat 7] [--tree BEFORE --tree AFTER] [--queue-db DB --queue-run RUN]

Each command runs in a fresh interpreter, `--repeat` times, alternating with the reference (and with the other
trees, given `--tree` twice: a paired before/after run) so machine load hits all alike; prints the median wall
time of each, its ratio to the reference and the goal of issue 38 (`--help` and `runs` within 1.5 x the reference
+ 0.2 s; `queue --next` on the 10,000-query retrieval run within 1 s). `runs (new database)` creates and migrates
a database each time; `runs` lists the runs of a database holding the demo CHIMERA run; `score chimera` scores
that run (replay judge) into a new database each time. `--queue-db`: a database whose run RUN has a sampling
plan (e.g. `python bench/generate.py 10000 DIR --family retrieval`, `score retrieval --pred DIR/rankings.jsonl
--run bench`, `plan --run bench --seed 1`); each tree's `queue --next` reads it (nothing is written), after one
unmeasured run per tree. Every interpreter may write and read bytecode (`PYTHONDONTWRITEBYTECODE` is dropped from
its environment, one unmeasured run first writes it), as an installed copy runs: with the variable set, as in some
sandboxes, every start compiled every module it imports again and was timed doing so.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import commit_of  # noqa: E402

REFERENCE = [sys.executable, "-c", "import sqlite3"]
GOAL = (1.5, 0.2)
"""`--help` and `runs` within GOAL[0] x the reference + GOAL[1] s (issue 38)."""
QUEUE_GOAL = 1.0
SCORE = ["score", "chimera", "--gold", "data/chimera/eval.csv", "--pred", "data/chimera/pred_mixed.jsonl", "--judge",
         "replay:data/chimera/judge_mixed.jsonl"]
COMMANDS = {
    "--help": ["--help"],
    "runs (new database)": ["runs"],
    "runs": ["runs"],
    "score chimera (demo, replay judge)": SCORE,
}
ON_SCORED = {"runs"}
"""Commands run on a copy of a database holding the scored demo run, not on a new one."""


def timed(argv: list[str], env: dict, cwd: Path = ROOT) -> tuple[float, float]:
    """(wall, CPU) seconds of one child process (CPU: user + system, which load inflates far less than wall)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _env(tree: Path) -> dict:
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPATH": str(tree)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--tree", action="append", type=Path, help="a checkout whose CLI is timed (repeat for a paired "
                    "before/after run; default this one)")
    ap.add_argument("--queue-db", type=Path, help="a database with a planned run: also time `queue --next` on it")
    ap.add_argument("--queue-run", default="bench")
    args = ap.parse_args()
    trees = [t.resolve() for t in args.tree or [ROOT]]
    commands = dict(COMMANDS)
    if args.queue_db:
        commands[f"queue --next ({args.queue_db.name}, run {args.queue_run})"] = [
            "queue", "--run", args.queue_run, "--next"]
    ref: list[float] = []
    times: dict[tuple[Path, str], list[tuple[float, float]]] = {(t, n): [] for t in trees for n in commands}
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        scored = Path(tmp) / "scored.db"
        subprocess.run([sys.executable, "-m", "audit", "--db", str(scored), *SCORE, "--run", "demo"], cwd=ROOT,
                       env=_env(ROOT), check=True, capture_output=True)

        def db_for(name: str, key: str) -> str:
            if name.startswith("queue"):
                return str(args.queue_db)
            db = Path(tmp) / f"{key}.db"
            if name in ON_SCORED:
                shutil.copyfile(scored, db)
            return str(db)

        for t, tree in enumerate(trees):  # unmeasured: writes the bytecode the measured runs read
            for j, (name, argv) in enumerate(commands.items()):
                timed([sys.executable, "-m", "audit", "--db", db_for(name, f"warm-{t}-{j}"), *argv], _env(tree), tree)
        for i in range(args.repeat):
            for tree in trees:
                for j, (name, argv) in enumerate(commands.items()):
                    ref.append(timed(REFERENCE, _env(tree))[0])
                    db = db_for(name, f"{i}-{trees.index(tree)}-{j}")
                    times[tree, name].append(timed([sys.executable, "-m", "audit", "--db", db, *argv], _env(tree),
                                                   tree))
    load_after = os.getloadavg()
    r = statistics.median(ref)
    goal = GOAL[0] * r + GOAL[1]
    heads = [f"{commit_of(t)} (s)" for t in trees]
    print(f"Median wall time (and CPU time) of {args.repeat} runs each, alternating; `import sqlite3` {r:.3f} s; "
          f"load {load[0]:.1f} "
          f"before, {load_after[0]:.1f} after (1-min average, {os.cpu_count()} cores)\n")
    print(f"| command | {' | '.join(heads)} | ratio to `import sqlite3` | goal |")
    print("|---|" + "---|" * len(trees) + "---|---|")
    for name in commands:
        ms = [statistics.median(w for w, _ in times[t, name]) for t in trees]
        cpu = [statistics.median(c for _, c in times[t, name]) for t in trees]
        last = ms[-1]
        if name == "--help" or name.startswith("runs"):
            verdict = f"<= {goal:.3f} s: {'met' if last <= goal else 'MISSED'}"
        elif name.startswith("queue"):
            verdict = f"<= {QUEUE_GOAL:g} s: {'met' if last <= QUEUE_GOAL else 'MISSED'}"
        else:
            verdict = ""
        cells = " | ".join(f"{m:.3f} (CPU {c:.3f})" for m, c in zip(ms, cpu, strict=True))
        print(f"| `python -m audit {name}` | {cells} | {last / r:.2f}x | {verdict} |")


if __name__ == "__main__":
    main()
