"""What bounds the plan's cost against simple random sampling of documents (issue 39 point 2): decisions at the ±0.03
stop per truth model for the plan `audit plan` builds and for allocation variants, beside SRS, on the CHIMERA demo.

The rounds, truths, estimator and stop are `bench/smoothing_coverage.py`'s (plan seed 1000 + round, the fixed-n
interval with the Jeffreys variance, the first n ≥ 30 documents whose half-width is ≤ ±0.03); only the order the
documents are served in differs. Designs:
- `plan`: the plan and queue as built (take-all `inspiration/…` strata first, 3 per stratum, then `next_unit`'s
  Neyman step on the judge-side planning variance, shrunk towards proportional: `sampling.SHRINK`);
- `SRS`: one stratum, the plan's random order;
- `no certain take-all`: the same, but a take-all stratum none of whose decisions a review can change (every pair two
  identical strings, `TaskFamily.trivial`: `inspiration/identical` on the demo) is sampled instead;
- `truth-aware`: the plan, with the planning variance set to 0 in the sampled strata where no document differs from
  the judge under the truth and no shrinking (`shrink=0`: those strata get their minimum of 3 only until the others
  are done). It reads the truth: not a design, a bound on what any stratum allocation after the take-all strata can
  reach.

Printed per truth and design: coverage at the stop (Clopper-Pearson 95%), median decisions at the stop, and the
ratio of median decisions to SRS's with its Monte-Carlo 95% interval (rounds resampled, each design apart). With
`--json PATH` the per-round stops are written (`{truth: {design: {"stop": [[documents, decisions, covered], …]}}}`);
`--paired OLD.json` prints, per truth, the plan's median decisions against the same rounds of an earlier run (same
seeds) with the interval of the ratio of medians over rounds resampled together.

    python bench/allocation_bound.py [--rounds 100] [--truths lenient spread] [--designs plan SRS]
        [--json PATH] [--paired OLD.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import print_table  # noqa: E402
from bench.smoothing_coverage import (  # noqa: E402
    RUN,
    TRUTHS,
    Audit,
    coverage_text,
    demo_db,
    ratio_interval,
    simulate,
)
from devtools.partial_audit import changeable, population  # noqa: E402
from scoring.stats.sampling import build_plan, next_unit, planning_variance  # noqa: E402

DESIGNS = ("plan", "SRS", "no certain take-all", "truth-aware")


class Variants(Audit):
    """`Audit` with the serving orders of `DESIGNS`."""

    def order(self, seed: int, design: str):
        if design in ("plan", "SRS"):
            return super().order(seed, "stratified" if design == "plan" else "SRS")
        task = self.pop.task
        plan = build_plan(self.units, lambda us: task.sampling_stratum([u.info["decision"] for u in us]), seed)
        q = changeable(self.pop)
        take_all = task.sampling_take_all(set(plan.strata()))
        if design == "no certain take-all":
            take_all = {h for h in take_all if any(q.get(b.id, 0) for b in plan.strata()[h])}
        plan = build_plan(self.units, lambda us: task.sampling_stratum([u.info["decision"] for u in us]), seed,
                          take_all=take_all)
        planning = planning_variance(q)
        if design == "truth-aware":
            strata = plan.stratum_of()
            differ = {strata[d] for d in strata if np.any(self.human[d] != self.judge[d])}
            planning = {b: (v if strata[b] in differ else 0.0) for b, v in planning.items()}
        shrink = {"shrink": 0.0} if design == "truth-aware" else {}
        picked: list[str] = []
        while (pick := next_unit(plan, picked, planning=planning, **shrink)) is not None:
            picked.append(pick.block)
        return plan.stratum_of(), picked


def paired_interval(new: list[float], old: list[float], reps: int = 2000, seed: int = 0) -> tuple[float, float]:
    """Monte-Carlo 95% interval of median(new) / median(old) over the same rounds, resampled together."""
    rng = np.random.default_rng(seed)
    x, y = np.asarray(new, float), np.asarray(old, float)
    idx = rng.integers(0, x.size, (reps, x.size))
    r = np.median(x[idx], axis=1) / np.median(y[idx], axis=1)
    return float(np.percentile(r, 2.5)), float(np.percentile(r, 97.5))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--truths", nargs="+", default=list(TRUTHS), choices=list(TRUTHS))
    ap.add_argument("--designs", nargs="+", default=list(DESIGNS), choices=list(DESIGNS))
    ap.add_argument("--half-width", type=float, default=0.03)
    ap.add_argument("--json", type=Path, help="write the per-round stops here")
    ap.add_argument("--paired", type=Path, help="an earlier --json run (same rounds) to compare the plan with")
    ap.add_argument("--db", type=Path, default=Path(tempfile.gettempdir()) / "rejudge-bench" / "demo-seeded.db")
    args = ap.parse_args()
    args.db.parent.mkdir(parents=True, exist_ok=True)
    db = demo_db(args.db)
    from audit.views import as_view

    sizes = Counter(d["doc"] for d in as_view(db, RUN).decisions())
    old = json.loads(args.paired.read_text()) if args.paired else {}
    rows, paired_rows, out = [], [], {}
    for truth in args.truths:
        t0 = time.process_time()
        audit = Variants(population(db, RUN, seed=0, truth=TRUTHS[truth](sizes)))
        stops = {d: simulate(audit, args.rounds, d, args.half_width)["jeffreys"]["stop"] for d in args.designs}
        out[truth] = {d: {"stop": s} for d, s in stops.items()}
        decisions = {d: [x for _, x, _ in s] for d, s in stops.items()}
        for d, s in stops.items():
            ratio = "—"
            if "SRS" in decisions and d != "SRS":
                lo, hi = ratio_interval(decisions[d], decisions["SRS"])
                r = statistics.median(decisions[d]) / statistics.median(decisions["SRS"])
                ratio = f"{r:.2f} [{lo:.2f}, {hi:.2f}]"
            rows.append([truth, d, coverage_text(sum(c for *_, c in s), len(s)), statistics.median(decisions[d]),
                         ratio])
        before = old.get(truth, {}).get("plan", old.get(truth, {}).get("stratified"))
        if before and "plan" in decisions and len(before["stop"]) >= args.rounds:
            was = [x for _, x, _ in before["stop"]][:args.rounds]  # round r has plan seed 1000 + r in both runs
            lo, hi = paired_interval(decisions["plan"], was)
            paired_rows.append([truth, statistics.median(was), statistics.median(decisions["plan"]),
                                f"{statistics.median(decisions['plan']) / statistics.median(was):.3f} "
                                f"[{lo:.3f}, {hi:.3f}]",
                                sum(a != b for a, b in zip(decisions["plan"], was, strict=True))])
        print(f"<!-- {truth}: {time.process_time() - t0:.0f} s CPU -->", flush=True)
    if args.json:
        args.json.write_text(json.dumps(out))
    print_table(f"decisions at the ±{args.half_width} stop, {args.rounds} rounds (plan seed 1000 + round)",
                ["truth", "design", "coverage at the stop", "median decisions",
                 "median decisions / SRS's [Monte-Carlo 95%]"], rows)
    if paired_rows:
        print_table(f"the plan now vs {args.paired.name} (same rounds)",
                    ["truth", "before: median decisions", "now", "now / before [paired 95%]",
                     "rounds whose stop moved"], paired_rows)


if __name__ == "__main__":
    main()
