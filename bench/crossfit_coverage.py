"""Coverage of the estimate when the judge was improved on the reviews that correct it (issue #37 §2).

A run of M documents with D decisions each; a fuzzy-like judge (yes iff score >= 95) and a human truth per known
truth model. Each round reviews m documents drawn at random, improves the judge with `improve-judge`'s threshold
strategy (`scoring.improve.threshold`) and estimates the run's total of true matches three ways:
- `original`: the difference estimator with the original judge (fixed before the sample: valid; the width to beat);
- `naive reuse`: the judge fitted on all reviewed documents, then the usual difference estimator on the same reviews;
- `cross-fitted`: `scoring.stats.crossfit.cross_fitted_totals` with K document folds, with the plain sample
  variance and with the Jeffreys hurdle variance `estimate` uses (scoring/stats/difference.py), both with the
  folds' spread term; and with the residual variance alone (no spread term), to show what the term buys.
Prints coverage of the 95% interval (with its Wilson interval) and the mean width per truth model.

    python bench/crossfit_coverage.py [--rounds 500] [--docs 300] [--reviewed 30] [--folds 5]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy import stats as st

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/crossfit_coverage.py` from the checkout, as the README says
    sys.path.insert(0, str(ROOT))

from scoring.improve.crossfit import Item  # noqa: E402
from scoring.improve.threshold import fit_threshold, scored  # noqa: E402
from scoring.stats.crossfit import cross_fitted_totals, document_folds  # noqa: E402
from scoring.stats.difference import Totals, difference_totals  # noqa: E402
from scoring.stats.intervals import wilson_interval  # noqa: E402

LABELS = ("match", "no-match")
GRID = tuple(float(t) for t in range(101))
ORIGINAL = 95.0


def both_orders(answers: list[str]) -> str:
    return "match" if answers == ["yes", "yes"] else "no-match"


def _strict(rng: np.random.Generator, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    truth = rng.random(shape) < 0.5
    return np.where(truth, rng.uniform(0.70, 1.0, shape), rng.uniform(0.2, 0.75, shape)), truth


def _noisy(rng: np.random.Generator, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    scores, truth = _strict(rng, shape)
    return scores, truth ^ (rng.random(shape) < 0.2)


def _overlap(rng: np.random.Generator, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    truth = rng.random(shape) < 0.4
    return np.where(truth, rng.uniform(0.5, 1.0, shape), rng.uniform(0.3, 0.85, shape)), truth


def _no_signal(rng: np.random.Generator, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    return rng.uniform(0.2, 1.0, shape), rng.random(shape) < 0.4


TRUTHS: dict[str, Callable[[np.random.Generator, tuple[int, int]], tuple[np.ndarray, np.ndarray]]] = {
    "strict (paraphrases score 70-94)": _strict, "strict, 20% of human labels flipped": _noisy,
    "overlapping scores": _overlap, "no signal (labels independent of scores)": _no_signal}


def _interval(tot: Totals) -> tuple[float, float]:
    """The estimators' t interval of the total: the t quantile at the Satterthwaite degrees of freedom, the folds'
    spread included as its own share (`Totals.effective_df`)."""
    total, var = float(tot.total[0]), float(tot.cov[0, 0])
    half = st.t.ppf(0.975, max(tot.effective_df(np.ones(1)), 1e-9) if tot.df > 0 else 1) * np.sqrt(max(var, 0.0))
    return total - half, total + half


def one_round(scores: np.ndarray, truth: np.ndarray, m: int, k: int, rng: np.random.Generator) -> dict:
    n_docs = len(scores)
    blocks = [f"d{i}" for i in range(n_docs)]
    strata = dict.fromkeys(blocks, "all")
    human = truth.sum(axis=1).astype(float)
    chosen = sorted(rng.choice(n_docs, m, replace=False).tolist())
    items = [Item(i * 100 + j, blocks[i], LABELS[0] if truth[i, j] else LABELS[1], "",
                  scored(["yes", "yes"], [scores[i, j]] * 2, both_orders, scale=100))
             for i in chosen for j in range(scores.shape[1])]
    items = [Item(x.decision, x.doc, x.human, x.features.labels_by_count[int(sum(s >= ORIGINAL for s in
                                                                                x.features.scores))], x.features)
             for x in items]

    def counts(t: float) -> np.ndarray:
        return (np.round(scores * 100, 6) >= t).sum(axis=1).astype(float)

    sampled = {blocks[i]: human[i] for i in chosen}
    out = {}
    for name, judge in (("original", counts(ORIGINAL)),
                        ("naive reuse", counts(fit_threshold(items, GRID, LABELS, ORIGINAL)["threshold"]))):
        tot = difference_totals({b: judge[i] for i, b in enumerate(blocks)}, strata, sampled)
        out[name] = _interval(tot)
    folds = document_folds([blocks[i] for i in chosen], k, seed=int(rng.integers(1 << 30)))
    per_fold = []
    for fold in folds:
        held = set(fold)
        per_fold.append(counts(fit_threshold([x for x in items if x.doc not in held], GRID, LABELS,
                                             ORIGINAL)["threshold"]))
    fold_of = {b: f for f, fold in enumerate(folds) for b in fold}
    fold_judge = {b: [c[i] for c in per_fold] for i, b in enumerate(blocks)}
    for name, variance, spread in (("cross-fitted, residual variance only", "plain", False),
                                   ("cross-fitted (plain)", "plain", True),
                                   ("cross-fitted (jeffreys)", "jeffreys", True)):
        tot = cross_fitted_totals(fold_judge, strata, sampled, fold_of, variance=variance, fold_spread=spread)
        out[name] = _interval(tot)
    return {name: (lo <= human.sum() <= hi, hi - lo) for name, (lo, hi) in out.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=500)
    p.add_argument("--docs", type=int, default=300)
    p.add_argument("--decisions", type=int, default=5, help="decisions per document")
    p.add_argument("--reviewed", type=int, default=30, help="documents reviewed per round")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    print(f"M = {a.docs} documents x {a.decisions} decisions, m = {a.reviewed} reviewed, K = {a.folds}, "
          f"{a.rounds} rounds per truth model (a fresh population each round)\n")
    print("| truth model | estimator | coverage [95% Wilson] | mean width |")
    print("|---|---|---|---|")
    for t, (name, make) in enumerate(TRUTHS.items()):
        rng = np.random.default_rng([a.seed, t])
        hits: dict[str, list[bool]] = {}
        widths: dict[str, list[float]] = {}
        for _ in range(a.rounds):
            scores, truth = make(rng, (a.docs, a.decisions))
            for est, (hit, width) in one_round(scores, truth, a.reviewed, a.folds, rng).items():
                hits.setdefault(est, []).append(hit)
                widths.setdefault(est, []).append(width)
        for est in hits:
            c = sum(hits[est])
            lo, hi = wilson_interval(c, a.rounds)
            print(f"| {name} | {est} | {c / a.rounds:.3f} [{lo:.3f}, {hi:.3f}] | {np.mean(widths[est]):.1f} |")


if __name__ == "__main__":
    main()
