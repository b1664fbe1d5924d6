"""Errors raised by the scoring library."""

from __future__ import annotations


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
