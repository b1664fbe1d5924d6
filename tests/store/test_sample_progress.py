"""Issue 40.2 / 40.7: the sample queue's words. A sighted card counts toward the target and says when the reviewer
may stop; a blind one says neither the stratum, nor why, nor how many more (all follow the judge's answers)."""

from __future__ import annotations

from audit.review.sample_progress import card_progress, sample_caption

NXT = {"doc": "2211.01142", "stratum": "no-match", "why": "minimum", "more_to_target": 58,
       "more_decisions_to_target": 40.0, "target_half_width": 0.03, "target_label": "entity F1",
       "sampled_documents": 7}


def test_the_sighted_card_counts_toward_the_target_and_says_when_to_stop():
    assert card_progress(NXT, blind=False).startswith("Sample: document 8 of ~65 to ±0.03 on entity F1")
    done = card_progress({**NXT, "more_to_target": 0, "sampled_documents": 26}, blind=False)
    assert "26 documents reviewed: you may stop" in done and "±0.03" in done
    assert "every document of the plan is reviewed" in card_progress(None, blind=False)


def test_nothing_of_the_judge_reaches_a_blind_reviewer():
    for text in (sample_caption(NXT, blind=True), card_progress(NXT, blind=True),
                 card_progress({**NXT, "more_to_target": 0}, blind=True)):
        for leak in ("no-match", "minimum", "stratum", "65", "58", "may stop"):
            assert leak not in text, (leak, text)
    assert "2211.01142" in sample_caption(NXT, blind=True)
    assert "stratum no-match, minimum" in sample_caption(NXT, blind=False)


def test_a_share_holder_is_not_told_a_co_reviewers_next_document():
    """Under an assigned review the caption named the run's next document, another reviewer's share."""
    for blind in (True, False):
        text = sample_caption(NXT, blind=blind, share=True)
        assert "2211.01142" not in text and text.startswith("Sample queue: your share of the plan's documents")
    assert "has reached ±0.03" in sample_caption({**NXT, "more_to_target": 0}, blind=False, share=True)
    assert "needs about 58 more documents (40 decisions)" in sample_caption(NXT, blind=False, share=True)
    assert "58" not in sample_caption(NXT, blind=True, share=True)
