"""How a spreadsheet, TeX and GitHub-flavoured Markdown read an export or a page: the tests' own readings, shared
by the injection tests (tests/hardening/test_r3_*_injection.py, tests/app/test_r3_no_autolinks.py) and the
hardening cases that plant hostile text (devtools/hardening_cases/r3_judges_injection.py)."""

from __future__ import annotations

import re
import unicodedata

from audit.outputs.tex_ascii import emitted_control_words

TRIGGERS = set("=+-@\t\r\n")
"""The characters that make a spreadsheet read a cell as a formula."""


def runs_as_formula(cell: str) -> bool:
    """The test's own reading of a cell, as a spreadsheet would: the first character that is not blank or
    invisible, in its compatibility form, starts a formula (a cell that starts with a quote is text)."""
    for c in cell:
        n = unicodedata.normalize("NFKC", c)[:1]
        if c in TRIGGERS or n in TRIGGERS:
            try:
                float(cell)
            except ValueError:
                return True
            return False
        if not (c.isspace() or unicodedata.category(c) == "Cf"):
            return False
    return False


OURS = {"toprule", "midrule", "bottomrule", "cmidrule", "begin", "end", "multicolumn", "caption", "label", "centering",
        "small", "par", "medskip", "usepackage", "kappa", "textbackslash", "textasciitilde", "textasciicircum",
        "textless", "textgreater", "textbar"} | emitted_control_words()
"""The LaTeX export's own control words: its table's, and those `ascii_tex` spells non-ASCII characters with."""


def control_words(latex: str) -> set[str]:
    """The control words a TeX reader sees (an escaped backslash, `\\textbackslash{}`, is one of ours)."""
    return set(re.findall(r"\\([A-Za-z]+)", latex))


PLANT = " http://evil.invalid/x www.evil.invalid ana@evil.invalid"
"""Three addresses GFM would make live links of, planted in text fields."""
AUTOLINK = re.compile(r"(?i)\b(?:https?|mailto|xmpp|ftp):|\bwww\.|[\w.+-]@[\w-]+\.")


def live_links(markdown: str) -> list[str]:
    """The planted addresses GFM would turn into links in `markdown` (read with its escapes resolved)."""
    text = re.sub(r"\\(.)", r"\1", markdown)
    return [text[m.start():m.start() + 30] for m in AUTOLINK.finditer(text) if "evil" in text[m.start():m.start() + 30]]
