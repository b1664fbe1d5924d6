"""Numbers as every surface shows them (cards, tables, the change strip, the CLI): one rule for a value in its unit
and one for a change, so a score never reads "2091.0000" here and "2091" there, nor a change "+0.0000"."""

from __future__ import annotations

import math

from scoring.nouns import Noun

EMPTY = "–"


def is_missing(v: object) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def format_value(v: object, unit: str = "score") -> str:
    """A number as people read it: a score with 4 decimals, a count or a whole rank as an integer (a count stored
    as a float too), a share as a percentage; missing as `–`.

    >>> [format_value(x, u) for x, u in ((0.96451, "score"), (1.0, "score"), (2091.0, "count"), (140.0, "rank"),
    ...                                  (140.5, "rank"), (0.0, "share"), (0.0705, "share"), (None, "score"))]
    ['0.9645', '1.0000', '2091', '140', '140.5', '0 %', '7.05 %', '–']
    """
    if is_missing(v) or isinstance(v, bool) or not isinstance(v, int | float):
        return EMPTY if is_missing(v) else str(v)
    if unit == "share":
        return f"{100 * v:.3g} %" if v else "0 %"
    if isinstance(v, int) or (unit in ("rank", "count") and float(v).is_integer()):
        return f"{v:.0f}"
    return f"{v:.1f}" if unit in ("rank", "count") else f"{v:.4f}"


def format_delta(delta: float, unit: str = "score") -> str:
    """A change in the unit of its value.

    >>> format_delta(-0.0612), format_delta(0.02, "share"), format_delta(-2.0, "rank"), format_delta(4.1e-05)
    ('-0.0612', '+2 pt', '-2', '+4.1e-05')
    >>> format_delta(0.0), format_delta(0.0, "share"), format_delta(float("nan"))
    ('0', '0 pt', '–')
    """
    if is_missing(delta):
        return EMPTY
    if delta == 0:
        return "0 pt" if unit == "share" else "0"
    if unit == "share":
        return f"{100 * delta:+.3g} pt"
    if unit in ("rank", "count"):
        return f"{delta:+.0f}" if float(delta).is_integer() else f"{delta:+.1f}" if abs(delta) >= 0.05 else \
            f"{delta:+.1e}"
    return f"{delta:+.4f}" if abs(delta) >= 5e-5 else f"{delta:+.1e}"  # a change, not "+0.0000"


def count_noun(n: int, noun: str, plural: str | None = None, *, grouped: bool = False) -> str:
    """A count with its noun in the right number, never "1 answer(s)" (`scoring.nouns.Noun.count`'s rule);
    `grouped`: with thousands separators, for a page to read.

    >>> count_noun(1, "judge answer"), count_noun(3, "judge answer"), count_noun(0, "reply", "replies")
    ('1 judge answer', '3 judge answers', '0 replies')
    >>> count_noun(1234567, "review row", grouped=True)
    '1,234,567 review rows'
    """
    return Noun(noun, plural or "").count(n, grouped=grouped)
