"""Invisible characters made visible: every surface that shows text from the data (pages, the review card, the HTML
report) passes it through `visible`, so a bidi override in a note cannot reverse what follows it ("gnp.exe" read as
"exe.png") and a zero-width character cannot hide in a name."""

from __future__ import annotations

import unicodedata

_INVISIBLE = {"\u200b": "ZWSP", "\u200c": "ZWNJ", "\u200d": "ZWJ", "\u2060": "WJ", "\ufeff": "BOM",
              "\u202a": "LRE", "\u202b": "RLE", "\u202c": "PDF", "\u202d": "LRO", "\u202e": "RLO",
              "\u2066": "LRI", "\u2067": "RLI", "\u2068": "FSI", "\u2069": "PDI", "\u200e": "LRM", "\u200f": "RLM",
              "\u061c": "ALM"}


def visible(text: object) -> str:
    """The text with zero-width, bidi-override and other control characters shown as ⟨NAME⟩.

    >>> visible("a\\u202egnp.exe")
    'a⟨RLO⟩gnp.exe'
    """
    out = []
    for c in str(text):
        if c in _INVISIBLE:
            out.append(f"⟨{_INVISIBLE[c]}⟩")
        elif c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co"):
            out.append(f"⟨U+{ord(c):04X}⟩")
        else:
            out.append(c)
    return "".join(out)
