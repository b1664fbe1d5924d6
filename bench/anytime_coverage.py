"""Coverage under optional stopping: the anytime interval (confidence sequence) vs the fixed-n interval (#24 part 1).

A synthetic CHIMERA-shaped run (documents = blocks holding 1-8 match decisions; F1 = 2TP / (2TP + FP + FN) with
unpaired predictions and gold items per document) is audited many times, each time in the seeded random order of
a fresh plan (`sampling.build_plan`, seed = simulation number) and with the queue's own rule for which stratum to
draw from (`sampling.next_unit`: 3 per stratum, then the largest Neyman gain on a planning variance fixed before
review; with no family here every block alike). The reviewer stops at the first n ≥ 30 where the
half-width is ≤ 0.03: once reading the fixed-n interval (what reviewers did), once the anytime one. Human labels
are fixed per setting (the finite population); only the sample order varies, so coverage is design-based.

The per-step loop is vectorised over simulations (the stratum choice and the stopping test re-derive the
estimator's variance from running sums); every reported interval is then recomputed with the real code
(`difference.difference_totals` with `estimators.VARIANCE`, the Jeffreys hurdle covariance
`audit.review.sampling.estimate`
uses, `estimators.metric_estimate` and `estimators.anytime_estimate`) on the sampled set at the stop, and the run
fails if the fast and the real half-widths disagree. `--check K` also replays K simulations through the real
`next_unit` and compares picks.

Settings (judge error = the human overrules the judge's label):
- spread: 10% of decisions in every stratum;
- sparse: errors on 5% of documents only (half of their decisions), none elsewhere;
- biased: the judge over-matches: 25% of its matches are wrong, 2% of its no-matches;
- lenient: 3% / 8% / 1% in the all-match / mixed / no-match strata.

    python bench/anytime_coverage.py [--sims 1000] [--docs 400] [--half-width 0.03] [--check 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats as st

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import median, pct, print_table  # noqa: E402
from scoring.stats.confidence_sequence import multiplier, planned_n_for  # noqa: E402
from scoring.stats.difference import difference_totals  # noqa: E402
from scoring.stats.estimators import (  # noqa: E402
    MIN_DIFFERING,
    MIN_REVIEWS,
    VARIANCE,
    anytime_estimate,
    delta_method,
    metric_estimate,
    prf_from_totals,
)
from scoring.stats.sampling import Unit, build_plan, greedy_allocation, next_unit  # noqa: E402

TYPES = ("entity",)
STRATA = ("all-match", "mixed", "no-match")
MIN_PER_STRATUM = 3


def f1(v: np.ndarray) -> float:
    return prf_from_totals(np.asarray(v, dtype=float), TYPES)["avg"]["f1"]


@dataclass
class Population:
    judge: np.ndarray
    """(N, 3) judge (tp, fp, fn) per document."""
    human: np.ndarray
    stratum: np.ndarray
    """(N,) index into STRATA."""
    decisions: np.ndarray
    """(N,) decisions per document (the review cost of a block)."""
    judge_labels: list[list[str]]

    @property
    def truth(self) -> float:
        return f1(self.human.sum(axis=0))


def population(setting: str, n_docs: int, seed: int = 0) -> Population:
    rng = np.random.default_rng(seed)
    judge, human, stratum, decisions, labels = [], [], [], [], []
    for _ in range(n_docs):
        k = int(min(8, 1 + rng.poisson(2.0)))
        p_match = rng.beta(2, 1.5)
        j = rng.random(k) < p_match
        extra_fp, extra_fn = rng.poisson(0.6), rng.poisson(0.6)
        s = 0 if j.all() else 2 if not j.any() else 1
        if setting == "spread":
            flip = rng.random(k) < 0.10
        elif setting == "sparse":
            flip = (rng.random(k) < 0.5) if rng.random() < 0.05 else np.zeros(k, bool)
        elif setting == "biased":
            flip = rng.random(k) < np.where(j, 0.25, 0.02)
        elif setting == "lenient":
            flip = rng.random(k) < (0.03, 0.08, 0.01)[s]
        else:
            raise ValueError(setting)
        h = j ^ flip
        for lab, out in ((j, judge), (h, human)):
            tp = int(lab.sum())
            out.append((tp, k - tp + extra_fp, k - tp + extra_fn))
        stratum.append(s)
        decisions.append(k)
        labels.append(["match" if x else "no-match" for x in j])
    return Population(np.array(judge, float), np.array(human, float), np.array(stratum), np.array(decisions),
                      labels)


def plan_for(pop: Population, seed: int):
    units = [Unit(f"{b}#{i}", str(b), lab) for b, labs in enumerate(pop.judge_labels) for i, lab in enumerate(labs)]
    stratum_name = {str(b): STRATA[s] for b, s in enumerate(pop.stratum)}
    return build_plan(units, lambda us: stratum_name[us[0].block], seed)


def orders(pop: Population, sims: int) -> np.ndarray:
    """(sims, H, max M_h) block index of the j-th block of stratum h in plan `seed = sim`'s order (−1 padding)."""
    sizes = np.bincount(pop.stratum, minlength=len(STRATA))
    out = -np.ones((sims, len(STRATA), sizes.max()), dtype=int)
    for s in range(sims):
        for h, blocks in plan_for(pop, s).strata().items():
            out[s, STRATA.index(h), :len(blocks)] = [int(b.id) for b in blocks]
    return out


# ---------------------------------------------------------------- one vectorised pass over all simulations


def simulate(pop: Population, sims: int, half_width: float) -> dict[str, np.ndarray]:
    """The queue's path for every simulation and the first stop of each rule: {"fixed", "anytime"} -> (sims,)
    number of sampled blocks at the stop (−1: never), and "order" (sims, N) the blocks in draw order."""
    n_h = len(STRATA)
    order = orders(pop, sims)
    size = np.bincount(pop.stratum, minlength=n_h).astype(float)
    cost = np.array([pop.decisions[pop.stratum == h].mean() for h in range(n_h)])
    d_all = pop.human - pop.judge
    judge_total = pop.judge.sum(axis=0)
    _, _, grad_j = delta_method(f1, judge_total, np.zeros((3, 3)))  # the queue's residual gradient
    z_all = d_all @ grad_j
    differs = np.any(d_all != 0, axis=1)
    planned = planned_n_for(len(pop.stratum))

    m = np.zeros((sims, n_h))
    sum_d = np.zeros((sims, n_h, 3))
    sum_dd = np.zeros((sims, n_h, 3, 3))
    sum_z, sum_zz = np.zeros((sims, n_h)), np.zeros((sims, n_h))
    n_diff = np.zeros(sims)
    x_h = np.zeros((sims, n_h))  # differing sampled blocks per stratum
    drawn = -np.ones((sims, len(pop.stratum)), dtype=int)
    stop = {"fixed": -np.ones(sims, dtype=int), "anytime": -np.ones(sims, dtype=int)}
    stop_hw = {"fixed": np.full(sims, np.nan), "anytime": np.full(sims, np.nan)}
    rows = np.arange(sims)
    names = np.argsort(np.argsort(np.array(STRATA)))  # rank of each stratum name, for next_unit's tie-breaks
    for t in range(len(pop.stratum)):
        open_ = m < size
        # --- the stratum next_unit picks
        under = open_ & (m < MIN_PER_STRATUM)
        key_under = np.where(under, m * 1e6 - size * 1e2 + names, np.inf)
        s2 = 1.0  # next_unit's planning variance without one (no family here): every block alike, fixed before review
        gain = np.where(open_, size**2 * s2 * (1 / np.maximum(m, 1) - 1 / (m + 1)) / cost, -np.inf)
        gain_key = np.where(open_, gain + size * 1e-12 + names * 1e-15, -np.inf)
        prop_key = np.where(open_, (m + 1) / size + names * 1e-12, np.inf)
        pick = np.where(under.any(axis=1), key_under.argmin(axis=1),
                        np.where(np.where(open_, gain, -np.inf).max(axis=1) > 0, gain_key.argmax(axis=1),
                                 prop_key.argmin(axis=1)))
        block = order[rows, pick, m[rows, pick].astype(int)]
        drawn[:, t] = block
        d = d_all[block]
        m[rows, pick] += 1
        sum_d[rows, pick] += d
        sum_dd[rows, pick] += d[:, :, None] * d[:, None, :]
        sum_z[rows, pick] += z_all[block]
        sum_zz[rows, pick] += z_all[block] ** 2
        n_diff += differs[block]
        x_h[rows, pick] += differs[block]
        n = t + 1
        if n < MIN_REVIEWS:
            continue
        # --- the fixed-n and anytime half-widths of difference_totals(variance="jeffreys") + metric_estimate:
        # per stratum m/(m-1)·[p E(eeᵀ) − p² E(e)E(e)ᵀ], p = max(x/m, (x + ½)/(m + 1)), e over its differing
        # blocks (an agreeing block adds 0 to the sums), else over those of the strata still sampled, else all
        ok = (m >= 1).all(axis=1) & (n_diff >= MIN_DIFFERING)
        total = judge_total + (size[None, :, None] * sum_d / np.maximum(m, 1)[:, :, None]).sum(axis=1)
        partial = m < size
        open_x = (x_h * partial).sum(axis=1)
        use_open = open_x > 0
        pool_x = np.where(use_open, open_x, x_h.sum(axis=1))
        pool_w = np.where(use_open[:, None], partial, True)[:, :, None]
        pool_d = (sum_d * pool_w).sum(axis=1) / np.maximum(pool_x, 1)[:, None]
        pool_dd = (sum_dd * pool_w[:, :, :, None]).sum(axis=1) / np.maximum(pool_x, 1)[:, None, None]
        own = x_h > 0
        first = np.where(own[:, :, None], sum_d / np.maximum(x_h, 1)[:, :, None], pool_d[:, None, :])
        second = np.where(own[:, :, None, None], sum_dd / np.maximum(x_h, 1)[:, :, None, None], pool_dd[:, None])
        rate = np.maximum(x_h / np.maximum(m, 1), (x_h + 0.5) / (m + 1))
        ddof = np.where(m > 1, m / np.maximum(m - 1, 1), 1.0)
        within = (ddof * rate)[:, :, None, None] * second \
            - (ddof * rate**2)[:, :, None, None] * first[:, :, :, None] * first[:, :, None, :]
        fpc = np.where(partial, size**2 * (1 - m / size) / np.maximum(m, 1), 0.0)
        parts = fpc[:, :, None, None] * within
        cov = parts.sum(axis=1)
        tp, fp, fn = total[:, 0], total[:, 1], total[:, 2]
        den = 2 * tp + fp + fn
        grad = np.stack([2 * (fp + fn) / den**2, -2 * tp / den**2, -2 * tp / den**2], axis=1)
        se = np.sqrt(np.maximum(np.einsum("si,sij,sj->s", grad, cov, grad), 0))
        df = np.where(partial & (m >= 2), m - 1, 0).sum(axis=1)
        # the t quantile at the Welch-Satterthwaite degrees of freedom (`Totals.effective_df`)
        v_h = np.einsum("si,shij,sj->sh", grad, parts, grad) * (partial & (m >= 1))
        nu_den = (v_h**2 / np.maximum(m - 1, 1)).sum(axis=1)
        nu = np.where(nu_den > 0, v_h.sum(axis=1) ** 2 / np.where(nu_den > 0, nu_den, 1.0), df)
        q = np.where(df > 0, st.t.ppf(0.975, np.maximum(nu, 1e-9)), st.norm.ppf(0.975))
        fixed = q * se
        anytime = np.maximum(multiplier(n, planned_n=planned) * se, fixed)
        complete = ~partial.any(axis=1)
        for rule, hw in (("fixed", fixed), ("anytime", anytime)):
            hit = (stop[rule] < 0) & ((ok & (hw <= half_width)) | complete)
            stop[rule][hit] = n
            stop_hw[rule][hit] = np.where(complete[hit], 0.0, hw[hit])
        if (stop["anytime"] >= 0).all():
            break
    return {**stop, "order": drawn, "hw_fixed": stop_hw["fixed"], "hw_anytime": stop_hw["anytime"]}


def real_interval(pop: Population, blocks: np.ndarray) -> tuple[tuple, tuple, int]:
    """(fixed-n ci, anytime ci, decisions) of the real estimator on the sampled `blocks`."""
    judge = {str(b): pop.judge[b] for b in range(len(pop.stratum))}
    strata = {str(b): STRATA[s] for b, s in enumerate(pop.stratum)}
    sampled = {str(b): pop.human[b] for b in blocks}
    tot = difference_totals(judge, strata, sampled, variance=VARIANCE)
    fixed = metric_estimate(tot, f1)
    anytime = anytime_estimate(fixed, planned_n=planned_n_for(len(judge)))
    return fixed.ci, anytime.ci, int(pop.decisions[blocks].sum())


def fixed_plan(pop: Population, half_width: float) -> dict[str, int]:
    """The fixed-n design: the Neyman allocation (real `greedy_allocation`) from the true residual variances."""
    _, _, grad = delta_method(f1, pop.human.sum(axis=0), np.zeros((3, 3)))
    z = (pop.human - pop.judge) @ grad
    size = {h: int((pop.stratum == i).sum()) for i, h in enumerate(STRATA)}
    s2 = {h: float(np.var(z[pop.stratum == i], ddof=1)) for i, h in enumerate(STRATA)}
    cost = {h: float(pop.decisions[pop.stratum == i].mean()) for i, h in enumerate(STRATA)}
    start = {h: min(MIN_PER_STRATUM, size[h]) for h in STRATA}
    target = (half_width / 1.96) ** 2
    alloc = greedy_allocation(size, s2, start, target, cost)
    while sum(alloc.values()) < MIN_REVIEWS:  # the estimators show no interval below 30 blocks
        target *= 0.9
        alloc = greedy_allocation(size, s2, start, target, cost)
    return alloc


def check_picks(pop: Population, seeds: int, steps: int = 80) -> None:
    """Replay `seeds` simulations through the real queue (`next_unit`; the residuals it is handed are not read)."""
    fast = simulate(pop, seeds, 0.0)["order"]
    _, _, grad = delta_method(f1, pop.judge.sum(axis=0), np.zeros((3, 3)))
    for s in range(seeds):
        plan = plan_for(pop, s)
        resid: dict[str, float] = {}
        for t in range(steps):
            pick = next_unit(plan, resid)
            if int(pick.block) != fast[s, t]:
                raise SystemExit(f"seed {s}, step {t}: the vectorised queue drew {fast[s, t]}, next_unit {pick.block}")
            b = int(pick.block)
            resid[pick.block] = float(grad @ (pop.human[b] - pop.judge[b]))


def run_setting(setting: str, sims: int, n_docs: int, half_width: float) -> list[list]:
    pop = population(setting, n_docs)
    truth = pop.truth
    t0 = time.perf_counter()
    res = simulate(pop, sims, half_width)
    out = {}
    mismatches = 0
    for rule in ("fixed", "anytime"):
        covered_fixed, covered_any, blocks, decisions = [], [], [], []
        for s in range(sims):
            n = int(res[rule][s])
            if n < 0:
                continue
            fixed_ci, any_ci, decs = real_interval(pop, res["order"][s, :n])
            hw = ((any_ci if rule == "anytime" else fixed_ci)[1] - (any_ci if rule == "anytime" else fixed_ci)[0]) / 2
            fast = res[f"hw_{rule}"][s]
            mismatches += n < len(pop.stratum) and (hw > half_width + 1e-9 or abs(hw - fast) > 1e-9 * max(1, hw))
            covered_fixed.append(fixed_ci[0] <= truth <= fixed_ci[1])
            covered_any.append(any_ci[0] <= truth <= any_ci[1])
            blocks.append(n)
            decisions.append(decs)
        out[rule] = (covered_fixed, covered_any, blocks, decisions)
    if mismatches:
        raise SystemExit(f"{setting}: {mismatches} stops where the real estimator's half-width is not the fast one "
                         "or exceeds the target")
    alloc = fixed_plan(pop, half_width)
    plan_blocks = sum(alloc.values())
    plan_cov = []
    for s in range(sims):
        order = orders_for_plan(pop, s)
        chosen = np.concatenate([order[h][:alloc[h]] for h in STRATA])
        fixed_ci, _, plan_decs = real_interval(pop, chosen)
        plan_cov.append(None if fixed_ci is None else fixed_ci[0] <= truth <= fixed_ci[1])
    elapsed = time.perf_counter() - t0
    cf, ca, bf, df_ = out["fixed"]
    af, aa, ba, da = out["anytime"]
    agree = 1 - np.mean(np.any(pop.human != pop.judge, axis=1))
    name = f"{setting} (F1 {truth:.3f}, judge {f1(pop.judge.sum(axis=0)):.3f}, {agree:.0%} docs agree; {elapsed:.0f} s)"
    return [
        [name, f"stop on fixed-n ≤ ±{half_width:.2f}", f"{np.mean(cf):.3f}", f"{np.mean(ca):.3f}", median(bf),
         median(df_), pct(df_, 90)],
        ["", f"stop on anytime ≤ ±{half_width:.2f}", f"{np.mean(af):.3f}", f"{np.mean(aa):.3f}", median(ba),
         median(da), pct(da, 90)],
        ["", "fixed-n plan (true variances)", _share(plan_cov), "—", plan_blocks, plan_decs, plan_decs],
    ]


def _share(covered: list[bool | None]) -> str:
    """Coverage among the audits with an interval, and how many had none (fewer than 5 differing blocks)."""
    shown = [c for c in covered if c is not None]
    missing = len(covered) - len(shown)
    return (f"{np.mean(shown):.3f}" if shown else "n/a") + (f" ({missing} no interval)" if missing else "")


def orders_for_plan(pop: Population, seed: int) -> dict[str, np.ndarray]:
    return {h: np.array([int(b.id) for b in bs]) for h, bs in plan_for(pop, seed).strata().items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sims", type=int, default=1000, help="simulated audits per setting")
    ap.add_argument("--docs", type=int, default=400, help="documents (blocks) in the synthetic run")
    ap.add_argument("--half-width", type=float, default=0.03)
    ap.add_argument("--settings", default="spread,sparse,biased,lenient")
    ap.add_argument("--check", type=int, default=3, help="simulations replayed through the real next_unit")
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows = []
    for setting in args.settings.split(","):
        if args.check:
            check_picks(population(setting, args.docs), args.check)
        rows += run_setting(setting, args.sims, args.docs, args.half_width)
    print_table(f"{args.sims} simulated audits per setting, {args.docs} documents, stop at the first n ≥ "
                f"{MIN_REVIEWS} with half-width ≤ {args.half_width} (95%; planned_n {planned_n_for(args.docs)}); "
                f"{time.perf_counter() - t0:.0f} s",
                ["setting", "rule", "fixed-n covers", "anytime covers", "median blocks", "median decisions",
                 "p90 decisions"], rows)


if __name__ == "__main__":
    main()
