"""The cells of every file the product writes: one CSV writer whose cells a spreadsheet cannot run (`csv_cell`),
one LaTeX escaping (`tex`) and number format (`tex_number`, `tex_metric_number`), and the version stamped in each.
Kept apart from `audit.outputs.export` so a writer that needs only these (the board's exports, the errata) does not
import the agreement statistics (SciPy's stats, scikit-learn: 2 s of a CLI command's start)."""

from __future__ import annotations

import csv
import io
import re
import unicodedata

from audit import __version__
from scoring.families.base import MetricCell

_FORMULA_START = frozenset("=+-@\t\r\n")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)


def rejudge_version() -> str:

    return __version__


def csv_cell(value: object) -> object:
    """A value safe in a spreadsheet (OWASP "CSV injection"): text a spreadsheet could read as a formula gets a
    leading quote. That is text whose first character is = + - @ TAB CR LF, also behind leading blanks or invisible
    format characters (a spreadsheet trims them) and in their full-width or other compatibility forms (`＝`, `﹢`:
    NFKC-normalised to decide). Numbers are data: int and float cells pass, and so does text that is exactly a
    plain decimal number (`-0.16`, `+3`, `1e-5`), which a spreadsheet reads as that number and never runs.

    >>> [csv_cell(v) for v in ("=1+1", " =1+1", "\uff1dcmd", "\u200b@x", "-0.16", -0.16, "a=b", "-1+1")]
    ["'=1+1", "' =1+1", "'\uff1dcmd", "'\u200b@x", '-0.16', -0.16, 'a=b', "'-1+1"]
    """
    if not isinstance(value, str) or _PLAIN_NUMBER.fullmatch(value):
        return value
    for c in value:
        if unicodedata.normalize("NFKC", c)[:1] in _FORMULA_START:
            return "'" + value
        if not (c.isspace() or unicodedata.category(c) == "Cf"):
            break
    return value


def write_csv(header: list[str], rows: list[list[object]]) -> str:
    """The one CSV writer of the product: every cell through `csv_cell`."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow([csv_cell(h) for h in header])
    for r in rows:
        w.writerow([csv_cell(v) for v in r])
    return buf.getvalue()


_TEX = str.maketrans({"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "_": r"\_", "#": r"\#", "$": r"\$",
                      "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                      "\n": " ", "\r": " ", "\t": " ", "<": r"\textless{}", ">": r"\textgreater{}",
                      "|": r"\textbar{}", "[": "{[}", "]": "{]}"})


def tex(s: object) -> str:
    r"""Text as LaTeX that typesets literally: no command (`\input`, `\write18`, `\url` lose their backslash), no
    comment, no unbalanced brace, no line break survives, and nothing a preceding `\\` would read as its argument
    (`[...]`, a leading `*`). The one LaTeX escaping of the product: every text cell, caption and label part.

    >>> tex(r"\input{x} [1cm] 5%")
    '\\textbackslash{}input\\{x\\} {[}1cm{]} 5\\%'
    >>> tex("*a")
    '{}*a'
    """
    out = "".join(c for c in str(s) if c.isprintable() or c in "\n\r\t").translate(_TEX)
    return "{}" + out if out.startswith("*") else out


def tex_number(v: object, *, count: bool) -> str:
    """A cell: `--` when missing, a count as an integer (LitXBench stores counts as floats), else 3 decimals."""
    if v is None or (isinstance(v, float) and v != v):
        return "--"
    if isinstance(v, bool) or not isinstance(v, int | float):
        return tex(v)
    return f"{v:.0f}" if count else f"{v:.3f}"


def tex_metric_number(cell: MetricCell, v: object) -> str:
    """A number of the estimate table as the P / R / F1 table prints it: a P, R or F1 in percent, else
    `tex_number`."""
    if isinstance(v, int | float) and not isinstance(v, bool) and cell.path[-1] in ("precision", "recall", "f1"):
        return f"{100 * v:.1f}"
    return tex_number(v, count=cell.unit == "count")
