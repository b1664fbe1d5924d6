"""Data shown by the dashboard is text, never Markdown: one helper, used by every page.

Streamlit renders `st.markdown`, `st.caption`, `st.warning`, `st.error`, ... as Markdown (links, images, colour
directives, `:material/...:` icons). Anything that comes from data (spans, file names, ids, run names, notes,
values reflected from the URL) goes through `md_literal` (every ASCII punctuation character backslash-escaped, as
CommonMark allows, so nothing is interpreted) or `show_text`. Invisible and direction-changing characters are made
visible (`visible`), so a span cannot hide or reorder text on a review card.
"""

from __future__ import annotations

import re
import string
import unicodedata

import streamlit as st

_PUNCT = re.compile("([" + re.escape(string.punctuation) + "])")
_INVISIBLE = {"\u200b": "ZWSP", "\u200c": "ZWNJ", "\u200d": "ZWJ", "\u2060": "WJ", "\ufeff": "BOM",
              "\u202a": "LRE", "\u202b": "RLE", "\u202c": "PDF", "\u202d": "LRO", "\u202e": "RLO",
              "\u2066": "LRI", "\u2067": "RLI", "\u2068": "FSI", "\u2069": "PDI", "\u200e": "LRM", "\u200f": "RLM",
              "\u061c": "ALM"}


def visible(text: object) -> str:
    """The text with zero-width, bidi-override and other control characters shown as ⟨NAME⟩."""
    out = []
    for c in str(text):
        if c in _INVISIBLE:
            out.append(f"⟨{_INVISIBLE[c]}⟩")
        elif c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co"):
            out.append(f"⟨U+{ord(c):04X}⟩")
        else:
            out.append(c)
    return "".join(out)


def md_literal(text: object) -> str:
    """`text` as a Markdown fragment that renders literally (safe to embed in our own Markdown)."""
    return _PUNCT.sub(r"\\\1", visible(text)).replace("\n", "  \n")


def show_text(text: object, kind: str = "text") -> None:
    """Render data as literal text: kind = text | caption | info | success | warning | error."""
    literal = md_literal(text)
    {"text": st.markdown, "caption": st.caption, "info": st.info, "success": st.success, "warning": st.warning,
     "error": st.error}[kind](literal)


def show_error(text: object) -> None:
    show_text(text, "error")
