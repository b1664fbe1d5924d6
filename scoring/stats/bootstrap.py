"""The one bootstrap: seeded percentile intervals that resample whole clusters (documents, questions).

Decisions of one document (ratings of one question) are not independent, so resamples draw clusters, not items
(Davison & Hinkley 1997, Bootstrap Methods and their Application, section 3.8). Every statistic bootstrapped here
is a function of a sum over clusters (a confusion table for kappa, a (total, weight) pair for a mean), so each
cluster is summarised by one vector and a resample is the sum of the vectors of G clusters drawn with replacement
(G = number of clusters): `resampled_sums`. `percentile_interval` reads the interval off the resampled statistic.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Sequence
from functools import lru_cache

import numpy as np

CONFIDENCE = 0.95
N_RESAMPLES = 2000
SEED = 0


def resampled_sums(per_cluster: np.ndarray, n_resamples: int, seed: int | None) -> np.ndarray:
    """Sums of the per-cluster vectors (shape (G, d)) over ``n_resamples`` cluster-bootstrap resamples: (R, d).

    Clusters with identical vectors are interchangeable, so they are pooled into "types" first, in a canonical
    order: the result depends only on the multiset of cluster vectors (not on their order or names). Vectors of one
    or two numbers (a ratio's total and weight) are added up over cluster indices drawn with ``Generator.integers``
    (a seeded draw is cached: it depends on the sizes and the seed alone). Wider ones (confusion tables) are added
    up as draw counts per type: from a multinomial when there are few types (e.g. clusters that are single items),
    else counted from drawn cluster indices.

    Example: three one-item clusters holding 0, 0 and 1 -- a resample holds 0 to 3 ones.
        >>> sums = resampled_sums(np.array([[0], [0], [1]]), 1000, seed=0)
        >>> sums.shape, sorted(set(sums[:, 0].tolist()))
        ((1000, 1), [0.0, 1.0, 2.0, 3.0])
    """
    types, type_counts = _pooled(np.ascontiguousarray(per_cluster))
    n_clusters, n_types = len(per_cluster), len(types)
    type_of = np.repeat(np.arange(n_types), type_counts)  # canonical cluster order, sorted by vector
    if types.shape[1] <= 2:  # adding the drawn numbers up costs R x G per number: the cheapest way here
        columns = types.astype(np.float64)[type_of].T
        sums = np.empty((n_resamples, len(columns)))
        for start, drawn in _drawn_clusters(n_clusters, n_resamples, seed):
            for j, column in enumerate(columns):
                sums[start : start + len(drawn), j] = column[drawn].sum(axis=1)
        return sums
    if 3 * n_types < n_clusters:
        draws = np.random.default_rng(seed).multinomial(n_clusters, type_counts / n_clusters, size=n_resamples)
    else:
        draws = np.empty((n_resamples, n_types), dtype=np.int64)
        for start, drawn in _drawn_clusters(n_clusters, n_resamples, seed):
            r = len(drawn)
            offsets = (np.arange(r)[:, None] * n_types + type_of[drawn]).ravel()
            draws[start : start + r] = np.bincount(offsets, minlength=r * n_types).reshape(r, n_types)
    return draws.astype(np.float64) @ types.astype(np.float64)


def _pooled(per_cluster: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct cluster vectors in a canonical (sorted) order, and how many clusters hold each."""
    pooled: dict[bytes, int] = {}  # keyed on the raw bytes: much faster than np.unique(axis=0)
    for key in map(bytes, per_cluster):
        pooled[key] = pooled.get(key, 0) + 1
    keys = sorted(pooled)
    types = np.frombuffer(b"".join(keys), dtype=per_cluster.dtype).reshape(len(keys), per_cluster.shape[1])
    return types, np.array([pooled[key] for key in keys], dtype=np.int64)


_MAX_DRAWN = 2_000_000
"""Cluster indices drawn at a time (bounds memory)."""
_MAX_CACHED = 500_000
"""A seeded draw of at most this many cluster indices (4 MB) is cached."""


def _drawn_clusters(n_clusters: int, n_resamples: int, seed: int | None) -> Iterator[tuple[int, np.ndarray]]:
    """(first resample, cluster indices drawn with replacement, shape (r, n_clusters)) in chunks of at most
    `_MAX_DRAWN` indices, all from one ``numpy.random.default_rng(seed)`` stream."""
    if seed is not None and n_clusters * n_resamples <= _MAX_CACHED:
        yield 0, _cached_draw(n_clusters, n_resamples, seed)
        return
    rng = np.random.default_rng(seed)
    chunk = max(1, _MAX_DRAWN // n_clusters)
    for start in range(0, n_resamples, chunk):
        yield start, rng.integers(0, n_clusters, size=(min(chunk, n_resamples - start), n_clusters))


@lru_cache(maxsize=8)
def _cached_draw(n_clusters: int, n_resamples: int, seed: int) -> np.ndarray:
    """The draw depends on the sizes and the seed alone, and every statistic over as many clusters (every ideation
    cell of a run) reuses it: drawing it again took most of a small bootstrap's time."""
    drawn = np.random.default_rng(seed).integers(0, n_clusters, size=(n_resamples, n_clusters))
    drawn.setflags(write=False)
    return drawn


def percentile_interval(values: np.ndarray, confidence: float = CONFIDENCE) -> list[float]:
    """``[low, high]``: the (1 - confidence) / 2 and (1 + confidence) / 2 quantiles of resampled statistics.

    >>> [round(x, 6) for x in percentile_interval(np.arange(101), confidence=0.9)]
    [5.0, 95.0]
    """
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return [float(low), float(high)]


def ratio_interval(num: Sequence[float], den: Sequence[float], *, n_resamples: int = N_RESAMPLES, seed: int = SEED,
                   confidence: float = CONFIDENCE) -> list[float] | None:
    """Percentile bootstrap interval of sum(num) / sum(den), resampling the clusters (entries) with replacement.

    ``num[k]`` / ``den[k]`` are cluster k's total and weight: for a pooled mean of ratings, the sum of its valid
    scores and their number; for a mean over clusters, its value and 1. Every ``den[k]`` must be > 0, so every
    resample has a defined ratio. None when there are fewer than two clusters (no spread to resample) or
    ``n_resamples`` is 0.

    Example: two questions, one with ten ratings of 5, one with a single 1 -- a resample may hold either alone.
        >>> ratio_interval([50.0, 1.0], [10, 1])
        [1.0, 5.0]
    """
    n = len(num)
    if n != len(den):
        raise ValueError(f"ratio_interval: num has {n} entries, den {len(den)}")
    if n < 2 or n_resamples <= 0:
        return None
    per_cluster = np.column_stack([np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)])
    if (per_cluster[:, 1] <= 0).any():
        raise ValueError("ratio_interval: every cluster needs a positive weight")
    if seed is None:  # a fresh random draw each time: nothing to keep
        sums = resampled_sums(per_cluster, n_resamples, seed)
        return percentile_interval(sums[:, 0] / sums[:, 1], confidence)
    key = (per_cluster.tobytes(), n, n_resamples, seed, confidence)
    found = _INTERVALS.get(key)
    if found is None:
        sums = resampled_sums(per_cluster, n_resamples, seed)
        found = _INTERVALS[key] = tuple(percentile_interval(sums[:, 0] / sums[:, 1], confidence))
        while len(_INTERVALS) > _KEEP_INTERVALS:
            _INTERVALS.popitem(last=False)
    else:
        _INTERVALS.move_to_end(key)
    return list(found)


_INTERVALS: OrderedDict[tuple, tuple[float, ...]] = OrderedDict()
"""`ratio_interval`'s answers keyed by everything they depend on (the clusters' numbers exactly, the resamples, the
seed, the confidence): the same inputs give the same interval, so an answer is kept rather than resampled again. An
ideation run's metrics bootstrap 30 cells over its questions after every review, which changes one or two of them:
at 500 questions that was 0.3 s of CPU per review (#38)."""
_KEEP_INTERVALS = 512
