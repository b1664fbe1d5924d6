"""`run_row`'s JSON columns: a large text seen before is rebuilt from the marshal bytes of its first decoding (#38).

Invariant, for any JSON value: every call gives a value equal to `json.loads` of the text, with the same types and key
order, and a fresh object (changing one never shows in the next call); a changed text is decoded afresh."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from audit.store import database
from audit.store.database import _decoded

_scalars = st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False) | st.text(max_size=8)
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6),
                                                                                              inner, max_size=4),
                       max_leaves=30)


def _typed(v):
    """The value with every item's type spelled out (1 == 1.0 == True in plain equality) and key order kept."""
    if isinstance(v, dict):
        return ["dict", [(k, _typed(x)) for k, x in v.items()]]
    if isinstance(v, list):
        return ["list", [_typed(x) for x in v]]
    return [type(v).__name__, repr(v)]


@settings(max_examples=80, deadline=None)
@given(_values, st.integers(0, 3))
def test_every_call_equals_json_loads_and_is_a_fresh_object(value, pad):
    # padded past the size from which texts are kept, so the kept path is the one tested
    text = json.dumps({"pad": "x" * (database._DECODE_KEPT_FROM + pad), "value": value})
    first, second = _decoded(text), _decoded(text)
    assert text in database._DECODED
    for got in (first, second):
        assert _typed(got) == _typed(json.loads(text))
    assert first is not second
    second["value"] = "changed"
    assert _typed(_decoded(text)) == _typed(json.loads(text))


def test_a_changed_text_is_decoded_afresh_and_few_are_kept():
    pad = "x" * database._DECODE_KEPT_FROM
    texts = [json.dumps({"pad": pad, "n": i}) for i in range(database._DECODED.maxsize + 3)]
    for i, t in enumerate(texts):
        assert _decoded(t)["n"] == i
        assert _decoded(t)["n"] == i
    assert len(database._DECODED) <= database._DECODED.maxsize
    assert _decoded(json.dumps({"pad": pad, "n": 99}))["n"] == 99
    small = json.dumps({"n": 1})
    assert _decoded(small) == {"n": 1} and small not in database._DECODED
