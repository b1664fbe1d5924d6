"""Count vectors: a family's nested counts as a flat vector along fixed leaf paths, and back (the sample
estimators, the cross-fitted estimate and the benches read counts this way)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def leaf_paths(counts: Mapping, prefix: tuple = ()) -> list[tuple]:
    """Paths to the numbers of nested counts, in the counts' own key order: `unflatten` rebuilds that order, and a
    metric may read it (ideation's headline is its first system's)."""
    out = []
    for k in counts:
        v = counts[k]
        if isinstance(v, Mapping):
            out += leaf_paths(v, (*prefix, k))
        else:
            out.append((*prefix, k))
    return out


def flatten(counts: Mapping, paths: list[tuple]) -> np.ndarray:
    """The numbers of `counts` at `paths` (0 where a path holds no number); one walk over the counts, not one per
    path (a retrieval query has hundreds of paths)."""
    leaves: dict[tuple, object] = {}
    _leaves(counts, (), leaves)
    vec = np.zeros(len(paths))
    for i, p in enumerate(paths):
        v = leaves.get(p)
        if isinstance(v, int | float):
            vec[i] = v
    return vec


def _leaves(counts: Mapping, prefix: tuple, out: dict[tuple, object]) -> None:
    for k, v in counts.items():
        if isinstance(v, dict | Mapping):
            _leaves(v, (*prefix, k), out)
        else:
            out[(*prefix, k)] = v


def unflatten(vec: np.ndarray, paths: list[tuple]) -> dict:
    out: dict = {}
    for value, p in zip(vec, paths, strict=True):
        node = out
        for k in p[:-1]:
            node = node.setdefault(k, {})
        node[p[-1]] = float(value)
    return out
