"""LaTeX that pdflatex compiles with any setup: every non-ASCII character of an export spelled in ASCII.

A default pdflatex stops with a fatal error on a character its fonts do not set up (`Unicode character κ
(U+03BA) not set up for use with LaTeX`), and a caption carries such characters from the reasons and names it
quotes (κ, curly quotes around a label, a minus sign). `ascii_tex` is the last step of every LaTeX export
(`audit.outputs.export.export_latex`, so the report's `table.tex` too): it runs on text that is already escaped (`tex`)
and only ever adds fixed commands, so nothing a run name or span carries becomes live LaTeX.
"""

from __future__ import annotations

import re
import unicodedata

_FIXED = {
    "\u2018": "`", "\u2019": "'", "\u201a": ",", "\u201c": "``", "\u201d": "''", "\u201e": ",,",
    "\u00ab": "<<", "\u00bb": ">>", "\u2039": "<", "\u203a": ">",
    "\u2013": "--", "\u2014": "---", "\u2012": "--", "\u2010": "-", "\u2011": "-", "\u2212": r"\ensuremath{-}",
    "\u2026": r"\ldots{}", "\u00a0": "~", "\u2009": r"\,", "\u202f": r"\,", "\u2002": " ", "\u2003": " ",
    "\u00b1": r"\ensuremath{\pm}", "\u00d7": r"\ensuremath{\times}", "\u00f7": r"\ensuremath{\div}",
    "\u2264": r"\ensuremath{\leq}", "\u2265": r"\ensuremath{\geq}", "\u2260": r"\ensuremath{\neq}",
    "\u2248": r"\ensuremath{\approx}", "\u2192": r"\ensuremath{\rightarrow}", "\u2190": r"\ensuremath{\leftarrow}",
    "\u21c4": r"\ensuremath{\rightleftharpoons}", "\u2194": r"\ensuremath{\leftrightarrow}",
    "\u00b7": r"\ensuremath{\cdot}", "\u2022": r"\ensuremath{\bullet}", "\u00b0": r"\ensuremath{^\circ}",
    "\u221e": r"\ensuremath{\infty}", "\u2211": r"\ensuremath{\sum}", "\u221a": r"\ensuremath{\surd}",
    "\u00a7": r"\S{}", "\u00b6": r"\P{}", "\u00a9": r"\copyright{}", "\u00df": r"\ss{}", "\u00e6": r"\ae{}",
    "\u00c6": r"\AE{}", "\u00f8": r"\o{}", "\u00d8": r"\O{}", "\u0142": r"\l{}", "\u0141": r"\L{}",
    "\u00e5": r"\aa{}", "\u00c5": r"\AA{}", "\u0131": r"\i{}", "\u00bd": r"\ensuremath{\frac12}",
    "\u03c2": r"\ensuremath{\varsigma}", "\u03bf": "o", "\u00b5": r"\ensuremath{\mu}",
}
_LATEX_GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu",
                "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega"}
_GREEK_CAPITALS = {"Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega"}
_ACCENTS = {"\u0301": "'", "\u0300": "`", "\u0308": '"', "\u0302": "^", "\u0303": "~", "\u0304": "=",
            "\u0307": ".", "\u0327": "c", "\u030c": "v", "\u0306": "u", "\u030a": "r", "\u030b": "H"}
# (no ogonek: \k is not in the default OT1 encoding)
_NOT_ASCII = re.compile(r"[^\x00-\x7f]")


def _greek(name: str) -> str | None:
    """`GREEK SMALL LETTER KAPPA` -> `\\ensuremath{\\kappa}`; capitals LaTeX has a command for, the others as the
    Latin letter they look like (Α is A)."""
    m = re.fullmatch(r"GREEK (SMALL|CAPITAL) LETTER ([A-Z]+)", name)
    if not m:
        return None
    letter = m.group(2).capitalize()
    if m.group(1) == "SMALL":
        # only LaTeX's own letters (archaic ones such as heta or digamma have no command in a default setup)
        return rf"\ensuremath{{\{letter.lower()}}}" if letter.lower() in _LATEX_GREEK else None
    if letter in _GREEK_CAPITALS:
        return rf"\ensuremath{{\{letter}}}"
    return {"Alpha": "A", "Beta": "B", "Epsilon": "E", "Zeta": "Z", "Eta": "H", "Iota": "I", "Kappa": "K",
            "Mu": "M", "Nu": "N", "Omicron": "O", "Rho": "P", "Tau": "T", "Chi": "X"}.get(letter)


def _accented(c: str) -> str | None:
    """`é` -> `\\'{e}`: a letter with one accent LaTeX has a command for."""
    parts = unicodedata.normalize("NFD", c)
    if len(parts) == 2 and parts[0].isascii() and parts[0].isalpha() and parts[1] in _ACCENTS:
        base = r"\i" if parts[0] == "i" else parts[0]
        return f"\\{_ACCENTS[parts[1]]}{{{base}}}"
    return None


def ascii_char(c: str) -> str:
    """One non-ASCII character as ASCII LaTeX: a fixed spelling, a Greek letter, an accented letter, else its code
    point in words (`[U+4E2D]`), never dropped silently."""
    if c in _FIXED:
        return _FIXED[c]
    name = unicodedata.name(c, "")
    found = _greek(name) or _accented(c)
    if found:
        return found
    folded = unicodedata.normalize("NFKC", c)
    if folded != c and folded.isascii() and all(ch.isalnum() or ch in " .,;:+/()'" for ch in folded):
        return folded  # e.g. the ligature ﬁ, a full-width digit; never a character LaTeX would act on (＄ is $)
    return f"[U+{ord(c):04X}]"


def ascii_tex(text: str) -> str:
    """`text` (LaTeX, already escaped) with every non-ASCII character replaced by `ascii_char`."""
    return _NOT_ASCII.sub(lambda m: ascii_char(m.group(0)), text)


def emitted_control_words() -> frozenset[str]:
    """Every control word `ascii_tex` can write (fixed commands of its own: the LaTeX injection checks allow these,
    and no control word a run's text could carry)."""
    greek_and_latin = [*range(0x370, 0x400), *range(0xC0, 0x250)]  # letters spelled as commands or with accents
    spelled = [*_FIXED.values(), *(ascii_char(chr(c)) for c in greek_and_latin)]
    return frozenset(w for s in spelled for w in re.findall(r"\\([A-Za-z]+)", s))
