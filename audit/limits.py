"""The store's constants the CLI needs before it opens anything (stdlib only, so `--help` loads no store).

`audit.store` and `audit.reviews` import these from here; `python -m audit --help` reads them without importing
sqlite_utils (which imports pandas) or the store (#38).
"""

from __future__ import annotations

import os

BUSY_TIMEOUT_MS = 15_000  # two reviewers writing at once wait for each other instead of failing
MAX_DECISION_ID = 2**63 - 1  # SQLite's largest integer


def default_db_path() -> str:
    return os.environ.get("REJUDGE_DB") or "rejudge.db"
