"""Which database files `PRAGMA quick_check` found sound, and in which state, so a command opening an unchanged
file does not read all of it again (0.4 s of every command on a 480 MB database, #38).

The rule: the page check is skipped only when the file is, by the file system's account, exactly the file that
was checked. The state is the database file's device, inode, size, modification and *change* time (ctime, which
any write, truncation, `chmod` or `touch` sets to the present and no program can set back short of moving the
system clock), and the same of its WAL file when that holds anything (an empty or absent WAL holds no pages). A
record is written only after a check passed, with the state taken before the check (once the file system's clock
has moved past the file's last change, so a later write cannot share its time stamp) and found again after it:
it never vouches for bytes the check did not read, and damage done later changes the state, so the next opening
checks again. Replacing the file (a restored backup, a copy moved over it) changes its inode or ctime too. What
this cannot see is damage below the file system (a failing disk flipping bits of a file nobody wrote), which
SQLite reports when it reads the damaged page, and which `python -m audit check` (every page and index, on
demand) finds.

Records live in the user's cache folder (`$XDG_CACHE_HOME/rejudge/checked/`, one small file per database path),
never beside the database: a read-only database, or a refused one, is left exactly as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

TICK_NS = 20_000_000
"""Longer than the time-stamp granularity of a file system with sub-second times (the kernel's coarse clock: 1-10
ms)."""
COARSE_TICK_NS = 2_000_000_000
"""A file system with whole-second (or 2 s, FAT) time stamps: a state is recorded only once this has passed."""
MAX_RECORDS = 2000
"""Records kept; beyond it the oldest half is dropped (a dropped record costs one check, nothing else)."""

State = tuple[tuple[int, ...], tuple[int, ...] | None]

_PASSED: set[tuple[str, State]] = set()
"""The records this process made or read, kept in memory too: a dashboard opens a read-only database on every page
view, and a cache folder it cannot write must not make each of them read every page."""


def folder() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rejudge" / "checked"


def _stat(p: Path) -> tuple[int, ...] | None:
    try:
        s = os.stat(p)
    except OSError:
        return None
    return s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns


def state(p: Path, *, settled: bool = False, attempts: int = 5) -> State | None:
    """The database file's state as the file system reports it (None: it cannot be read). `settled`: taken once
    the clock has passed the last change of the file and its WAL by `TICK_NS` (a record is made only of such a
    state: a write in the same clock tick as the one before it would leave the time stamps as they were); None
    if the file keeps changing."""
    main = _stat(p)
    if main is None:
        return None
    wal = _stat(Path(f"{p}-wal"))
    wal = wal if wal is not None and wal[2] > 0 else None
    if settled:
        newest = max(main[4], wal[4] if wal else 0)
        coarse = newest % 1_000_000_000 == 0
        wait = newest + (COARSE_TICK_NS if coarse else TICK_NS) - time.time_ns()
        if wait > 0:
            if attempts <= 1 or coarse:
                return None  # being written, or just written where a second is one tick: nothing to record yet
            time.sleep(wait / 1e9)
            return state(p, settled=True, attempts=attempts - 1)
    return main, wal


def _record_path(p: Path) -> Path:
    return folder() / (hashlib.sha256(str(p.resolve()).encode()).hexdigest()[:40] + ".json")


def _encode(s: State) -> str:
    return json.dumps([list(s[0]), list(s[1]) if s[1] is not None else None])


def is_recorded(p: Path, s: State | None) -> bool:
    """Whether a check passed on the database at `p` in state `s` (its state now, taken by the caller)."""
    if s is None:
        return False
    if (str(p.resolve()), s) in _PASSED:
        return True
    try:
        found = _record_path(p).read_text(encoding="utf-8") == _encode(s)
    except (OSError, UnicodeError):
        return False
    if found:
        _PASSED.add((str(p.resolve()), s))
    return found


def record(p: Path, s: State) -> None:
    """Record that a check passed on the database at `p` in state `s`. Best effort: a cache folder that cannot
    be written only means the next opening (in another process) checks again."""
    _PASSED.add((str(p.resolve()), s))
    target = _record_path(p)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(_encode(s))
        os.replace(tmp, target)  # whole or not at all: a half-written record never matches a state
        _prune(target.parent)
    except OSError:
        return


def forget(p: Path) -> None:
    """Drop the record of the database at `p` (it was found damaged)."""
    _PASSED.difference_update({k for k in _PASSED if k[0] == str(p.resolve())})
    try:
        _record_path(p).unlink(missing_ok=True)
    except OSError:
        return


def _prune(where: Path) -> None:
    entries = list(os.scandir(where))
    if len(entries) <= MAX_RECORDS:
        return
    by_age = sorted(entries, key=lambda e: e.stat().st_mtime_ns)
    for e in by_age[:len(by_age) // 2]:
        try:
            os.unlink(e.path)
        except OSError:
            pass
