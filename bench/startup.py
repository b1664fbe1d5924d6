"""Start-up time of the CLI against `python -c "import sqlite3"` in the same run (issues 20 and 38).

    python bench/startup.py [--repeat 7]

Each command runs in a fresh interpreter, `--repeat` times, alternating with the reference so machine load hits
both alike; prints the median wall time of each, its ratio to the reference and the goal of issue 38 (`--help` and
`runs` within 1.5 x the reference + 0.2 s). `score chimera` scores the demo run (replay judge) into a new database
each time. Every interpreter may write and read bytecode (`PYTHONDONTWRITEBYTECODE` is dropped from its
environment, one unmeasured run first writes it), as an installed copy runs: with the variable set, as in some
sandboxes, every start compiled every module it imports again and was timed doing so.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = [sys.executable, "-c", "import sqlite3"]
GOAL = (1.5, 0.2)
"""`--help` and `runs` within GOAL[0] x the reference + GOAL[1] s (issue 38)."""
COMMANDS = {
    "--help": ["--help"],
    "runs": ["runs"],
    "score chimera (demo, replay judge)": ["score", "chimera", "--gold", "data/chimera/eval.csv", "--pred",
                                           "data/chimera/pred_mixed.jsonl", "--judge",
                                           "replay:data/chimera/judge_mixed.jsonl"],
}


def timed(argv: list[str], env: dict) -> float:
    t = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPATH": str(ROOT)}
    ref: list[float] = []
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    with tempfile.TemporaryDirectory() as tmp:
        for argv in COMMANDS.values():  # unmeasured: writes the bytecode the measured runs read
            timed([sys.executable, "-m", "audit", "--db", str(Path(tmp) / "warm.db"), *argv], env)
        for i in range(args.repeat):
            for name, argv in COMMANDS.items():
                ref.append(timed(REFERENCE, env))
                db = str(Path(tmp) / f"{i}-{len(times[name])}.db")
                times[name].append(timed([sys.executable, "-m", "audit", "--db", db, *argv], env))
    r = statistics.median(ref)
    goal = GOAL[0] * r + GOAL[1]
    print(f"| command | median wall time (s) | ratio to `import sqlite3` ({r:.3f} s) | goal (<= {goal:.3f} s) |")
    print("|---|---|---|---|")
    for name, ts in times.items():
        m = statistics.median(ts)
        verdict = ("met" if m <= goal else "MISSED") if name in ("--help", "runs") else ""
        print(f"| `python -m audit {name}` | {m:.3f} | {m / r:.2f}x | {verdict} |")


if __name__ == "__main__":
    main()
