"""Abstract text with gold and predicted spans highlighted, every piece of text HTML-escaped."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

LEGEND = ('<span class="rj-gold">gold span</span> &nbsp; <span class="rj-pred">predicted span</span> &nbsp; '
          '<span class="rj-gold rj-pred">both</span>')
STYLE = """<style>
.rj-text {line-height: 1.9; font-size: 1rem;}
.rj-gold {background: #fff1a8; border-bottom: 3px solid #d4a900;}
.rj-pred {outline: 2px dashed #2f6fdd; outline-offset: 1px; border-radius: 2px;}
.rj-miss {color: #a33;}
</style>"""


def locate(text: str, span: str) -> list[tuple[int, int]]:
    """Every case-insensitive, whitespace-tolerant occurrence of `span` in `text`."""
    words = span.split()
    if not words:
        return []
    pattern = r"\s+".join(re.escape(w) for w in words)
    return [(m.start(), m.end()) for m in re.finditer(pattern, text, flags=re.IGNORECASE)]


def highlight_html(text: str, gold: Sequence[tuple[int, int, str]], pred: Sequence[tuple[int, int, str]]) -> str:
    """HTML for `text` with gold (start, end, title) and predicted (start, end, title) ranges marked."""
    bounds = {0, len(text)}
    for s, e, _ in (*gold, *pred):
        bounds.update((max(0, min(s, len(text))), max(0, min(e, len(text)))))
    cuts = sorted(bounds)
    out = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        if a == b:
            continue
        g = [t for s, e, t in gold if s <= a and b <= e]
        p = [t for s, e, t in pred if s <= a and b <= e]
        piece = html.escape(text[a:b])
        classes = (["rj-gold"] if g else []) + (["rj-pred"] if p else [])
        if classes:
            title = html.escape("; ".join([*(f"gold {t}" for t in g), *(f"predicted {t}" for t in p)]), quote=True)
            out.append(f'<span class="{" ".join(classes)}" title="{title}">{piece}</span>')
        else:
            out.append(piece)
    return STYLE + '<div class="rj-text">' + "".join(out) + "</div>"
