"""The Agreement page when reviews exist but none counts for human vs judge (every reviewed decision conflicted):
κ is undefined and the page says why (README: "Undefined is said in words"), beside the reviewer-pair table."""

from __future__ import annotations

from audit.review.reviews import add_review
from audit.views import decisions
from tests.app.conftest import open_page, plain

RUN = "demo-chimera-mixed"


def test_conflicted_reviews_alone_give_undefined_with_the_reason(app, conn):
    for d in [d for d in decisions(conn, RUN) if d["judge"] != "invalid"][:3]:
        add_review(conn, RUN, d["id"], "match", "ana")
        add_review(conn, RUN, d["id"], "no-match", "bo")
    at = open_page(app, "agreement", run=RUN)
    assert not at.exception
    said = [plain(x.value) for x in (*at.info, *at.markdown)]
    assert any("κ undefined: every reviewed decision is left out: 3 conflicted" in s for s in said), said
    assert not any(s.startswith("No reviews yet") for s in said)
    assert "ana vs bo" in at.dataframe[0].value.to_string()
    assert any("No human vs judge decision to draw yet" in s for s in (plain(c.value) for c in at.caption))


def test_two_labels_one_of_them_sighted_are_said_when_agreement_reads_blind_reviews(app, conn):
    """One reviewer blind, the other sighted, on the same decisions: the page said nobody had labelled a decision
    twice, while each had two labels (agreement reads blind reviews only when the run has any)."""
    for d in [d for d in decisions(conn, RUN) if d["judge"] != "invalid"][:4]:
        add_review(conn, RUN, d["id"], d["judge"], "ana", blind=True)
        add_review(conn, RUN, d["id"], d["judge"], "bo")
    at = open_page(app, "agreement", run=RUN)
    assert not at.exception
    said = [plain(x.value) for x in at.info]
    assert any(s.startswith("No decision has two blind labels yet; 4 decisions have two labels when sighted") for s
               in said), said
