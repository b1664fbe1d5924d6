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
