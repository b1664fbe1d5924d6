"""Percentile bootstrap intervals that resample questions (the question is the cluster; ideation.md section 2)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

N_RESAMPLES = 2000
SEED = 0
CONFIDENCE = 0.95


@lru_cache(maxsize=64)
def _indices(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """Resample index matrix (n_resamples x n); cached because every cell with n questions reuses it."""
    idx = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    idx.setflags(write=False)
    return idx


def ratio_ci(num: Sequence[float], den: Sequence[float], *, n_resamples: int = N_RESAMPLES, seed: int = SEED,
             confidence: float = CONFIDENCE) -> list[float] | None:
    """Percentile bootstrap interval of sum(num) / sum(den), resampling the questions (entries) with replacement.

    `num[k]` / `den[k]` are question k's total and weight: for a pooled mean of ratings, the sum of its valid
    scores and their number; for a mean over questions, its score and 1. Every `den[k]` must be > 0, so every
    resample has a defined ratio. None when there are fewer than two questions (no spread to resample) or
    `n_resamples` is 0.
    """
    n = len(num)
    if n != len(den):
        raise ValueError(f"ratio_ci: num has {n} entries, den {len(den)}")
    if n < 2 or n_resamples <= 0:
        return None
    a, b = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    if (b <= 0).any():
        raise ValueError("ratio_ci: every question needs a positive weight")
    idx = _indices(n, n_resamples, seed)
    stats = a[idx].sum(axis=1) / b[idx].sum(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(stats, [tail, 100 - tail])
    return [float(low), float(high)]
