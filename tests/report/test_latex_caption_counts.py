"""The LaTeX table's caption counts reviewed decisions in the right number ("1 decision reviewed", never
"1 decisions"), at every count a paper might print."""

from __future__ import annotations

import re

from audit.outputs.export import export_latex
from audit.review.reviews import add_review
from audit.views import decisions

RUN = "mixed"  # the CHIMERA demo run of `db_with_run`


def _caption(db) -> str:
    return re.search(r"\\caption\{(.*?)\}\n", export_latex(db, RUN), re.S).group(1)


def test_the_caption_says_how_many_decisions_were_reviewed_in_the_right_number(db_with_run):
    ids = [d["id"] for d in decisions(db_with_run, RUN)][:2]
    assert "0 decisions reviewed," in _caption(db_with_run)
    add_review(db_with_run, RUN, ids[0], "no-match", "ana")
    assert "1 decision reviewed," in _caption(db_with_run)
    add_review(db_with_run, RUN, ids[1], "no-match", "ana")
    assert "2 decisions reviewed," in _caption(db_with_run)
