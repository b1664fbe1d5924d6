"""Issue 40.3: after a partial audit the estimate says how many documents were *sampled*, of how many with decisions,
and how many have none; the Scores page and the JSON say the same sentence (`audit.review.coverage`). Documents
without a
decision of the plan's kind no longer count as "reviewed" (the old "177 of 216 documents reviewed" after 30)."""

from __future__ import annotations

from audit.review.reviews import add_review
from audit.review.sampling import MIN_SAMPLED_BLOCKS, create_plan, estimate, next_sample
from tests.app.conftest import open_page, plain, table

RUN = "demo-chimera-mixed"
N = MIN_SAMPLED_BLOCKS  # the headline sentence needs an interval


def _sample(db, n: int) -> None:
    for _ in range(n):
        served = next_sample(db, RUN)
        for i in served["decisions"]:
            add_review(db, RUN, i, "match", "samp", sampled=True)


def test_the_estimate_names_sampled_documents_not_documents_known_without_review(app, conn):
    create_plan(conn, RUN, seed=0)
    _sample(conn, N)
    docs = conn.execute("SELECT COUNT(*) FROM documents WHERE run_id = (SELECT id FROM runs WHERE name = ?)",
                        [RUN]).fetchone()[0]
    with_decisions = conn.execute("SELECT COUNT(DISTINCT doc_id) FROM decisions WHERE run_id = (SELECT id FROM runs "
                                  "WHERE name = ?)", [RUN]).fetchone()[0]
    want = f"{N} sampled documents (of {with_decisions} with decisions; {docs - with_decisions} have none)"
    est = estimate(conn, RUN)
    assert docs - with_decisions > 0 and all(e["coverage"]["text"] == want for e in est.values())
    assert all(e["n_reviewed"] > N for e in est.values())  # the count that misled: documents without decisions too
    at = open_page(app, "scores", run=RUN)
    assert not at.exception
    shown = " ".join(plain(s.value) for s in at.success)
    assert want in shown and "documents reviewed" not in shown
    assert set(table(at, "documents")["documents"]) == {want}
