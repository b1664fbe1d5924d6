"""Coverage of the sampled (partial-audit) estimates of every family's headline metrics, on its demo run.

For each family's demo run (ideation: Si et al. questions; retrieval: the wordllama rankings; LitXBench and
CHIMERA likewise) a seeded synthetic "true" labelling of every decision gives the true full-review metrics (the
family's own scorer, `aggregate`, on the human counts). Then, per round: a sampling plan with a fresh seed
(`scoring.stats.sampling.build_plan` with the family's `sampling_stratum` and `sampling_take_all`, as `audit plan`
builds it), a sample
of n documents (proportional allocation, at least 2 per stratum, take-all strata whole, each stratum's first
blocks in the plan's seeded random order: what the sample queue serves under a fixed allocation), and the
estimate `audit estimate` gives: the stratified difference estimator over count vectors with the delta method
for `totals` cells, the PPI quantile with a stratified bootstrap for `median` cells (`TaskFamily.sampled_by`).

Truth models (seeded, errors clustered by document through a per-document propensity):
- ideation: a rating is off by one (up or down, clipped to 1..5) with probability 0.35 × propensity; an
  invalid rating gets a uniform 1..5; a split comparison gets a / b / tie uniformly, a decisive one is changed
  with probability 0.2 × propensity;
- retrieval: a candidate above the gold is an acceptable answer too with probability 0.12 × propensity in the
  top 3, 0.02 × propensity below (sparse: most queries have none);
- chimera / litxbench: a decision's judge label is overruled with probability 0.1 × propensity;
- `--truth similarity` (retrieval): a candidate is acceptable with probability 0.5 × its difflib similarity to the
  gold text × propensity (acceptance in proportion to text similarity, issue 39).

Printed per family, metric and n: rounds, mean estimate − truth (with its Monte-Carlo SE), coverage of the 95%
fixed-n interval (with its Clopper-Pearson 95% interval over the rounds), mean half-width, rounds with no
interval (too few reviews), coverage of the anytime interval (`anytime_estimate`; not for a median), and the mean
draws per stratum.

    python bench/family_partial_audit.py [--families ideation retrieval] [--runs NAME ...] [--rounds 200] [--n 30 60]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from devtools.partial_audit import (  # noqa: E402
    NO_TAKE_ALL,
    TRUTHS,
    coverage,
    population,
)


def demo_db(path: Path):
    from audit.demo import load_demo
    from audit.store.database import open_db

    fresh = not path.exists()
    db = open_db(path)
    if fresh:
        load_demo(db)
    return db


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--families", nargs="+", default=["ideation", "retrieval"])
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--n", type=int, nargs="+", default=[30, 60])
    ap.add_argument("--runs", nargs="+", help="only these demo runs (default: every run of --families)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the truth model")
    ap.add_argument("--truth", choices=sorted(TRUTHS), help="a named truth model instead of the family's default")
    ap.add_argument("--design", nargs="+", default=["queue", "proportional"],
                    choices=["queue", "proportional", NO_TAKE_ALL])
    ap.add_argument("--db", type=Path, default=Path(tempfile.gettempdir()) / "rejudge-bench" / "demo-seeded.db")
    args = ap.parse_args()
    args.db.parent.mkdir(parents=True, exist_ok=True)
    db = demo_db(args.db)
    from audit.demo import demo_runs

    runs = [(t, d.name) for t, d in demo_runs() if t in args.families and (not args.runs or d.name in args.runs)]
    print("| run | design | metric | n docs | rounds | truth | bias ± MC SE | coverage | mean half-width | no CI "
          "| anytime coverage |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for _, run in runs:
        pop = population(db, run, seed=args.seed, truth=TRUTHS[args.truth] if args.truth else None)
        for design in args.design:
            for n in args.n:
                t0 = time.perf_counter()
                cov = coverage(pop, args.rounds, n, design=design)
                for key, c in cov.items():
                    bias = "—" if c["bias"] is None else f"{c['bias']:+.4f} ± {c['mc_se']:.4f}"
                    cv = "—" if c["coverage"] is None else c["coverage"]
                    hw = "—" if c["half_width"] is None else f"{c['half_width']:.4f}"
                    print(f"| {run} | {design} | {key} | {n} of {len(pop.judge)} | {c['rounds']} | {c['truth']:.4f} "
                          f"| {bias} | {cv} | {hw} | {c['no_ci']} | {c['anytime_coverage'] or '—'} |", flush=True)
                draws = next(iter(cov.values()))["draws"] if cov else {}
                print(f"<!-- {run} {design} n={n}: mean draws per stratum "
                      + ", ".join(f"{h} {k:.1f}" for h, k in draws.items()) + " -->", flush=True)
                print(f"<!-- {run} {design} n={n}: {time.perf_counter() - t0:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
