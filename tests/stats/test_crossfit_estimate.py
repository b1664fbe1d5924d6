"""The cross-fitted difference estimator (issue #37 §2): exact under a full review, and the unstratified mean case
agrees with `ppi-python`'s `crossppi_mean_ci` (Zrnic & Candès 2024) when the run has many more blocks than reviews."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st

from scoring.stats.crossfit import cross_fitted_totals, document_folds


def population(n_blocks: int, k: int, seed: int) -> tuple[dict, dict, np.ndarray]:
    """Every block's K fold judges (noisy copies of one judge) and its human value."""
    rng = np.random.default_rng(seed)
    x = rng.random(n_blocks)
    human = (rng.random(n_blocks) < x).astype(float)
    fold_judge = {f"b{i}": [float(x[i] + rng.normal(0, 0.05)) for _ in range(k)] for i in range(n_blocks)}
    return fold_judge, {f"b{i}": "all" for i in range(n_blocks)}, human


def test_a_full_review_gives_the_human_total_exactly():
    fold_judge, strata, human = population(40, 4, seed=0)
    sampled = {b: human[i] for i, b in enumerate(fold_judge)}
    fold_of = {b: f for f, fold in enumerate(document_folds(list(sampled), 4, seed=0)) for b in fold}
    t = cross_fitted_totals(fold_judge, strata, sampled, fold_of)
    assert t.total[0] == pytest.approx(human.sum()) and t.cov[0, 0] == pytest.approx(0)


def test_the_unstratified_mean_agrees_with_ppi_python_crossppi():
    ppi = pytest.importorskip("ppi_py")
    k, n_blocks, n = 5, 100_000, 300
    fold_judge, strata, human = population(n_blocks, k, seed=1)
    blocks = list(fold_judge)
    rng = np.random.default_rng(2)
    chosen = [blocks[i] for i in rng.choice(n_blocks, n, replace=False)]
    fold_of = {b: f for f, fold in enumerate(document_folds(chosen, k, seed=3)) for b in fold}
    sampled = {b: human[int(b[1:])] for b in chosen}
    t = cross_fitted_totals(fold_judge, strata, sampled, fold_of, fold_spread=False)  # crossppi has no such term
    mean, half = t.total[0] / n_blocks, st.norm.ppf(0.975) * np.sqrt(t.cov[0, 0]) / n_blocks

    unlabeled = np.array([fold_judge[b] for b in blocks if b not in sampled])
    y = np.array([sampled[b] for b in chosen])
    yhat = np.array([fold_judge[b][fold_of[b]] for b in chosen])
    lo, hi = ppi.crossppi_mean_ci(y, yhat, unlabeled, alpha=0.05)
    assert mean == pytest.approx((lo + hi) / 2, abs=2e-3)
    assert half == pytest.approx((hi - lo) / 2, rel=0.02)  # ddof 1 and the FPC against ddof 0 and an imputed term


def test_the_folds_spread_adds_how_far_the_estimate_moves_between_fold_judges():
    fold_judge = {"a": [1, 3], "b": [0, 2], "c": [5, 7], "d": [1, 1]}
    strata = dict.fromkeys(fold_judge, "h")
    sampled, fold_of = {"a": 2, "b": 1}, {"a": 0, "b": 1}
    without = cross_fitted_totals(fold_judge, strata, sampled, fold_of, fold_spread=False)
    spread = cross_fitted_totals(fold_judge, strata, sampled, fold_of)
    # the estimate under fold judge k alone: T_0 = (5 + 1) + (2 − 1) + (1 − 0) = 8, T_1 = (7 + 1) + (2 − 3) + (1 − 2)
    # = 6; (K − 1)/K Σ (T_k − 7)² = 1/2 · 2 = 1
    assert spread.cov[0, 0] == pytest.approx(without.cov[0, 0] + 1.0)
    assert spread.total[0] == without.total[0]


def test_the_folds_spread_counts_with_k_minus_1_degrees_of_freedom():
    """The spread is a jackknife over K folds: in the t quantile's Satterthwaite degrees of freedom it is a share of
    the variance with K − 1 of them, so where it dominates, the degrees of freedom fall towards K − 1."""
    fold_judge, strata, human = population(400, 3, seed=4)
    blocks = list(fold_judge)
    chosen = blocks[:60]
    fold_of = {b: f for f, fold in enumerate(document_folds(chosen, 3, seed=5)) for b in fold}
    sampled = {b: human[int(b[1:])] for b in chosen}
    # fold judges that disagree a lot on the unreviewed blocks: the spread term dominates the variance
    loud = {b: vs if b in sampled else [v + 0.5 * f for f, v in enumerate(vs)] for b, vs in fold_judge.items()}
    quiet = cross_fitted_totals(fold_judge, strata, sampled, fold_of)
    noisy = cross_fitted_totals(loud, strata, sampled, fold_of)
    one = np.ones(1)
    assert quiet.effective_df(one) > 30  # the residuals' 59 carry it
    assert 2 <= noisy.effective_df(one) < 2.5  # K − 1 = 2 carry it
