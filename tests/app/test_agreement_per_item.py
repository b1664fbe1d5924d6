"""The Agreement page of a run with ratings shows the judge against the mean human rating item by item (ideation.md
§6), beside κ; a family without ratings shows no such table."""

from __future__ import annotations

from tests.app.conftest import open_page


def test_the_ideation_agreement_page_has_the_item_by_item_table(app):
    at = open_page(app, "agreement", run="demo-ideation-si2024-humans")
    assert not at.exception
    (frame,) = [d.value for d in at.dataframe if "Spearman ρ" in d.value.columns]
    assert len(frame) == 3 and set(frame["items"]) == {147}
    assert all(v != "—" for v in frame["Kendall τ-b"])


def test_a_family_without_ratings_has_none(app, conn):
    from audit.review.reviews import add_review
    from audit.views import decisions

    run = "demo-chimera-mixed"
    d = next(d for d in decisions(conn, run) if d["judge"] != "invalid")
    add_review(conn, run, d["id"], d["judge"], "ana")
    at = open_page(app, "agreement", run=run)
    assert not at.exception and not [d for d in at.dataframe if "Spearman ρ" in d.value.columns]
