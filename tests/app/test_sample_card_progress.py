"""Issue 40.7 on the classic card: the sample queue says which document of about how many reach the target (the
browser card's line, `audit.review.sample_progress`); blind, it says no count and no stratum (issue 40.2)."""

from __future__ import annotations

import re

from audit.review.sampling import create_plan
from tests.app.conftest import open_page, plain
from ui.state import BLIND_KEY

RUN = "demo-chimera-mixed"


def test_the_classic_sample_card_counts_toward_the_target_and_hides_it_when_blind(app, conn):
    create_plan(conn, RUN, seed=0)
    at = open_page(app, "queue", reviewer="ana", run=RUN)
    assert not at.exception and at.selectbox(key="queue.mode").value == "sample"
    words = " ".join(plain(c.value) for c in at.caption)
    assert re.search(r"Sample: document 1 of ~\d+ to ±0\.03", words) and "stratum" in words
    at.session_state[BLIND_KEY] = True  # the URL is read once per session (ui.state.adopt_url_settings)
    at = open_page(at, "queue", reviewer="bo", run=RUN)
    words = " ".join(plain(c.value) for c in at.caption)
    assert not at.exception and "Sample: document 1 ·" in words
    assert "stratum" not in words and "±0.03" not in words and not re.search(r"of ~\d+", words)


def test_the_sample_queue_takes_no_filter_so_every_label_it_serves_is_a_draw(app, conn):
    """A filter on the sample queue served a document that was not the plan's next draw, and each label given on it
    was refused ("not what the sample queue serves"): the filters are off there, and a filter typed in another queue
    does not carry over."""
    import pytest

    from audit.errors import AuditError
    from audit.review.queue import queue_ids
    from audit.review.sampling import next_sample

    create_plan(conn, RUN, seed=0)
    served = next_sample(conn, RUN)
    other = next(d for d, in conn.execute("SELECT DISTINCT doc_id FROM decisions d JOIN runs r ON r.id = d.run_id "
                                          "WHERE r.name = ? ORDER BY doc_id", [RUN]) if d != served["doc"])
    at = open_page(app, "queue", reviewer="ana", run=RUN, card="classic")
    at.selectbox(key="queue.mode").set_value("all").run()
    at.text_input(key="queue.doc").set_value(other).run()  # a filter typed in the "all" queue...
    at.selectbox(key="queue.mode").set_value("sample").run()  # ...then the sample queue
    assert not at.exception
    assert at.text_input(key="queue.doc").disabled and at.multiselect(key="queue.types").disabled
    assert at.session_state["queue.ids"][:len(served["decisions"])] == served["decisions"]  # the plan's draw first
    at.button(key="queue.label.0").click().run()  # label the first decision served: stored as a draw
    assert not at.exception
    row = conn.execute("SELECT decision_id, sampled FROM reviews WHERE reviewer = 'ana'").fetchone()
    assert row == (served["decisions"][0], 1)
    with pytest.raises(AuditError, match="takes no filter"):
        queue_ids(conn, RUN, "ana", "sample", doc=other)


def test_the_suggested_next_document_follows_the_labels(app, conn):
    """The sample queue's caption ("Suggested next: …; about N more documents") is read again at each label: once
    the served document is labelled whole, it names the next one (it named the finished one until a reload)."""
    from audit.review.sampling import next_sample

    create_plan(conn, RUN, seed=0)
    first = next_sample(conn, RUN)
    at = open_page(app, "queue", reviewer="ana", run=RUN, card="classic")
    assert not at.exception and at.selectbox(key="queue.mode").value == "sample"

    def suggested(at) -> str:
        (line,) = [plain(c.value) for c in at.caption if "Suggested next:" in plain(c.value)]
        return line

    assert f"Suggested next: {first['doc']} " in suggested(at)
    for _ in first["decisions"]:
        at.button(key="queue.label.0").click().run()
        assert not at.exception
    then = next_sample(conn, RUN)
    assert then["doc"] != first["doc"] and f"Suggested next: {then['doc']} " in suggested(at)
