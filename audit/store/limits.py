"""The store's constants and its full-disk rule, which the CLI needs before it opens anything (stdlib only, so
`--help` loads no store).

`audit.store` and `audit.review.reviews` import these from here; `python -m audit --help` reads them without importing
sqlite_utils (which imports pandas) or the store (#38).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from audit.errors import AuditError

BUSY_TIMEOUT_MS = 15_000  # two reviewers writing at once wait for each other instead of failing
MAX_DECISION_ID = 2**63 - 1  # SQLite's largest integer
MAX_SEED = 2**63 - 1  # SQLite's largest integer: a plan's, an assignment's and an improvement's seed are stored


def check_seed(seed: object) -> int:
    """The seed, when it is a whole number SQLite can store: one rule for every `--seed` (plans, board plans,
    assignments, improve-judge).

    Raises:
        AuditError: saying the range.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        shown = str(seed) if len(str(seed)) <= 30 else f"a {len(str(seed))}-digit number"
        raise AuditError(f"--seed must be a whole number from 0 to {MAX_SEED} (2**63 - 1), got {shown}")
    return seed


def default_db_path() -> str:
    return os.environ.get("REJUDGE_DB") or "rejudge.db"


LOW_SPACE_BYTES = 1 << 20
"""Free space below which an SQLite I/O error is taken for a full disk (SQLite reports a failed write to the WAL
index as a disk I/O error, not SQLITE_FULL)."""


def disk_full(e: BaseException, path: str | Path) -> bool:
    """Whether an SQLite error on the database at `path` comes from a full disk: SQLITE_FULL, or an I/O error
    while the database's file system has (almost) no free space left."""
    code = getattr(e, "sqlite_errorcode", None)
    if code is None:
        return False
    if code & 0xFF == sqlite3.SQLITE_FULL:
        return True
    if code & 0xFF != sqlite3.SQLITE_IOERR:
        return False
    try:
        st = os.statvfs(Path(path).resolve().parent)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < LOW_SPACE_BYTES


def disk_full_message(path: str | Path) -> str:
    """The one message for a full disk under the database, wherever it is met (open, review, store)."""
    where = f" in {Path(path).resolve().parent}" if Path(path).exists() else ""  # the dashboard says "the database"
    return (f"{path}: disk full: the database could not be written{where}; nothing was changed and nothing stored "
            "was lost; free some space and try again")
