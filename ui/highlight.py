"""Document text with gold and predicted spans highlighted, every piece of text HTML-escaped.

Gold spans get a background, predicted spans a dashed outline; both take the colour of their type (entity type,
field) so types are told apart at a glance. A range never swallows the whitespace around a span: offsets that
include leading or trailing spaces are trimmed to the span's first and last visible character, and a piece of a
span cut where another range starts keeps its edge spaces outside the mark. TeX accents in the source text are
shown as letters (`ui.text.readable`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence

from ui.text import readable

PALETTE = (("#fff1a8", "#b38f00"), ("#cfe6ff", "#1f5fbf"), ("#ffd6e7", "#b0306a"), ("#d5f5d0", "#2e7d32"),
           ("#eadcff", "#6a3fb5"), ("#ffe2c4", "#b35c00"))
"""(background for gold, outline for predicted) per type, in order of first appearance."""
STYLE = """<style>
.rj-text {line-height: 1.95; font-size: 1rem;}
.rj-gold {border-bottom: 3px solid rgba(0,0,0,.25);}
.rj-pred {outline: 2px dashed #2f6fdd; outline-offset: -1px; border-radius: 2px;}
.rj-miss {color: #a33;}
.rj-legend span {margin-right: 0.9em; padding: 0 4px;}
</style>"""


def type_colours(types: Sequence[str]) -> dict[str, tuple[str, str]]:
    """A colour pair per type (stable for a given order of types)."""
    return {t: PALETTE[i % len(PALETTE)] for i, t in enumerate(dict.fromkeys(types))}


def legend_html(colours: Mapping[str, tuple[str, str]]) -> str:
    """Legend: one gold swatch and one predicted swatch per type."""
    e = html.escape
    parts = []
    for t, (bg, line) in colours.items():
        parts.append(f'<span class="rj-gold" style="background:{bg}">gold {e(t)}</span>'
                     f'<span class="rj-pred" style="outline-color:{line}">predicted {e(t)}</span>')
    return STYLE + '<div class="rj-legend">' + "".join(parts) + "</div>"


LEGEND = legend_html({"span": PALETTE[0]})


def locate(text: str, span: str) -> list[tuple[int, int]]:
    """Every case-insensitive, whitespace-tolerant occurrence of `span` in `text`."""
    words = span.split()
    if not words:
        return []
    pattern = r"\s+".join(re.escape(w) for w in words)
    return [(m.start(), m.end()) for m in re.finditer(pattern, text, flags=re.IGNORECASE)]


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    """(start, end) clipped to the text and shrunk past leading / trailing whitespace."""
    start, end = max(0, min(start, len(text))), max(0, min(end, len(text)))
    end = max(start, end)
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def highlight_html(text: str, gold: Sequence[tuple[int, int, str]], pred: Sequence[tuple[int, int, str]],
                   colours: Mapping[str, tuple[str, str]] | None = None) -> str:
    """HTML for `text` with gold (start, end, type) and predicted (start, end, type) ranges marked, coloured by
    type (`colours`, default: `type_colours` of the types in order)."""
    gold = [(*trim(text, s, e), t) for s, e, t in gold]
    pred = [(*trim(text, s, e), t) for s, e, t in pred]
    colours = dict(colours or type_colours([t for *_, t in (*gold, *pred)]))
    bounds = {0, len(text)}
    for s, e, _ in (*gold, *pred):
        bounds.update((s, e))
    cuts = sorted(bounds)
    out = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        if a == b:
            continue
        g = [t for s, e, t in gold if s <= a and b <= e]
        p = [t for s, e, t in pred if s <= a and b <= e]
        raw = text[a:b]
        classes = (["rj-gold"] if g else []) + (["rj-pred"] if p else [])
        if classes:
            # a piece cut where another range starts can begin or end with a space: keep it outside the mark
            inner = raw.strip()
            lead, tail = raw[:len(raw) - len(raw.lstrip())], raw[len(raw.rstrip()):]
            piece = html.escape(readable(inner))
            style = []
            if g:
                style.append(f"background:{colours.get(g[0], PALETTE[0])[0]}")
            if p:
                style.append(f"outline-color:{colours.get(p[0], PALETTE[0])[1]}")
            title = html.escape("; ".join([*(f"gold {t}" for t in g), *(f"predicted {t}" for t in p)]), quote=True)
            out.append(html.escape(lead) + f'<span class="{" ".join(classes)}" style="{";".join(style)}" '
                       f'title="{title}">{piece}</span>' + html.escape(tail) if inner else html.escape(raw))
        else:
            out.append(html.escape(readable(raw)))
    return STYLE + '<div class="rj-text">' + "".join(out) + "</div>"
