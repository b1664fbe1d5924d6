"""Command line of the synthetic benchmark data (the generators are `devtools/generate.py` and
`devtools/generate_retrieval.py`, shared with the tests):

    python bench/generate.py N OUTDIR [--seed S] [--family chimera|retrieval|litxbench]

`--family litxbench` writes N papers drawn from the bundled 19 (`devtools/generate_litxbench.py`): OUTDIR/gold,
OUTDIR/pred and OUTDIR/papers.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import print_table  # noqa: E402
from devtools.generate import generate  # noqa: E402
from devtools.generate_litxbench import generate_litxbench  # noqa: E402
from devtools.generate_retrieval import generate_retrieval  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Generate a CHIMERA-format benchmark of N abstracts "
                                 "(or N ranked queries).")
    ap.add_argument("n", type=int, help="number of abstracts")
    ap.add_argument("outdir", help="output folder (gold.csv, pred.jsonl, judge.jsonl)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--family", choices=("chimera", "retrieval", "litxbench"), default="chimera",
                    help="chimera (default: abstracts, predictions, judge log), retrieval (ranked queries) or "
                    "litxbench (papers: gold, prediction and text folders)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    if args.family == "retrieval":
        r = generate_retrieval(args.n, args.outdir, seed=args.seed)
        print_table(f"Generated {args.n:,} ranked queries (seed {args.seed}) in {time.perf_counter() - t0:.2f} s",
                    ["file", "queries", "candidates listed"],
                    [[str(Path(args.outdir) / "rankings.jsonl"), r["queries"], r["candidates"]]])
        return
    if args.family == "litxbench":
        kinds = generate_litxbench(args.n, args.outdir, seed=args.seed)
        print_table(f"Generated {args.n:,} LitXBench papers (seed {args.seed}) in {time.perf_counter() - t0:.2f} s",
                    ["prediction drawn from", "papers"], [[k, v] for k, v in kinds.items()])
        return
    info = generate(args.n, args.outdir, seed=args.seed)
    dt = time.perf_counter() - t0
    out = Path(args.outdir)
    print_table(f"Generated {args.n:,} abstracts (seed {args.seed}) in {dt:.2f} s", ["file", "lines", "MiB"],
                [[str(out / name), sum(1 for _ in (out / name).open(encoding="utf-8")),
                  (out / name).stat().st_size / 2**20] for name in ("gold.csv", "pred.jsonl", "judge.jsonl")])
    print_table("Predictions by perturbation", ["perturbation", "abstracts", "share"],
                [[k, v, v / args.n] for k, v in sorted(info["kinds"].items(), key=lambda kv: -kv[1])])
    print_table("Judge log", ["answers", "yes", "yes share"],
                [[info["judge_answers"], info["yes_answers"], info["yes_answers"] / max(1, info["judge_answers"])]])


if __name__ == "__main__":
    main()
