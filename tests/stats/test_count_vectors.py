"""`flatten_rows` (one matrix for many documents' counts, #38) gives what flattening each document alone gave."""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.review.count_vectors import flatten, flatten_rows, leaf_paths, moved_leaves, unflatten


def _reference(counts: Mapping, paths: list[tuple]) -> np.ndarray:
    """The flatten every estimator used before #38: every leaf collected, then looked up path by path."""
    leaves: dict[tuple, object] = {}

    def walk(c: Mapping, prefix: tuple) -> None:
        for k, v in c.items():
            if isinstance(v, dict | Mapping):
                walk(v, (*prefix, k))
            else:
                leaves[(*prefix, k)] = v

    walk(counts, ())
    vec = np.zeros(len(paths))
    for i, p in enumerate(paths):
        v = leaves.get(p)
        if isinstance(v, int | float):
            vec[i] = v
    return vec


_leaf = st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=False), st.booleans(), st.none(), st.text(max_size=2))
_keys = st.sampled_from(["a", "b", "mean", "rank", "hits@1"])
_counts = st.recursive(_leaf, lambda inner: st.dictionaries(_keys, inner, max_size=4), max_leaves=20).filter(
    lambda c: isinstance(c, dict))


@settings(max_examples=200, deadline=None)
@given(st.lists(_counts, min_size=1, max_size=5), st.data())
def test_rows_equal_each_document_flattened_alone(rows: list[dict], data: st.DataObject) -> None:
    known = list(dict.fromkeys(p for r in rows for p in leaf_paths(r)))
    # paths the counts lack, paths to a sub-mapping, and a path listed twice
    extra = [("missing",), ("a",), *known[:1]]
    paths = data.draw(st.permutations(known + extra))
    got = flatten_rows(rows, paths)
    assert got.shape == (len(rows), len(paths))
    for r, counts in zip(rows, got, strict=True):
        np.testing.assert_array_equal(counts, _reference(r, paths))
        np.testing.assert_array_equal(flatten(r, paths), _reference(r, paths))


def test_a_mapping_that_is_no_dict_is_walked_and_its_numbers_kept() -> None:
    counts = {"all": MappingProxyType({"n": 3, "rr": 0.5, "flag": True, "name": "x"}), "n": None}
    paths = [("all", "n"), ("all", "rr"), ("all", "flag"), ("all", "name"), ("n",), ("all", "n")]
    np.testing.assert_array_equal(flatten_rows([counts], paths)[0], [3.0, 0.5, 1.0, 0.0, 0.0, 3.0])


@settings(max_examples=300, deadline=None)
@given(_counts, _counts, st.data())
def test_moved_leaves_are_the_paths_where_the_flattened_numbers_differ(a: dict, b: dict, data: st.DataObject) -> None:
    """For any path list, the paths `moved_leaves` names are exactly those where `flatten` reads a different number
    (what a board plan stores instead of recounting on read)."""
    known = list(dict.fromkeys([*leaf_paths(a), *leaf_paths(b)]))
    paths = data.draw(st.permutations([*known, ("missing",), ("a",), *known[:1]]))
    moved = moved_leaves(a, b)
    differ = flatten(a, paths) != flatten(b, paths)
    assert [p in moved for p in paths] == differ.tolist()
    assert moved <= set(known)  # nothing named that neither side holds


def _unflatten_reference(vec: np.ndarray, paths: list[tuple]) -> dict:
    """`unflatten` as it was written before it was compiled per path list (#36)."""
    out: dict = {}
    for value, p in zip(vec, paths, strict=True):
        node = out
        for k in p[:-1]:
            node = node.setdefault(k, {})
        node[p[-1]] = float(value)
    return out


@settings(max_examples=300, deadline=None)
@given(_counts, st.data())
def test_unflatten_rebuilds_the_counts_of_the_former_definition_key_order_included(counts: dict,
                                                                                    data: st.DataObject) -> None:
    paths = data.draw(st.permutations(leaf_paths(counts)))
    paths = paths + paths[: data.draw(st.integers(0, 2))]  # a path listed twice holds its last number
    vec = np.array(data.draw(st.lists(st.floats(-1e6, 1e6), min_size=len(paths), max_size=len(paths))))
    got, want = unflatten(vec, paths), _unflatten_reference(vec, paths)
    assert json.dumps(got) == json.dumps(want)  # the same numbers under the same keys in the same order
    assert unflatten(vec.astype(int), paths) == _unflatten_reference(vec.astype(int), paths)
