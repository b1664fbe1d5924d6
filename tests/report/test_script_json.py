"""`script_json` (the report's embedded data) writes what JSON's own walk writes when nothing is NaN or infinite,
and null for those when something is: both of its paths give the same text for the same finite data, keys of any
JSON-able type included (#38: the walk in Python over a plan's 32,000 blocks took 0.3 s of a report)."""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from audit.outputs.report import _finite, script_json

# text keys that never read as another key's JSON ("1", "true", "null"): JSON would write both, a dict one
_keys = st.one_of(st.text(alphabet="abxyé<&", max_size=4), st.integers(-3, 3), st.booleans(), st.none(),
                  st.sampled_from([0.5, 2.0]))
_leaves = st.one_of(st.none(), st.booleans(), st.integers(-10, 10), st.text(max_size=6),
                    st.floats(allow_nan=True, allow_infinity=True))
_data = st.recursive(_leaves, lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner),
                                                      st.dictionaries(_keys, inner, max_size=4)), max_leaves=20)


def _escaped(text: str) -> str:
    for c in "<>&\u2028\u2029":
        text = text.replace(c, f"\\u{ord(c):04x}")
    return text


def _nulled(obj):
    """The reference: non-finite floats as None, keys as JSON writes them."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k if isinstance(k, str) else json.dumps(k): _nulled(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_nulled(v) for v in obj]
    return obj


@settings(max_examples=300, deadline=None)
@given(_data)
def test_script_json_is_json_with_non_finite_numbers_as_null(obj):
    text = script_json(obj)
    assert text == _escaped(json.dumps(_nulled(obj), ensure_ascii=False, allow_nan=False))
    assert text == _escaped(json.dumps(_finite(obj), ensure_ascii=False, allow_nan=False))  # the slow path agrees
    assert "<" not in text
