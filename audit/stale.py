"""Audited state that a migration left stale, rebuilt with the current code.

A migration that changes decisions or reviews (m004's twin merge) cannot re-count documents: counting is family
code, which keeps changing after the migration is written. It deletes the run's derived audited state instead
(`audit.migrations.mark_audit_stale`): a run without an `audit_state` row is stale. Until it is rebuilt, reads
recompute it in memory (`audit.rescoring.audit_run`) and the next review write rebuilds it; `rebuild_stale_runs`,
called once after opening a writable database, stores it again at once.
"""

from __future__ import annotations

from sqlite_utils import Database

from audit.rescoring import rebuild_audit_state


def stale_runs(db: Database) -> list[str]:
    """Names of the runs whose stored audited state is missing (a migration marked it stale), in id order."""
    return [name for name, in db.execute(
        "SELECT name FROM runs WHERE id NOT IN (SELECT run_id FROM audit_state) ORDER BY id")]


def rebuild_stale_runs(db: Database) -> list[str]:
    """Rebuild the stored audited state of every stale run from its reviews; the names rebuilt.

    A read-only database is left as it is (its reads recompute the audited state in memory).
    """
    if getattr(db, "read_only", False):
        return []
    names = stale_runs(db)
    for name in names:
        rebuild_audit_state(db, name)
    return names
