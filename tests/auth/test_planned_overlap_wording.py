"""The planned-overlap sentence (Agreement page, report) gives each count its noun's number: one planned decision
in one document is '1 decision (1 document) is planned', never '1 decisions (1 documents) are'."""

from __future__ import annotations

import pytest

from audit.review.assigned_review import planned_overlap_text


@pytest.mark.parametrize("planned,docs,done", [(1, 1, 0), (1, 1, 1), (2, 1, 1), (5, 2, 3)])
def test_planned_overlap_counts_take_their_nouns_number(planned, docs, done):
    text = planned_overlap_text({"double_coded": done, "planned_decisions": planned, "planned_documents": docs,
                                 "min_reviewers": 2})
    assert "1 decisions" not in text and "1 documents" not in text
    assert (f"{planned} decision{'s' * (planned != 1)} ({docs} document{'s' * (docs != 1)}) "
            f"{'is' if planned == 1 else 'are'} planned to be double-coded") in text
    if planned == 1:
        assert ("it has its 2 labels so far." if done else "it does not have its 2 labels yet.") in text
    else:
        assert f"{done} of the {planned} have their 2 labels so far." in text
