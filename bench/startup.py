"""Start-up time of the CLI against `python -c "import sqlite_utils"` in the same run (issue 20: lazy families).

    python bench/startup.py [--repeat 7]

Each command runs in a fresh interpreter, `--repeat` times, alternating with the reference so machine load hits
both alike; prints the median wall time of each and its ratio to the reference. `score chimera` scores the demo
run (replay judge) into a new database each time. Goal: `--help` and `runs` at most 3x the reference.
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
REFERENCE = [sys.executable, "-c", "import sqlite_utils"]
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
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    ref: list[float] = []
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            for name, argv in COMMANDS.items():
                ref.append(timed(REFERENCE, env))
                db = str(Path(tmp) / f"{i}-{len(times[name])}.db")
                times[name].append(timed([sys.executable, "-m", "audit", "--db", db, *argv], env))
    r = statistics.median(ref)
    print(f"| command | median wall time (s) | ratio to `import sqlite_utils` ({r:.3f} s) |")
    print("|---|---|---|")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"| `python -m audit {name}` | {m:.3f} | {m / r:.2f}x |")


if __name__ == "__main__":
    main()
