"""`ui.state.links` writes each (key, value) pair once and joins them (issue 25: a 10,000-row link column): the
URLs are exactly what `urllib.parse.urlencode` of the merged settings and row parameters gives, for any text."""

from urllib.parse import urlencode

from hypothesis import given, settings
from hypothesis import strategies as st

import ui.state

_text = st.text(min_size=0, max_size=12)
_value = st.one_of(st.none(), _text, st.integers(-5, 10_000), st.booleans(), st.sampled_from([0.0, 1.0, 2.5]))
_keys = st.sampled_from(["run", "reviewer", "blind", "adj", "policy", "doc", "decision", "x y", "&=", "é"])


@settings(deadline=None, max_examples=300)  # the first example imports streamlit
@given(carried=st.dictionaries(_keys, _value, max_size=5),
       rows=st.lists(st.dictionaries(_keys, _value, max_size=4), max_size=6))
def test_links_equal_urlencode_of_the_merged_parameters(carried, rows):
    original = ui.state._carried
    ui.state._carried = lambda: carried
    try:
        got = ui.state.links("document", rows)
    finally:
        ui.state._carried = original
    want = [f"document?{urlencode({k: str(v) for k, v in {**carried, **p}.items() if v not in (None, '')})}"
            for p in rows]
    assert got == want
