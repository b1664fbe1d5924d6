"""m022: the audited state keeps its run's review counts. A database of the schema before it opens with every review
kept, shows the same counts and metrics before and after its states are counted afresh, and a review after the
upgrade keeps them equal to a recount."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from audit.rescoring import audit_run
from audit.review.reviews import add_review
from audit.stale import rebuild_stale_runs, stale_runs
from audit.store.database import open_db
from audit.store.migrations import SCHEMA_VERSION
from tests.conftest import copy_of
from tests.store.conftest import review_unless_nothing_to_undo

M022 = "m022_stored_review_counts"


def _reviews(db) -> list[tuple]:
    return db.execute("SELECT * FROM reviews ORDER BY id").fetchall()


def _old_database(path: Path) -> dict:
    """The mixed run with reviews (undos, an adjudication, two reviewers disagreeing), its audited state as the
    code before m022 stored it (no review counts), the schema stamped 21; what it showed."""
    db = open_db(path)
    rng = random.Random(3)
    ids = [r[0] for r in db.execute("SELECT id FROM decisions WHERE run_id = 1 ORDER BY id").fetchall()[:25]]
    for step in range(40):
        review_unless_nothing_to_undo(db, "mixed", rng.choice(ids), rng.choice(["match", "no-match", None]),
                                      rng.choice(["ana", "bo"]), role="adjudicator" if step == 30 else "reviewer")
    a = audit_run(db, "mixed")
    before = {"reviews": _reviews(db), "counts": a.review_counts, "metrics": a.metrics,
              "state": db.execute("SELECT run_id, last_review, total FROM audit_state").fetchall()}
    db.execute("ALTER TABLE audit_state DROP COLUMN review_counts")
    db.execute(f"DELETE FROM _sqlite_migrations WHERE name = '{M022}'")
    db.execute("PRAGMA user_version = 21")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    return before


@pytest.fixture
def old(tmp_path, mixed_template) -> tuple[Path, dict]:
    path = copy_of(mixed_template, tmp_path / "old.db")
    return path, _old_database(path)


def test_upgrade_keeps_every_review_and_the_same_counts(old):
    path, before = old
    db = open_db(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert db.execute("SELECT run_id, last_review, total FROM audit_state").fetchall() == before["state"]
    assert db.execute("SELECT review_counts FROM audit_state").fetchall() == [(None,)]
    assert stale_runs(db) == ["mixed"]
    a = audit_run(db, "mixed")  # not yet counted: recounted in memory
    assert (a.review_counts, a.metrics) == (before["counts"], before["metrics"])
    assert rebuild_stale_runs(db) == ["mixed"] and stale_runs(db) == []
    a = audit_run(db, "mixed")
    assert (a.review_counts, a.metrics) == (before["counts"], before["metrics"])
    assert _reviews(db) == before["reviews"]  # no review lost or changed
    add_review(db, "mixed", 3, "no-match", "cy")
    assert audit_run(db, "mixed").review_counts == audit_run(db, "mixed", rebuild=True).review_counts


def test_a_review_before_the_states_are_counted_counts_them_from_scratch(old):
    """A write that meets a state without counts (nobody rebuilt the stale runs) rebuilds it whole."""
    path, before = old
    db = open_db(path)
    add_review(db, "mixed", 3, "no-match", "cy")
    a = audit_run(db, "mixed")
    assert a.review_counts == audit_run(db, "mixed", rebuild=True).review_counts
    assert a.review_counts["reviews"] == before["counts"]["reviews"] + 1
    assert stale_runs(db) == []
    assert _reviews(db)[:-1] == before["reviews"]


def test_m022_applies_once(old):
    path, _ = old
    open_db(path).conn.close()
    db = open_db(path)
    assert db.execute("SELECT COUNT(*) FROM _sqlite_migrations WHERE name = ?", [M022]).fetchone()[0] == 1
