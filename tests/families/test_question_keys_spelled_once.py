"""`FamilyBase.question_keys` spells each distinct (kind, type, right) once (#38): for every family that keeps the
default question key (a family with its own is asked per decision), and any decisions (every kind a family has, an
unknown one, sides of any text, a side that is not a string, a symmetric scheme), the batch's keys and each decision's
own equal the rule spelled plainly (the hash of kind, type and the sides, sorted where the kind is symmetric)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.families import TASKS, get_task
from scoring.families.base import FamilyBase, content_hash

DEFAULT_KEYED = [get_task(n) for n in TASKS if type(get_task(n)).question_key is FamilyBase.question_key]


class _WithSymmetricScheme(type(get_task("retrieval"))):  # the default key's sorted sides, which no family uses yet
    label_schemes = {"pair": get_task("chimera").label_schemes["entity_pair"], **get_task("retrieval").label_schemes}


FAMILIES = [*DEFAULT_KEYED, _WithSymmetricScheme()]

_side = st.text(max_size=5) | st.sampled_from(["a", "b", "ü", '"q"']) | st.integers(0, 3)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(FAMILIES), st.data())
def test_keys_equal_each_decisions_own_key(fam, data):
    kinds = [*fam.label_schemes, "unknown-kind"]
    decisions = data.draw(st.lists(st.fixed_dictionaries({
        "kind": st.sampled_from(kinds), "type": st.sampled_from(["t", "u", "ü"]) | st.integers(0, 1),
        "left": _side, "right": _side}), max_size=12))
    try:
        each = [_reference_key(fam, d) for d in decisions]
    except TypeError:  # sides of a symmetric kind that cannot be sorted: the batch refuses them too
        with pytest.raises(TypeError):
            fam.question_keys({}, decisions)
        return
    assert fam.question_keys({}, decisions) == each
    assert [fam.question_key({}, d) for d in decisions] == each


def _reference_key(fam, d) -> str:
    """The default question key as `question_key` spelled it before #38: the hash of [kind, type, left, right],
    the two sides sorted for a symmetric kind whose labels name no side."""
    scheme = fam.label_schemes.get(d["kind"])
    sides = [d["left"], d["right"]]
    if scheme is not None and scheme.symmetric and not scheme.mirror:
        sides.sort()
    return content_hash([d["kind"], d["type"], *sides])


def test_retrieval_keeps_the_default_key():
    assert "retrieval" in [f.name for f in DEFAULT_KEYED]
