"""Which decisions a review settles, in SQL, written once (issue 36: a review settles a question in every run that
asks it). A review `v` made on decision `d1` settles every decision `d2` with the same question key (same family,
same gold content of the document, same judge question; `scoring.families.base.decision_qkeys`), whichever run
either is in; a decision without a key (not yet keyed) is settled by its own reviews only. A review is a sample draw
only in the run whose queue served it.

The `run_reviews` view states the rule for every reader that can afford a view; it is history (migration m014, which
imports no application code), so it spells the rule itself, and tests/store/test_shared_reviews.py holds it and every
reader to a Python statement of the rule. The readers that take a faster path (from the newest reviews, from a few
decisions, from a run's sample draws, the runs that share a question: `audit/rescoring.py`, `audit/runs.py`,
`audit/review/sharing.py`, `database.newest_review`, #38) compose their queries from the conditions below, and no
other module spells them (the same test's guard)."""

from __future__ import annotations

SHARED_FROM = "reviews v CROSS JOIN decisions d1 CROSS JOIN decisions d2"
"""The tables of the shared branch, joined in this order (`CROSS JOIN` fixes SQLite's order: from the reviews)."""
SAME_QUESTION = "d1.qkey IS NOT NULL AND d2.qkey = d1.qkey"
"""Decision d2 asks decision d1's question (d2 = d1 included; the runs that share a question)."""
SETTLES_SHARED = f"d1.id = v.decision_id AND {SAME_QUESTION}"
"""Review v, made on decision d1, settles decision d2: d1's question, asked again."""
OWN_FROM = "reviews v CROSS JOIN decisions d1"
"""The tables of the branch for decisions without a key."""
SETTLES_OWN = "d1.id = v.decision_id AND d1.qkey IS NULL"
"""Review v settles only its own decision d1 (no question key)."""
