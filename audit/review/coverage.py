"""How many documents a sampled estimate rests on, in one sentence every surface shows (Scores page, JSON exports,
`python -m audit estimate`): issue 40.3. Documents with no decision of the plan's kind are known exactly without
review; counting them as "reviewed" (the old "177 of 216 documents reviewed" after 30 sampled) overstated coverage.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping


def coverage(plan_docs: Collection[str], all_docs: Collection[str], sampled: Collection[str],
             known: Collection[str]) -> dict:
    """The counts behind the sentence and the sentence itself (`text`).

    `plan_docs`: documents with decisions of the plan's kind (its blocks); `all_docs`: every document of the run;
    `sampled`: plan documents reviewed whole through the sample queue; `known`: documents known exactly without
    sampling (no decision of the plan's kind, or reviewed whole outside the sample).

    >>> coverage({"a", "b", "c"}, {"a", "b", "c", "x", "y"}, {"a"}, {"x", "y", "b"})["text"]
    '1 sampled document (of 3 with decisions; 2 have none); 1 more reviewed whole outside the sample'
    """
    plan = set(plan_docs)
    row = {"sampled": len(set(sampled) & plan), "with_decisions": len(plan),
           "without_decisions": len(set(all_docs) - plan),
           "reviewed_outside_sample": len((set(known) & plan) - set(sampled))}
    return {**row, "text": coverage_text(row)}


def coverage_text(c: Mapping[str, int]) -> str:
    """`30 sampled documents (of 69 with decisions; 147 have none)`, and how many were reviewed whole outside the
    sample when any were (they count exactly, not as draws)."""
    n = c["sampled"]
    text = (f"{n} sampled document{'' if n == 1 else 's'} (of {c['with_decisions']} with decisions; "
            f"{c['without_decisions']} {'has' if c['without_decisions'] == 1 else 'have'} none)")
    if c.get("reviewed_outside_sample"):
        text += f"; {c['reviewed_outside_sample']} more reviewed whole outside the sample"
    return text
