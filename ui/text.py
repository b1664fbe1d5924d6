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

from audit.outputs.visible import visible

_PUNCT = re.compile("([" + re.escape(string.punctuation) + "])")
_ACCENTS = {"`": "\u0300", "'": "\u0301", "^": "\u0302", "~": "\u0303", "=": "\u0304", "u": "\u0306",
            ".": "\u0307", '"': "\u0308", "r": "\u030a", "H": "\u030b", "v": "\u030c", "c": "\u0327",
            "k": "\u0328"}
_LETTER = r"(?:\\i(?![A-Za-z])|[A-Za-z])"
_SYMBOL_ACCENT = re.compile(r"""\{?\\([`'^~=."])(?:\{\s*(""" + _LETTER + r""")\s*\}|(""" + _LETTER + r"""))\}?""")
_LETTER_ACCENT = re.compile(r"\{?\\([uvHrck])(?:\{\s*(" + _LETTER + r")\s*\}|\s+([A-Za-z]))\}?")
_TEX_LETTERS = {"ss": "ß", "o": "ø", "O": "Ø", "ae": "æ", "AE": "Æ", "l": "ł", "L": "Ł", "aa": "å", "AA": "Å",
                "i": "ı"}
_TEX_LETTER = re.compile(r"\{\\(ss|ae|AE|aa|AA|o|O|l|L|i)\}|\\(ss|ae|AE|aa|AA)(?![A-Za-z])")


def readable(text: object) -> str:
    r"""Source text (abstracts, queries) as people read it: TeX accent commands written into the data (arXiv's
    `V\~oro`, `P\'{o}lya`, `{\"u}`) shown as the letters they stand for; nothing else changes.

    >>> readable(r"V\~oro, P\'{o}lya, M{\"u}ller, \c{c}a, Erd\H{o}s, {\ss}, na\"{\i}ve, \cite{x}, 5\%")
    'Võro, Pólya, Müller, ça, Erdős, ß, naïve, \\cite{x}, 5\\%'
    """
    def accent(m: re.Match) -> str:
        letter = m.group(2) or m.group(3)
        return unicodedata.normalize("NFC", ("i" if letter == "\\i" else letter) + _ACCENTS[m.group(1)])

    out = _LETTER_ACCENT.sub(accent, _SYMBOL_ACCENT.sub(accent, str(text)))
    return _TEX_LETTER.sub(lambda m: _TEX_LETTERS[m.group(1) or m.group(2)], out)


def visible_rows(rows: list[dict]) -> list[dict]:
    """Table rows for `st.dataframe` with every text cell `visible` (a table shows text literally, but an RLO in
    a cell still reorders it)."""
    return [{k: visible(v) if isinstance(v, str) else v for k, v in r.items()} for r in rows]


_AUTOLINK = re.compile(r"(?i)\b(?:https?|ftp|mailto|xmpp)(?=:)|\bwww(?=\.)|@")
_WJ = "\u2060"
"""WORD JOINER: invisible, zero-width, no line break; it ends a URL scheme, `www` or an address's `@`."""


def no_autolink(text: str) -> str:
    """`text` with every place where Streamlit's Markdown would start a link by itself (GFM autolink literals:
    `http://`, `https://`, `www.`, `mailto:`, `a@b.org`) broken by an invisible word joiner. Escaping does not
    stop them: the autolink pass runs over the text after escapes are resolved.

    >>> no_autolink("see http://x.org, WWW.y.org, a@b.org").replace("\u2060", "|")
    'see http|://x.org, WWW|.y.org, a@|b.org'
    """
    return _AUTOLINK.sub(lambda m: m.group(0) + _WJ, text)


def md_literal(text: object) -> str:
    """`text` as a Markdown fragment that renders literally (safe to embed in our own Markdown): no markup and
    no link made from a URL or an address in it (`no_autolink`)."""
    return _PUNCT.sub(r"\\\1", no_autolink(visible(text))).replace("\n", "  \n")


def show_text(text: object, kind: str = "text") -> None:
    """Render data as literal text: kind = text | caption | info | success | warning | error."""
    literal = md_literal(text)
    {"text": st.markdown, "caption": st.caption, "info": st.info, "success": st.success, "warning": st.warning,
     "error": st.error}[kind](literal)


def show_error(text: object) -> None:
    show_text(text, "error")
