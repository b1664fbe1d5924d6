"""Errors raised by the scoring library, and the checks every loader shares to raise them (JSON, Unicode text)."""

from __future__ import annotations

import json


class InputError(ValueError):
    """An input file is malformed; the message names the file, the line and the problem."""

    def __init__(self, path: str, line: int | None, reason: str) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {reason}")


class JudgeSpecError(ValueError):
    """A judge spec string cannot be understood."""


def parse_json(text: str | bytes, path: str, line: int | None, field: str | None = None) -> object:
    """`json.loads(text)`, with every way it can fail turned into an `InputError` at `path:line`.

    Besides syntax errors this covers values nested so deep that the parser runs out of stack (RecursionError,
    from about 1,000 levels) and integers longer than Python converts (ValueError). `field` names the CSV column
    or record field the JSON came from, for the message.
    """
    what = f"{field} is not valid JSON" if field else "invalid JSON"
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(path, line, f"{what}: {e.msg}" + ("" if field else f" (column {e.colno})")) from None
    except RecursionError:
        raise InputError(path, line, f"{what}: nested too deeply") from None
    except ValueError as e:  # e.g. "Exceeds the limit (4300 digits) for integer string conversion"
        raise InputError(path, line, f"{what}: {e}") from None


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
