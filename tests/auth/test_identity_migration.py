"""m010: reviews, errata and stability answers written before team mode stay, marked as local-mode (unverified)."""

from __future__ import annotations

from audit.review.errata import add_erratum
from audit.review.reviews import add_review
from audit.store.database import open_db
from audit.store.migrations import RUN_REVIEWS_VIEW, migrations
from audit.views import decisions


def test_existing_rows_are_kept_and_marked_local(db_with_run, tmp_path):
    db = db_with_run
    first = next(iter(decisions(db, "mixed")))
    add_review(db, "mixed", first["id"], "match", "ana")
    add_erratum(db, "mixed", first["doc"], "x", "other", "ana")
    # back to the schema before m010, with the rows as an older Rejudge stored them (m014's view of the reviews,
    # which names their columns, did not exist then)
    db.execute("DROP VIEW run_reviews")
    for table in ("reviews", "errata", "stability_answers"):
        for column in ("auth_subject", "auth_email", "auth_mode"):
            db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    db.execute("DROP TABLE blind_assignments")
    db.execute("DELETE FROM _sqlite_migrations WHERE name = 'm010_verified_identity'")
    before = db.execute("SELECT id, reviewer, label FROM reviews").fetchall()
    assert migrations.pending(db)
    migrations.apply(db)
    db.execute(RUN_REVIEWS_VIEW)
    assert db.execute("SELECT id, reviewer, label FROM reviews").fetchall() == before
    for table in ("reviews", "errata"):
        assert db.execute(f"SELECT auth_mode, auth_subject, auth_email FROM {table}").fetchall() == [
            ("local", None, None)]


def test_a_verified_review_records_subject_and_address(db_with_run, tmp_path):
    first = next(iter(decisions(db_with_run, "mixed")))
    row = add_review(db_with_run, "mixed", first["id"], "match", "ana@lab.org", auth_subject="s-1",
                     auth_email="ana@lab.org")
    assert row["auth_mode"] == "oidc"
    assert db_with_run.execute("SELECT auth_subject, auth_email, auth_mode FROM reviews").fetchall() == [
        ("s-1", "ana@lab.org", "oidc")]
    assert open_db(tmp_path / "fresh.db").execute("SELECT COUNT(*) FROM blind_assignments").fetchone() == (0,)
