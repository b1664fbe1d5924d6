"""`st.cache_data` applied at a function's first call instead of at import: a view module that caches stays
importable outside a Streamlit run (`python -m audit report` reads the family's report panel from it) without
Streamlit's "No runtime found" warning on stderr."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import streamlit as st


def cache_data(**options: Any) -> Callable[[Callable], Callable]:
    """`@cache_data(...)`: as `@st.cache_data(...)`, the cache made when the function is first called."""
    def wrap(fn: Callable) -> Callable:
        cached: Callable | None = None

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            nonlocal cached
            if cached is None:
                cached = st.cache_data(**options)(fn)
            return cached(*args, **kwargs)
        return call
    return wrap
