"""`overall_report` given each paper's levels (`metrics_from_total` computes them once for the paper reports and the
macro mean, #38) is the report computed from the counts alone, for any counts (fractional true positives included,
where the order of additions shows)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.families.litxbench.family import metrics_from_total
from scoring.families.litxbench.score import LEVELS, overall_report, paper_report

_level = st.fixed_dictionaries({"tp": st.sampled_from([0, 1, 2, 0.5, 1 / 3, 2.25]), "target": st.integers(0, 4),
                                "extracted": st.integers(0, 4)})
_paper = st.fixed_dictionaries({lv: _level for lv in LEVELS}, optional={
    "hallucination": st.fixed_dictionaries({"total_numbers": st.integers(0, 9), "numbers_not_found": st.integers(0, 3),
                                            "numbers_found": st.integers(0, 9)}),
    "total_cost": st.floats(0, 5), "edit_distance": st.integers(0, 4)})


@settings(max_examples=120, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=4), _paper, max_size=6))
def test_given_levels_equal_levels_computed_afresh(papers):
    halluc = {pid: c.get("hallucination", {}) for pid, c in papers.items()}
    levels = {pid: paper_report(c, halluc[pid])["multi_level"] for pid, c in papers.items()}
    assert overall_report(papers, halluc, levels=levels) == overall_report(papers, halluc)
    assert metrics_from_total({"papers": papers})["overall"] == overall_report(papers, halluc)
