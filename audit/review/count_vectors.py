"""Count vectors: a family's nested counts as a flat vector along fixed leaf paths, and back (the sample
estimators, the cross-fitted estimate and the benches read counts this way)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

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
    return flatten_rows([counts], paths)[0]


def flatten_rows(rows: Iterable[Mapping], paths: list[tuple]) -> np.ndarray:
    """`flatten` of each of `rows`, as the rows of one matrix (len(rows) x len(paths)). The paths are indexed once
    for all rows: flattening 10,000 retrieval queries one by one was most of `queue --next`'s time (#38)."""
    rows = list(rows)
    flat = row_flattener(paths)
    out = np.zeros((len(rows), len(paths)))
    for r, counts in enumerate(rows):
        flat(counts, out[r])
    return out


def row_flattener(paths: list[tuple]) -> Callable[..., np.ndarray]:
    """`flatten` at `paths` with the paths indexed once: the returned function flattens one counts mapping into
    `into` (a zeroed row) or a new vector."""
    tree: dict = {}  # key -> [index of the number at this path or None, the keys below it or None]
    first: dict[tuple, int] = {}
    for i, p in enumerate(paths):
        if first.setdefault(p, i) != i:
            continue  # a repeated path: the first holds the number, as `leaves.get(p)` filled every one
        node: list = [None, tree]
        for k in p:
            if node[1] is None:
                node[1] = {}
            node = node[1].setdefault(k, [None, None])
        node[0] = i
    dupes = [(first[p], i) for i, p in enumerate(paths) if first[p] != i]

    def flat(counts: Mapping, into: np.ndarray | None = None) -> np.ndarray:
        row = np.zeros(len(paths)) if into is None else into
        _fill(counts, tree, row)
        for f, i in dupes:
            row[i] = row[f]
        return row

    return flat


def _fill(counts: Mapping, tree: Mapping, row: np.ndarray) -> None:
    """The numbers of `counts` at the paths `tree` holds, written into `row`; keys no path names are not walked (one
    dict lookup per key, not a path tuple built for every leaf: a board's first read flattens 30,000 recounts)."""
    for k, v in counts.items():
        node = tree.get(k)
        if node is None:
            continue
        t = type(v)  # exact types first: the ABC check of `Mapping` on every number doubled the time
        if t is dict or (t is not int and t is not float and isinstance(v, Mapping)):
            if node[1] is not None:
                _fill(v, node[1], row)
        elif node[0] is not None and (t is int or t is float or isinstance(v, int | float)):
            row[node[0]] = v


def _number(v: object) -> float:
    """What `flatten` reads at a path: the number, or 0 for anything else (a mapping, a string, None)."""
    t = type(v)
    if t is int or t is float:
        return v  # type: ignore[return-value]
    return v if isinstance(v, int | float) and not isinstance(v, Mapping) else 0


def moved_leaves(a: Mapping, b: Mapping, prefix: tuple = ()) -> set[tuple]:
    """The paths at which `flatten` reads different numbers from `a` and from `b`, for any path list: a path one side
    lacks, or holds no number at, reads 0 there. (A board's plan stores these per document instead of recounting on
    read which counts a review can move, `audit.board.joint`.) Sub-mappings that compare equal are skipped whole:
    most of a recount equals the judge's counts."""
    out: set[tuple] = set()
    for k in dict.fromkeys([*a, *b]):
        x, y = a.get(k), b.get(k)
        tx, ty = type(x), type(y)
        if tx is ty and (tx is int or tx is float or tx is dict) and x == y:
            continue
        path = (*prefix, k)
        mx = tx is dict or (tx is not int and tx is not float and isinstance(x, Mapping))
        my = ty is dict or (ty is not int and ty is not float and isinstance(y, Mapping))
        if mx or my:
            out |= moved_leaves(x if mx else {}, y if my else {}, path)
        if _number(x) != _number(y):
            out.add(path)
    return out


def unflatten(vec: np.ndarray, paths: list[tuple]) -> dict:
    """The nested counts of `vec` at `paths` (floats; keys in the paths' order; a path listed twice holds its last
    number)."""
    return row_unflattener(paths)(vec)


def row_unflattener(paths: list[tuple]) -> Callable[[np.ndarray], dict]:
    """`unflatten` at `paths` with the nesting worked out once: a numerical gradient rebuilds the counts from a
    vector hundreds of times per board render."""
    root: dict = {}
    for i, p in enumerate(paths):
        node = root
        for k in p[:-1]:
            node = node.setdefault(k, {})
        node[p[-1]] = i

    def compiled(node: dict) -> tuple:
        return tuple((k, compiled(v) if type(v) is dict else v) for k, v in node.items())

    tree = compiled(root)

    def build(vec: np.ndarray) -> dict:
        values = np.asarray(vec, dtype=float).tolist()
        if len(values) != len(paths):
            raise ValueError(f"a vector of {len(values)} numbers for {len(paths)} paths")

        def walk(items: tuple) -> dict:
            return {k: walk(v) if type(v) is tuple else values[v] for k, v in items}
        return walk(tree)
    return build
