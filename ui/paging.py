"""Long lists drawn a page at a time (a paper with 60 decision cards is 9,000 px tall in one piece)."""

from __future__ import annotations

import streamlit as st

PAGE_SIZE = 10


def page_bounds(n_items: int, page: int, size: int = PAGE_SIZE) -> tuple[int, int]:
    """[start, stop) of page `page` (0-based, clamped to the pages there are).

    >>> page_bounds(25, 0), page_bounds(25, 2), page_bounds(25, 9), page_bounds(0, 0)
    ((0, 10), (20, 25), (20, 25), (0, 0))
    """
    last = max(0, (n_items - 1) // size)
    start = min(max(page, 0), last) * size
    return start, min(start + size, n_items)


def page_label(n_items: int, page: int, size: int = PAGE_SIZE) -> str:
    """What the page selector shows for page `page`, counts with thousands separators.

    >>> page_label(25, 2), page_label(17217, 1721)
    ('21 – 25 of 25', '17,211 – 17,217 of 17,217')
    """
    start, stop = page_bounds(n_items, page, size)
    return f"{start + 1:,} – {stop:,} of {n_items:,}"


def page_picker(n_items: int, key: str, what: str = "decisions", size: int = PAGE_SIZE) -> tuple[int, int]:
    """A page selector (only when there is more than one page); returns the [start, stop) to draw."""
    if n_items <= size:
        return 0, n_items
    page = st.selectbox(f"Showing {what}", range((n_items + size - 1) // size), key=key,
                        format_func=lambda p: page_label(n_items, p, size))
    return page_bounds(n_items, page or 0, size)
