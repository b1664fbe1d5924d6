"""The plain-Python paths of CHIMERA scoring give what the general ones gave: the strict variant's matchings against
scipy's `linear_sum_assignment` on random match matrices, the explicit answer dict against `dataclasses.asdict`,
and `add_nested` against the Mapping-generic sum; scoring the demo loads no SciPy."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import asdict, dataclass
from types import MappingProxyType

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from scoring.families.base import add_nested, sum_nested
from scoring.families.chimera import strict
from scoring.families.chimera.model import Relation
from scoring.judges.answer import answer_dict
from tests.conftest import ROOT

CE, SRC = "comb-element", "inspiration-src"


def scipy_matching(m: list[list[int]]) -> list[tuple[int, int]]:
    """The matching as strict.py computed it before the fast paths: scipy on every matrix."""
    if not m or not m[0]:
        return []
    a = np.array(m, dtype=int)
    if not a.any():
        return []
    rows, cols = linear_sum_assignment(a, maximize=True)
    return [(int(i), int(j)) for i, j in zip(rows, cols, strict=True) if a[i, j]]


matrices = st.integers(0, 6).flatmap(lambda n: st.integers(0, 6).flatmap(
    lambda k: st.lists(st.lists(st.sampled_from((0, 0, 1)), min_size=k, max_size=k), min_size=n, max_size=n)))


def entities_and_match(m: list[list[int]]):
    pred = [(CE, f"p{i}") for i in range(len(m))]
    gold = [(CE, f"g{j}") for j in range(len(m[0]) if m else 0)]
    ones = {(f"p{i}", f"g{j}") for i, row in enumerate(m) for j, v in enumerate(row) if v}
    return pred, gold, lambda t, pv, gv: (pv, gv) in ones


@settings(max_examples=400, deadline=None)
@given(matrices)
def test_max_matching_pairs_and_size_are_scipys(m):
    pred, gold, match = entities_and_match(m)
    want = scipy_matching(m)
    assert strict.max_matching(pred, gold, match) == want
    assert strict.matching_size(pred, gold, match) == len(want)


def test_matching_size_needs_an_augmenting_path():
    # p0 -> {g0, g1}, p1 -> {g0}: greedy p0-g0 leaves p1 unmatched; the maximum is 2
    pred, gold, match = entities_and_match([[1, 1], [1, 0]])
    assert strict.matching_size(pred, gold, match) == 2
    # a type mismatch is never an edge
    assert strict.matching_size([(SRC, "p0")], [(CE, "g0")], lambda *_: True) == 0


def scipy_alignment(pred, gold, match) -> list[tuple[int, int, int]]:
    """relation_alignment as it was: scipy on every weight matrix."""
    out = []
    for rtype in ("combination", "inspiration"):
        pi = [i for i, r in enumerate(pred) if r.type == rtype]
        gi = [j for j, r in enumerate(gold) if r.type == rtype]
        if not pi or not gi:
            continue
        w = np.array([[len(scipy_matching([[1 if match(CE, pv, gv) else 0 for _, gv in dict.fromkeys(gold[j].entities)]
                                           for _, pv in dict.fromkeys(pred[i].entities)]))
                       for j in gi] for i in pi])
        if not w.any():
            continue
        rows, cols = linear_sum_assignment(w, maximize=True)
        out += [(pi[r], gi[c], int(w[r, c])) for r, c in zip(rows, cols, strict=True) if w[r, c] > 0]
    return out


spans = st.sampled_from(("a", "b", "c", "d"))
relation = st.builds(lambda t, ss: Relation(t, tuple((CE, s) for s in ss)),
                     st.sampled_from(("combination", "inspiration")), st.lists(spans, min_size=1, max_size=3))
relations = st.lists(relation, max_size=3)


@settings(max_examples=300, deadline=None)
@given(relations, relations, st.sets(st.tuples(spans, spans)))
def test_relation_alignment_is_scipys(pred, gold, ones):
    def match(t, pv, gv):
        return (pv, gv) in ones

    assert strict.relation_alignment(pred, gold, match) == scipy_alignment(pred, gold, match)


@dataclass(frozen=True)
class FakeAnswer:
    value: str
    raw: str | None = None
    score: float | None = None
    cached: bool = False
    retries: int = 0
    extra: tuple | None = None


def asdict_answer(a) -> dict:
    return {k: v for k, v in asdict(a).items() if v not in (None, 0, False) or k == "value"}


@given(st.builds(FakeAnswer, st.sampled_from(("yes", "no", "invalid", "missing")), st.none() | st.text(max_size=3),
                 st.none() | st.sampled_from((0.0, 0.5, 1.0)), st.booleans(), st.integers(0, 2),
                 st.none() | st.just((1, 2))))
def test_answer_dict_is_asdicts(a):
    got = answer_dict(a)
    assert got == asdict_answer(a)
    assert list(got) == list(asdict_answer(a))  # same key order, so the stored JSON is the same bytes


def generic_add(total: dict, part, sign: int = 1) -> dict:
    for k, v in part.items():
        if isinstance(v, dict | MappingProxyType):
            generic_add(total.setdefault(k, {}), v, sign)
        else:
            total[k] = total.get(k, 0) + sign * v
    return total


leaf = st.integers(-5, 5) | st.sampled_from((0.5, -1.25)) | st.booleans()
counts = st.dictionaries(st.sampled_from(("tp", "fp", "fn")), leaf, max_size=3)
shape = st.dictionaries(st.sampled_from("xyz"), counts | st.dictionaries(st.sampled_from("uv"), counts, max_size=2),
                        max_size=3)


@given(st.lists(shape, max_size=5), st.sampled_from((1, -1)))
def test_add_nested_is_the_generic_sum(parts, sign):
    want: dict = {}
    for p in parts:
        generic_add(want, p, sign)
    got: dict = {}
    for i, p in enumerate(parts):  # a read-only mapping (not a dict) takes the generic path
        add_nested(got, MappingProxyType(p) if i % 2 else p, sign)
    assert got == want
    assert [type(v) for v in _leaves(got)] == [type(v) for v in _leaves(want)]  # 1 + 0.5 stays a float
    folded: dict = {}
    for p in parts:
        generic_add(folded, p)
    assert sum_nested(parts) == folded


def _leaves(d: dict) -> list:
    return [x for v in d.values() for x in (_leaves(v) if isinstance(v, dict) else [v])]


def test_scoring_the_demo_loads_no_scipy():
    code = ("import sys; from scoring.run import score; "
            "score('chimera', {'gold': 'data/chimera/eval.csv', 'pred': 'data/chimera/pred_mixed.jsonl'}, "
            "'replay:data/chimera/judge_mixed.jsonl'); print('scipy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
