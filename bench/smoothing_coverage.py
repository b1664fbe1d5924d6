"""Coverage and width of the sampled audit's interval on CHIMERA entity F1, old smoothing vs new, and the reviews
a stratified plan saves over simple random sampling, on several known truths (issue 24 part 0).

The run is the `demo-chimera-mixed` demo (`pred_mixed.jsonl` judged by the synthetic replay log), read from a
seeded demo database. A truth model gives every decision a known "true" label (seeded; errors cluster by
document through a per-document propensity in {0, 0.5, 1, 1.5, 2}, mean 1), so the true full-review entity F1 is
known. Per round (plan seed = 1000 + round): the plan `audit plan` builds (blocks = documents, CHIMERA's
`sampling_stratum`), the order the sample queue serves (`next_unit` with the planning variance `next_sample` passes:
judge-side only, fixed before review), and after every reviewed document from 30 on the fixed-n interval
`estimate` gives (`difference_totals` over the run's full count vectors, `metric_estimate`), under each variance
choice: `plain` (sample covariance), `old` (2 pseudo-observations of the pooled covariance, the former default)
and `jeffreys` (the hurdle covariance with a Jeffreys differing rate, the new default). The plan has CHIMERA's
take-all strata (`sampling_take_all`: the rare-type `inspiration/…` strata, reviewed whole first, as `audit plan`
builds it); `no take-all` is the same plan with those strata sampled (the plan before issue 24's leftovers); the
SRS design is one stratum in the plan's random order with the same estimator.

Truth models (probability that a decision's true label is not the judge's, × the document's propensity):
- `lenient`: identical strings 0, split order 15%, judge match 6%, judge no-match 3% (errors rare);
- `spread`: 10% of every decision, identical strings included (the `identical` strata's assumption relaxed);
- `biased`: identical 0, split 40%, judge match 25%, judge no-match 2% (the judge over-matches);
- `sparse`: 40% of every non-identical decision, on the documents of propensity 2 only (a fifth; others 0);
- `long-docs`: errors in long documents: non-identical decisions of the top quarter of documents by decision count
  wrong at 30%, elsewhere 1%;
- `near-duplicates`: a judge lenient on near-duplicate strings: its matches of two different strings with difflib
  ratio ≥ 0.8 truly different at 50%, every other non-identical decision 1%;
- `rare-types`: a judge poor on the rare entity types (`inspiration-src/-target`): 30% there, 2% elsewhere;
- `identical-12`: 12% of identical-string pairs truly different (not × propensity), others 2%.
(Issue 39's five new truth models; the fifth, retrieval acceptance by text similarity, is in
bench/family_partial_audit.py.) Coverage is printed with its Clopper-Pearson 95% interval over the rounds, the
bias as the mean estimate minus the truth.

Printed: per truth, design and variance, coverage and mean half-width at 30 / 40 / 50 / 60 reviewed documents,
the spread of the estimate between rounds beside the mean SE, and at the stop (first n ≥ 30 with half-width
≤ ±0.03) coverage and reviews; then the gain table: documents and decisions to ±0.03, from the estimate's true
spread between rounds (the smallest n with 1.96 · sd ≤ 0.03) and at the stop, stratified vs SRS (the ratio of
median decisions at the stop with its Monte-Carlo interval: rounds resampled, `ratio_interval`).

    python bench/smoothing_coverage.py [--rounds 100] [--truths lenient spread biased sparse] [--half-width 0.03]
        [--variances jeffreys old plain]
"""

from __future__ import annotations

import argparse
import difflib
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from audit.review.sampling import flatten, metric_of_totals  # noqa: E402
from bench.common import print_table  # noqa: E402
from bench.family_partial_audit import demo_db  # noqa: E402
from devtools.partial_audit import Population, _paths, changeable, population  # noqa: E402
from scoring.families.chimera.sampling import RARE_TYPES, _split  # noqa: E402
from scoring.stats.difference import difference_totals  # noqa: E402
from scoring.stats.estimators import delta_method, metric_estimate, prf_from_totals  # noqa: E402
from scoring.stats.sampling import build_plan, next_unit, planning_variance  # noqa: E402

RUN = "demo-chimera-mixed"
TARGET = ("entities", "avg", "f1")
TYPES = ("comb-element", "inspiration-src", "inspiration-target")
CHECKPOINTS = (30, 40, 50, 60)
DESIGNS = ("stratified", "no take-all", "SRS")
"""The plan `audit plan` builds (its rare-type `inspiration/…` strata reviewed whole first: the family's
`sampling_take_all`); the same strata with none reviewed whole; one stratum (simple random sampling of documents)."""
VARIANCES = {"plain": {"variance": "plain"}, "old": {"prior_weight": 2.0},
             "jeffreys": {"variance": "jeffreys"}}


def _kind(d: Mapping) -> str:
    if d["left"] == d["right"]:
        return "identical"
    if _split(d):
        return "split"
    return "match" if d["judge"] == "match" else "no-match"


def rate_truth(rates: Mapping[str, float]) -> Callable[[Mapping, random.Random, float], str]:
    def truth(d: Mapping, rng: random.Random, propensity: float) -> str:
        if rng.random() < min(1.0, rates[_kind(d)] * propensity):
            return "no-match" if d["judge"] == "match" else "match"
        return d["judge"]
    return truth


def sparse_truth(d: Mapping, rng: random.Random, propensity: float) -> str:
    # propensity 2.0 has probability 1/5: those documents err, the others never
    if propensity == 2.0 and _kind(d) != "identical" and rng.random() < 0.4:
        return "no-match" if d["judge"] == "match" else "match"
    return d["judge"]


def _flip(d: Mapping) -> str:
    return "no-match" if d["judge"] == "match" else "match"


def long_docs_truth(sizes: Mapping[str, int]) -> Callable[[Mapping, random.Random, float], str]:
    """Errors in long documents: non-identical decisions of the documents with the most decisions (the top quarter)
    wrong at 30% × propensity, elsewhere 1%."""
    cut = sorted(sizes.values())[int(0.75 * len(sizes))] if sizes else 0

    def truth(d: Mapping, rng: random.Random, propensity: float) -> str:
        rate = 0.30 if sizes.get(d["doc"], 0) >= cut else 0.01
        return _flip(d) if _kind(d) != "identical" and rng.random() < min(1.0, rate * propensity) else d["judge"]
    return truth


def near_duplicate(d: Mapping) -> bool:
    """Two different strings that read almost alike (difflib ratio ≥ 0.8, case folded)."""
    a, b = str(d["left"]).lower(), str(d["right"]).lower()
    return a != b and difflib.SequenceMatcher(None, a, b).ratio() >= 0.8


def near_duplicate_truth(d: Mapping, rng: random.Random, propensity: float) -> str:
    """A judge lenient on near-duplicate strings: its matches of near-duplicate pairs truly different at 50% ×
    propensity; every other non-identical decision wrong at 1%."""
    if d["judge"] == "match" and near_duplicate(d):
        return "no-match" if rng.random() < min(1.0, 0.5 * propensity) else "match"
    return _flip(d) if _kind(d) != "identical" and rng.random() < 0.01 * propensity else d["judge"]


def rare_types_truth(d: Mapping, rng: random.Random, propensity: float) -> str:
    """A judge poor on the rare entity types: their decisions wrong at 30% × propensity, others' at 2%."""
    rate = 0.30 if d["type"] in RARE_TYPES else 0.02
    return _flip(d) if _kind(d) != "identical" and rng.random() < min(1.0, rate * propensity) else d["judge"]


def identical_wrong_truth(d: Mapping, rng: random.Random, propensity: float) -> str:
    """12% of identical-string pairs truly different (not clustered); other decisions wrong at 2% × propensity."""
    if _kind(d) == "identical":
        return "no-match" if rng.random() < 0.12 else d["judge"]
    return _flip(d) if rng.random() < 0.02 * propensity else d["judge"]


def _fixed(truth: Callable[[Mapping, random.Random, float], str]) -> Callable[[Mapping[str, int]], Callable]:
    return lambda _sizes: truth


TRUTHS: dict[str, Callable[[Mapping[str, int]], Callable[[Mapping, random.Random, float], str]]] = {
    "lenient": _fixed(rate_truth({"identical": 0.0, "split": 0.15, "match": 0.06, "no-match": 0.03})),
    "spread": _fixed(rate_truth({"identical": 0.10, "split": 0.10, "match": 0.10, "no-match": 0.10})),
    "biased": _fixed(rate_truth({"identical": 0.0, "split": 0.40, "match": 0.25, "no-match": 0.02})),
    "sparse": _fixed(sparse_truth),
    "long-docs": long_docs_truth,
    "near-duplicates": _fixed(near_duplicate_truth),
    "rare-types": _fixed(rare_types_truth),
    "identical-12": _fixed(identical_wrong_truth),
}
"""Truth name -> a factory given the decisions per document (the long-document truth reads them)."""


def binomial_ci(hits: int, n: int) -> tuple[float, float]:
    """Clopper-Pearson 95% interval of a coverage rate (the Monte-Carlo error of `hits` of `n` rounds)."""
    ci = stats.binomtest(hits, n).proportion_ci(0.95, method="exact")
    return float(ci.low), float(ci.high)


def coverage_text(hits: int, n: int) -> str:
    lo, hi = binomial_ci(hits, n)
    return f"{hits / n:.2f} [{lo:.2f}, {hi:.2f}]"


def entity_f1(paths: list[tuple]) -> Callable[[np.ndarray], float]:
    """Entity F1 (macro avg) straight from the flat count vector (what the family's metrics give; checked)."""
    idx = [paths.index(("entities", t, k)) for t in TYPES for k in ("tp", "fp", "fn")]
    return lambda v: prf_from_totals(np.asarray(v)[idx], TYPES)["avg"]["f1"]


class Audit:
    """One truth's population as flat vectors, and the estimate after any set of sampled documents."""

    def __init__(self, pop: Population) -> None:
        self.pop = pop
        self.paths = _paths(pop)
        self.judge = {d: flatten(c, self.paths) for d, c in pop.judge.items()}
        self.human = {d: flatten(c, self.paths) for d, c in pop.human.items()}
        self.g = entity_f1(self.paths)
        family_g = metric_of_totals(pop.task, next(c for c in pop.task.headline if c.path == TARGET), self.paths,
                                    pop.options)
        total = sum(self.human.values())
        assert abs(self.g(total) - family_g(total)) < 1e-12, "fast F1 disagrees with the family's metrics"
        self.truth = pop.truth["/".join(TARGET)]
        assert abs(self.g(total) - self.truth) < 1e-12
        # speed: drop the counts no document's true labels change (their differences are 0 everywhere, so every
        # variance choice, the differing rule and the estimate are unchanged); keep the entity counts F1 reads
        keep = [i for i, p in enumerate(self.paths) if p[0] == "entities" and p[-1] in ("tp", "fp", "fn")
                or any(self.human[d][i] != self.judge[d][i] for d in self.judge)]
        self.paths = [self.paths[i] for i in keep]
        self.judge = {d: v[keep] for d, v in self.judge.items()}
        self.human = {d: v[keep] for d, v in self.human.items()}
        self.g = entity_f1(self.paths)
        assert abs(self.g(sum(self.human.values())) - self.truth) < 1e-12
        base = sum(self.judge.values())
        _, _, self.grad = delta_method(self.g, base, np.zeros((base.size, base.size)))
        self.residual = {d: float(self.grad @ (self.human[d] - self.judge[d])) for d in self.judge}
        self.units = pop.units
        self.decisions_of = {}
        for u in pop.units:
            self.decisions_of[u.block] = self.decisions_of.get(u.block, 0) + 1

    def order(self, seed: int, design: str) -> tuple[dict[str, str], list[str]]:
        """(strata, the documents in the order the sample queue serves them) for a design of `DESIGNS`."""
        task = self.pop.task
        stratum_fn = ((lambda us: task.sampling_stratum([u.info["decision"] for u in us])) if design != "SRS"
                      else (lambda _us: "all"))
        plan = build_plan(self.units, stratum_fn, seed)
        if design == "stratified":  # as audit.review.sampling.create_plan builds it
            plan = build_plan(self.units, stratum_fn, seed, take_all=task.sampling_take_all(set(plan.strata())))
        planning = planning_variance(changeable(self.pop))
        picked: list[str] = []
        while (pick := next_unit(plan, picked, planning=planning)) is not None:
            picked.append(pick.block)
        return plan.stratum_of(), picked

    def estimate(self, strata: Mapping[str, str], sample: list[str], how: Mapping):
        in_plan = set(strata)
        certain = {d: self.human[d] for d in self.judge if d not in in_plan}
        tot = difference_totals(self.judge, strata, {d: self.human[d] for d in sample}, certain=certain, **how)
        return metric_estimate(tot, self.g)


def simulate(audit: Audit, rounds: int, design: str, half_width: float,
             variances: tuple[str, ...] = ("jeffreys",)) -> dict[str, dict]:
    """Per variance choice: estimate, interval per round and n (n ≥ 30), and the stop."""
    out: dict[str, dict] = {v: {"by_n": {}, "stop": []} for v in variances}
    out["points"] = {}
    for r in range(rounds):
        strata, order = audit.order(1000 + r, design)
        for n in range(1, 30):  # point estimates below the interval's minimum (the same for every variance)
            est = audit.estimate(strata, order[:n], VARIANCES["plain"])
            out["points"].setdefault(n, []).append((est.design_value, None, None,
                                                    sum(audit.decisions_of[b] for b in order[:n])))
        for name in variances:
            how, stopped = VARIANCES[name], False
            for n in range(30, len(order) + 1):
                if stopped and n > max(CHECKPOINTS):
                    break
                est = audit.estimate(strata, order[:n], how)
                decisions = sum(audit.decisions_of[b] for b in order[:n])
                out[name]["by_n"].setdefault(n, []).append((est.design_value, est.ci, est.se, decisions))
                if not stopped and est.ci is not None and (est.ci[1] - est.ci[0]) / 2 <= half_width + 1e-12:
                    out[name]["stop"].append((n, decisions, est.ci[0] <= audit.truth <= est.ci[1]))
                    stopped = True
            if not stopped:
                out[name]["stop"].append((len(order), sum(audit.decisions_of.values()), True))
    return out


def _cov(rows: list, truth: float) -> tuple[str | None, float | None, int]:
    """(coverage with its binomial interval, mean half-width, rounds without an interval)."""
    cis = [ci for _, ci, _, _ in rows if ci is not None]
    if not cis:
        return None, None, len(rows)
    return (coverage_text(sum(lo - 1e-12 <= truth <= hi + 1e-12 for lo, hi in cis), len(cis)),
            statistics.fmean((hi - lo) / 2 for lo, hi in cis), len(rows) - len(cis))


def needed_from_spread(by_n: Mapping[int, list], half_width: float) -> tuple[int | None, float | None]:
    """Smallest n whose estimate's spread between rounds gives 1.96 · sd ≤ half_width; (n, mean decisions)."""
    for n in sorted(by_n):
        pts = [e for e, _, _, _ in by_n[n] if e is not None]
        if len(pts) == len(by_n[n]) > 2 and 1.96 * statistics.stdev(pts) <= half_width:
            return n, statistics.fmean(d for _, _, _, d in by_n[n])
    return None, None


def ratio_interval(a: list[float], b: list[float], reps: int = 2000, seed: int = 0) -> tuple[float, float]:
    """Monte-Carlo 95% interval of median(a) / median(b) (rounds resampled with replacement, each design apart):
    how far a ratio of medians over this many rounds can move by the draw of rounds alone."""
    rng = np.random.default_rng(seed)
    x, y = np.asarray(a, float), np.asarray(b, float)
    r = [np.median(rng.choice(x, x.size)) / np.median(rng.choice(y, y.size)) for _ in range(reps)]
    return float(np.percentile(r, 2.5)), float(np.percentile(r, 97.5))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--truths", nargs="+", default=list(TRUTHS), choices=list(TRUTHS))
    ap.add_argument("--half-width", type=float, default=0.03)
    ap.add_argument("--designs", nargs="+", default=list(DESIGNS), choices=list(DESIGNS))
    ap.add_argument("--truth-seed", type=int, default=0)
    ap.add_argument("--variances", nargs="+", default=["jeffreys"], choices=list(VARIANCES),
                    help="jeffreys is estimate's; old and plain only for comparison")
    ap.add_argument("--db", type=Path, default=Path(tempfile.gettempdir()) / "rejudge-bench" / "demo-seeded.db")
    args = ap.parse_args()
    args.db.parent.mkdir(parents=True, exist_ok=True)
    db = demo_db(args.db)
    from collections import Counter

    from audit.views import as_view
    sizes = Counter(d["doc"] for d in as_view(db, RUN).decisions())
    gain_rows = []
    for truth_name in args.truths:
        t0 = time.perf_counter()
        audit = Audit(population(db, RUN, seed=args.truth_seed, truth=TRUTHS[truth_name](sizes)))
        judge_f1 = audit.g(sum(audit.judge.values()))
        differ = sum(bool(np.any(audit.human[d] != audit.judge[d])) for d in audit.decisions_of)
        print(f"\n## truth `{truth_name}`: entity F1 {audit.truth:.4f} (judge-only {judge_f1:.4f}); "
              f"{differ} of {len(audit.decisions_of)} documents with decisions differ from the judge "
              f"({len(audit.units)} decisions, {len(audit.judge)} documents)")
        rows, stop_rows, res = [], [], {}
        for design in args.designs:
            res[design] = simulate(audit, args.rounds, design, args.half_width, tuple(args.variances))
            for name in args.variances:
                by_n = res[design][name]["by_n"]
                cells = []
                for n in CHECKPOINTS:
                    if n not in by_n:
                        cells.append("—")
                        continue
                    cov, hw, no_ci = _cov(by_n[n], audit.truth)
                    pts = [e for e, _, _, _ in by_n[n] if e is not None]
                    ses = [se for _, _, se, _ in by_n[n] if se is not None]
                    sd = statistics.stdev(pts)
                    bias = statistics.fmean(pts) - audit.truth
                    cells.append(f"no CI, bias {bias:+.4f}" if cov is None else
                                 f"{cov} / ±{hw:.3f} (SE {statistics.fmean(ses):.4f}, sd {sd:.4f}, bias {bias:+.4f}"
                                 + (f", {no_ci} no CI" if no_ci else "") + ")")
                rows.append([design, name, *cells])
                stops = res[design][name]["stop"]
                stop_rows.append([design, name, coverage_text(sum(c for _, _, c in stops), len(stops)),
                                  statistics.median(n for n, _, _ in stops),
                                  statistics.median(d for _, d, _ in stops)])
        print_table(f"fixed-n interval, {args.rounds} rounds: coverage / mean half-width (mean SE, sd of the "
                    "estimate between rounds) at n reviewed documents",
                    ["design", "variance", *[f"n = {n}" for n in CHECKPOINTS]], rows)
        print_table(f"stop at the first n ≥ 30 with half-width ≤ ±{args.half_width} (the full plan if never)",
                    ["design", "variance", "coverage at stop", "median documents", "median decisions"], stop_rows)
        need = {d: needed_from_spread(res[d]["points"] | res[d]["jeffreys"]["by_n"], args.half_width) for d in res}
        stop = {d: statistics.median(x for _, x, _ in res[d]["jeffreys"]["stop"]) for d in res}

        def shown(v: tuple) -> str:
            return "not reached" if v[0] is None else f"{v[0]} ({v[1]:.0f})"

        def ratio(a: str, b: str, table: Mapping) -> str:
            x, y = table[a], table[b]
            x, y = (x[1], y[1]) if isinstance(x, tuple) else (x, y)
            return "—" if x is None or y is None else f"{x / y:.2f}"

        def stop_ratio(res: Mapping = res, stop: Mapping = stop) -> str:
            if "stratified" not in res or "SRS" not in res:
                return "—"
            lo, hi = ratio_interval([x for _, x, _ in res["stratified"]["jeffreys"]["stop"]],
                                    [x for _, x, _ in res["SRS"]["jeffreys"]["stop"]])
            return f"{ratio('stratified', 'SRS', stop)} [{lo:.2f}, {hi:.2f}]"

        both = {"stratified", "SRS"} <= set(res)
        gain_rows.append([truth_name, f"{audit.truth:.3f} / {judge_f1:.3f}",
                          *(shown(need[d]) if d in need else "—" for d in ("stratified", "SRS")),
                          ratio("stratified", "SRS", need) if both else "—",
                          shown(need["no take-all"]) if "no take-all" in need else "—",
                          *(f"{stop[d]:.0f}" if d in stop else "—" for d in ("stratified", "SRS")),
                          stop_ratio(),
                          f"{stop['no take-all']:.0f}" if "no take-all" in stop else "—"])
        print(f"<!-- {truth_name}: {time.perf_counter() - t0:.0f} s -->", flush=True)
    print_table(f"gain: reviews to ±{args.half_width} on entity F1, plan + queue vs simple random sampling of "
                f"documents (same difference estimator, jeffreys variance; documents (decisions)), {args.rounds} "
                "rounds",
                ["truth", "true / judge F1", "stratified: 1.96·sd ≤ target", "SRS: 1.96·sd ≤ target",
                 "decisions, stratified / SRS", "no take-all: 1.96·sd ≤ target",
                 "stratified: median decisions at stop", "SRS at stop",
                 "stratified / SRS at stop [Monte-Carlo 95% interval over rounds]",
                 "no take-all at stop"], gain_rows)

if __name__ == "__main__":
    main()
