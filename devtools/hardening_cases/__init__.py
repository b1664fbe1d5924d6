"""Second-round hardening cases (issue 27), one module per surface, gathered by `bench/hardening.py --only round2`.

Each module exposes ``cases(work: Path, base_db: Path) -> list[Case2]`` (work: a scratch folder of its own; base_db:
the scored CHIMERA base database, never to be modified: a case that needs a database names ``{db}`` in its argv and
gets a fresh copy). The runner judges every case the same way:

- ``expect="refuse"``: exit status 2, an ``error:`` line, no traceback, no "internal error"; afterwards the database
  copy has the same runs, rows and reviews (no partial write) and every file under ``Case2.watch`` (inputs and the
  database itself, compared byte for byte) is unmodified.
- ``expect="ok"``: exit status 0 and ``check(work, db, stderr)`` returns None (else the problem, in words): the
  documented behaviour, e.g. "the export holds no secret".

A case with ``argv=None`` runs ``call(work, db)`` in-process instead of the CLI (for the dashboard's form or the
judge client): it returns (status, stderr) as the CLI would.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Case2:
    group: str
    name: str
    argv: list[str | bytes] | None
    expect: str = "refuse"
    check: Callable[[Path, Path, str], str | None] | None = None
    call: Callable[[Path, Path], tuple[int, str]] | None = None
    env: dict[str, str] = field(default_factory=dict)
    watch: list[Path] = field(default_factory=list)
    """Files and folders that must be byte-identical after a refusal (the database copy is always watched)."""
