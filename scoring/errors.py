"""Errors raised by the scoring library, and the checks every loader shares to raise them (JSON, Unicode text)."""

from __future__ import annotations

import itertools
import json
import math
import re
import sys
import unicodedata

MAX_REASON_CHARS = 20_000
"""Longest reason an input error prints (a safety net under `quoted`: every error line stays readable whatever a
hostile file's values hold; 20 collected errors of a few hundred characters fit)."""


def quoted(value: object, limit: int = 80) -> str:
    """A value as an error message quotes it (its repr), text over `limit` characters cut with its length said (an
    unknown id of 5,000,000 characters made an error line as long).

    >>> quoted("abc"), quoted("x" * 100, 3)
    ("'abc'", "'xxx'… (100 characters)")
    """
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}… ({len(value):,} characters)"
    return repr(value)


class InputError(ValueError):
    """An input file is malformed; the message names the file, the line and the problem."""

    def __init__(self, path: str, line: int | None, reason: str) -> None:
        self.path = path
        self.line = line
        if len(reason) > MAX_REASON_CHARS:
            reason = f"{reason[:MAX_REASON_CHARS]}… ({len(reason) - MAX_REASON_CHARS:,} more characters)"
        self.reason = reason
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {reason}")


class JudgeSpecError(ValueError):
    """A judge spec string cannot be understood."""


MAX_NUMBER_DIGITS = 400
"""Longest number literal read (a double has at most 309 integer digits; longer ones cannot be finite)."""


class _Refused(ValueError):
    """A JSON value the input rules refuse (raised inside the parser's hooks, turned into an InputError).

    The parser's hooks see no positions: `token` (the number's literal, or the duplicate key as written in JSON)
    and `nth` (which occurrence) let `refused_line` find the line of a multi-line file.
    """

    def __init__(self, reason: str, token: str, nth: int = 1) -> None:
        super().__init__(reason)
        self.token, self.nth = token, nth


def refused_line(text: str, error: ValueError) -> int | None:
    """The line (1-based) of the value a `loads_strict` refusal names, or None if it cannot be told."""
    if not isinstance(error, _Refused):
        return None
    if error.token.startswith("\\u"):  # a lone surrogate's escape, inside a string
        pattern = re.escape(error.token)
    elif error.token.startswith('"'):
        pattern = re.escape(error.token) + r"\s*:"
    else:
        pattern = r'(?<![\w.+"-])' + re.escape(error.token) + r'(?![\w."])'
    found = list(itertools.islice(re.finditer(pattern, text), error.nth))
    return text.count("\n", 0, found[-1].start()) + 1 if len(found) == error.nth else None


def number_problem(value: object) -> str | None:
    """Why `value` cannot be used as a number of an input (not finite as a double), or None when it can.

    The one numeric rule of every family: NaN and the infinities are refused, and so is an integer too large to be
    a finite double (1e309 written out), since every score treats numbers as floats somewhere.

    >>> number_problem(2.5), number_problem(10**400), number_problem(float("nan"))
    (None, 'integer of 401 digits is too large (the limit is about 1.8e308)', 'NaN is not a finite number')
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        if value.bit_length() > sys.float_info.max_exp:
            digits = len(str(abs(value))) if value.bit_length() < 14_000 else "over 4,000"
            return f"integer of {digits} digits is too large (the limit is about 1.8e308)"
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value!r}".replace("nan", "NaN").replace("inf", "Infinity") + " is not a finite number"
    return None


def _finite_float(text: str) -> float:
    if len(text) > MAX_NUMBER_DIGITS:
        raise _Refused(f"number {text[:12]}... of {len(text)} characters is too long", text)
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"number {text} is out of range (not a finite number)", text)
    return value


def _finite_int(text: str) -> int:
    if len(text) > MAX_NUMBER_DIGITS:
        raise _Refused(f"integer of {len(text.lstrip('-'))} digits is too large (the limit is about 1.8e308)", text)
    value = int(text)
    problem = number_problem(value)
    if problem:
        raise _Refused(problem, text)
    return value


def _no_constant(name: str) -> float:
    raise _Refused(f"{name} is not a finite number (NaN and Infinity are not JSON)", name)


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise _Refused(f"duplicate key {dup!r} in one object (which value is meant?)", json.dumps(dup), 2)
    return d


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_float=_finite_float, parse_int=_finite_int,
                            parse_constant=_no_constant)


def loads_strict(text: str | bytes) -> object:
    """`json.loads` under the input rules: no duplicate keys in an object, every number finite (`number_problem`).

    Raises:
        ValueError: `json.JSONDecodeError` for syntax, another ValueError (a readable reason) for a refused value,
            RecursionError for absurd nesting.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    value = _DECODER.decode(text)
    problem = unicode_problem(text, value)
    if problem:
        escape = _escape_of(_lone_surrogate(value)[1])  # type: ignore[index]
        raise _Refused(problem, next((m.group(0) for m in _ESCAPE.finditer(text) if m.group(0).lower() == escape),
                                     escape))
    return value


def _escape_of(s: str) -> str:
    """The JSON escape (lower case) of the first lone surrogate in `s`."""
    return f"\\u{ord(next(c for c in s if 0xD800 <= ord(c) <= 0xDFFF)):04x}"


def unicode_problem(text: str, value: object) -> str | None:
    """Why JSON `text`, parsed as `value`, holds a key or string UTF-8 cannot encode (a lone surrogate: only a
    `\\ud800`-style escape without its pair makes one), naming the field; None when it holds none. For readers that
    parse with `json.loads`; `loads_strict` checks it itself."""
    # no backslash, no escape: the common case, and a one-character search (memchr) is 100x a two-character one
    if "\\" not in text or not _LONE_SURROGATE_ESCAPE.search(text):
        return None
    found = _lone_surrogate(value)
    if found is None:
        return None
    where, s = found
    return (f"{where} is not valid Unicode text ({_shown(s)!r} holds a lone surrogate {_escape_of(s)}, an escape "
            "without its pair, which UTF-8 cannot hold)")


_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}")
_LONE_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
                                   r"|\\u[dD][c-fC-F][0-9a-fA-F]{2}(?<!\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})")
"""A high surrogate's escape without a low one after it, or a low one without a high one before: what can make a
lone surrogate (an escaped backslash before `u` can match too; the parsed value decides)."""


def _shown(s: str, n: int = 40) -> str:
    """The first `n` characters of a text holding lone surrogates, printable (each shown as its escape)."""
    return s[:n].encode("utf-8", "backslashreplace").decode("utf-8")


def _lone_surrogate(value: object, where: str = "text") -> tuple[str, str] | None:
    """(where, the text) of the first key or string in a parsed JSON value that UTF-8 cannot encode, or None."""
    stack: list[tuple[str, object]] = [(where, value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, str):
            if text_problem(v):
                return where, v
        elif isinstance(v, dict):
            for k in v:
                if text_problem(k):
                    return "key", k
            stack.extend((f"field {_shown(k)!r}", x) for k, x in reversed(v.items()))
        elif isinstance(v, list):
            stack.extend((where, x) for x in reversed(v))
    return None


def parse_json(text: str | bytes, path: str, line: int | None, field: str | None = None) -> object:
    """`loads_strict(text)`, with every way it can fail turned into an `InputError` at `path:line`.

    Besides syntax errors this covers values nested so deep that the parser runs out of stack (RecursionError,
    from about 1,000 levels), duplicate keys, and numbers that are not finite (NaN, Infinity, 1e309, a 5,000-digit
    integer). `field` names the CSV column or record field the JSON came from, for the message.
    """
    what = f"{field} is not valid JSON" if field else "invalid JSON"
    try:
        return loads_strict(text)
    except json.JSONDecodeError as e:
        raise InputError(path, line, f"{what}: {e.msg}" + ("" if field else f" (column {e.colno})")) from None
    except RecursionError:
        raise InputError(path, line, f"{what}: nested too deeply") from None
    except _Refused as e:
        raise InputError(path, line, f"{field + ': ' if field else ''}{e}") from None
    except ValueError as e:  # e.g. a byte string that is not UTF-8
        raise InputError(path, line, f"{what}: {e}") from None


def is_blank(value: str) -> bool:
    """True when `value` shows nothing: only spaces, line breaks, control and format characters (zero-width
    space, joiners, word joiner, byte-order mark, bidi marks).

    >>> is_blank(" \u200b\u200d\ufeff\t"), is_blank("a\u200b")
    (True, False)
    """
    return all(c.isspace() or unicodedata.category(c) in ("Cc", "Cf", "Zs", "Zl", "Zp") for c in value)


def text_problem(value: str) -> str | None:
    """Why `value` cannot be stored or shown as Unicode text (a lone surrogate), or None when it can.

    JSON's `\\ud800` escapes and undecodable command-line bytes (Python's surrogateescape) both produce lone
    surrogates, which UTF-8 cannot encode: SQLite, stdout and the browser would all fail on them later.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        return f"is not valid Unicode text (lone surrogate {value[e.start]!r} at character {e.start + 1})"
    return None


class JudgeFailed(JudgeSpecError):
    """The judge cannot answer at all (bad key, unknown endpoint or model, connection refused): the job stops."""
