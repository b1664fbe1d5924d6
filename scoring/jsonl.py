"""The one reader of JSON-lines files (predictions, judge logs, rankings, ideation inputs, batch results, review
exports), and of the lines of any text input, with one policy:

- strict UTF-8 (a byte-order mark at the start is allowed and dropped): a byte that is not UTF-8 is an error
  at its line, never replaced;
- lines end at `\\n` only: U+2028, U+2029, U+0085 and form feeds are characters JSON strings may hold raw
  (`str.splitlines` would cut a record there), and a `\\r` before the `\\n` is JSON whitespace;
- errors are `InputError`s naming `FILE:LINE: reason`;
- a size limit, checked before the first byte is read and again while reading;
- streamed: one line in memory at a time.

>>> import tempfile, os
>>> with tempfile.NamedTemporaryFile("wb", suffix=".jsonl", delete=False) as f:
...     _ = f.write('\\ufeff{"a": "x\\u2028y"}\\n\\n[1]\\n'.encode())
>>> [rec for _, rec in read_records(f.name, objects=False)]
[{'a': 'x\\u2028y'}, [1]]
>>> os.remove(f.name)
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from scoring.errors import InputError, parse_json

MAX_BYTES = 512 * 2**20
"""Default size limit of a JSON-lines input (512 MiB)."""


class _Digest(Protocol):
    def update(self, data: bytes, /) -> None: ...


def json_type(v: object) -> str:
    """How a JSON value's type reads in a message.

    >>> json_type([1]), json_type(None), json_type(2.5)
    ('a list', 'null', 'a number')
    """
    return {str: "a string", int: "a number", float: "a number", bool: "a boolean", list: "a list",
            dict: "an object", type(None): "null"}.get(type(v), type(v).__name__)


def check_file(path: str | Path, *, limit: int = MAX_BYTES, what: str = "file") -> Path:
    """The path of a readable input file no larger than `limit` bytes.

    Raises:
        InputError: missing, a folder or not a regular file, or over the limit.
    """
    p = Path(path)
    if p.is_dir():
        raise InputError(str(p), None, "is a folder; give the file's path")
    if not p.is_file():
        raise InputError(str(p), None, f"{what} not found" if not p.exists() else "is not a regular file")
    size = p.stat().st_size
    if size > limit:
        raise InputError(str(p), None, f"{what} is {_size(size)}; the limit is {_size(limit)}")
    return p


MAX_FOLDER_ENTRIES = 100_000
"""Most files and sub-folders an input folder may hold (checking its links walks all of them)."""


def check_folder(folder: str | Path, *, what: str = "folder") -> Path:
    """An input folder none of whose links (to files or sub-folders, at any depth) leads outside it.

    The walk follows no link, so a link to `/` is seen as a link, never walked.

    Raises:
        InputError: naming the first link that leaves the folder, or a folder with more than
            `MAX_FOLDER_ENTRIES` entries.
    """
    root = Path(folder)
    real_root = root.resolve()
    seen = 0
    for here, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            seen += 1
            if seen > MAX_FOLDER_ENTRIES:
                raise InputError(str(root), None, f"{what} holds more than {MAX_FOLDER_ENTRIES:,} entries")
            p = Path(here, name)
            if p.is_symlink():
                try:
                    target = p.resolve()
                except (OSError, RuntimeError):  # a loop of links
                    raise InputError(str(p), None, "is a link that cannot be followed (a loop?)") from None
                if target != real_root and real_root not in target.parents:
                    raise InputError(str(p), None, f"is a link that leads outside the {what} {root.name!r}; copy "
                                                   "the file into the folder instead")
    return root


def _size(n: int) -> str:
    return f"{n / 2**20:.0f} MiB" if n >= 2**20 else f"{n} bytes"


def read_lines(path: str | Path, *, limit: int = MAX_BYTES, what: str = "file", keep_ends: bool = False,
               digest: _Digest | None = None) -> Iterator[tuple[int, str]]:
    """(line number, text) of every line of a UTF-8 text file, blank lines included, split at `\\n` only.

    Args:
        limit: the most bytes the file may have.
        what: the file's name in messages ("judge log", "rankings file").
        keep_ends: keep each line's `\\n` (a CSV reader needs them to see line breaks inside quoted fields).
        digest: a hash object updated with every byte read (e.g. `hashlib.sha256()`, for a run's identity).

    Raises:
        InputError: as `check_file`, or `FILE:LINE: not valid UTF-8 text` at the first line that is not.
    """
    p = check_file(path, limit=limit, what=what)
    read = 0
    with p.open("rb") as f:
        for lineno, raw in enumerate(f, 1):
            read += len(raw)
            if read > limit:  # the file grew after the check, or is not what stat said
                raise InputError(str(p), lineno, f"{what} exceeds the limit of {_size(limit)}")
            if digest is not None:
                digest.update(raw)
            try:
                text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError:
                raise InputError(str(p), lineno, "not valid UTF-8 text") from None
            yield lineno, text if keep_ends else text.removesuffix("\n")


def read_records(path: str | Path, *, limit: int = MAX_BYTES, what: str = "file", objects: bool = True,
                 digest: _Digest | None = None) -> Iterator[tuple[int, object]]:
    """(line number, parsed JSON value) of every non-blank line of a JSON-lines file.

    Args:
        objects: every value must be a JSON object (the usual record); False lets any JSON value through.
        limit, what, digest: as `read_lines`.

    Raises:
        InputError: as `read_lines`; a line that is not JSON (`FILE:LINE: invalid JSON: ...`); with `objects`,
            a value that is not an object.
    """
    for lineno, line in read_lines(path, limit=limit, what=what, digest=digest):
        if not line.strip():
            continue
        rec = parse_json(line, str(path), lineno)
        if objects and not isinstance(rec, dict):
            raise InputError(str(path), lineno, f"expected a JSON object, got {json_type(rec)}")
        yield lineno, rec
