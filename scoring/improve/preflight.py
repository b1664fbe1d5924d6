"""Before fitting anything: are the humans consistent enough to learn from, and are there enough documents?

- Human-human agreement (Krippendorff's alpha on the decisions two or more people reviewed) below `min_alpha`: refuse
  — the labels are the problem, not the judge. No decision reviewed twice, or fewer than `MIN_DOUBLE`: said, and the
  check goes on.
- Fewer reviewed documents than the minimum (`MIN_DOCUMENTS`, and at least two per fold): refuse with the number
  still needed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scoring.nouns import Noun

STRATEGIES = ("threshold", "calibrate", "few-shot", "rules")
LLM_STRATEGIES = ("few-shot", "rules")
"""The strategies that ask an LLM judge (its answers cached like any other)."""
DEFAULT_K = 4
"""few-shot: examples per question (enough to show both answers, short enough for a 2048-token context)."""
DEFAULT_MIN_ALPHA = 0.667
"""Krippendorff's (2004) lowest alpha from which tentative conclusions are drawn; the user may change it."""
MIN_DOUBLE = 10
"""Decisions reviewed twice below which alpha is shown but does not refuse: one disagreement on one spot-checked
decision gave alpha 0 and stopped the command."""
MIN_DOCUMENTS = 20
"""Reviewed documents below which no judge is fitted (issue #37: at most 20). Fewer make the out-of-sample change
too noisy to show anything: 15 documents found a real gain of 0.15-0.28 in only 5 of 20 seeds (§2 of
tables-and-trained-judges.md)."""


@dataclass(frozen=True)
class Preflight:
    refusal: str | None
    """Why nothing is fitted (None: go on)."""
    notes: list[str] = field(default_factory=list)
    """What the user should see even when it goes on."""
    documents_needed: int = 0
    """More reviewed documents needed (0: enough)."""


def _ci(ci: tuple[float, float] | list[float] | None) -> str:
    return f", 95% interval [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ", no interval"


def preflight(alpha: float | None, n_double: int, n_documents: int, *, folds: int,
              min_alpha: float = DEFAULT_MIN_ALPHA, min_documents: int = MIN_DOCUMENTS,
              alpha_ci: tuple[float, float] | list[float] | None = None) -> Preflight:
    """The pre-flight verdict from human-human alpha (None: undefined) with its interval (`alpha_ci`, shown
    beside it), the decisions reviewed by two or more people, the reviewed documents and the fold count.

    >>> preflight(0.4, 30, 40, folds=5).refusal[:37]
    'human-human agreement is too low (alp'
    >>> preflight(0.0, 1, 40, folds=5).refusal is None  # one decision reviewed twice: said, not a refusal
    True
    >>> p = preflight(None, 0, 12, folds=5)
    >>> p.documents_needed, p.notes
    (8, ['no decision was reviewed by two or more people: human-human agreement is unknown'])
    """
    notes = []
    if n_double == 0:
        notes.append("no decision was reviewed by two or more people: human-human agreement is unknown")
    elif alpha is None:
        notes.append(f"human-human agreement is undefined on the {Noun('decision').count(n_double)} reviewed twice")
    elif n_double < MIN_DOUBLE:
        notes.append(f"human-human agreement alpha {alpha:.3f}{_ci(alpha_ci)}, on only "
                     f"{Noun('decision').count(n_double)} reviewed twice: too few to judge the labels by (the check "
                     f"needs {MIN_DOUBLE}), so it goes on")
    elif alpha < min_alpha:
        return Preflight(f"human-human agreement is too low (alpha {alpha:.3f}{_ci(alpha_ci)}, on "
                         f"{Noun('decision').count(n_double)} reviewed "
                         f"by two or more people, below the minimum {min_alpha:g}): the labels are the problem, not "
                         "the judge; settle the disagreements (adjudicate, clarify the guideline) or lower the "
                         "minimum human alpha (--min-alpha)", notes)
    else:
        notes.append(f"human-human agreement alpha {alpha:.3f}{_ci(alpha_ci)}, on "
                     f"{Noun('decision').count(n_double)} reviewed twice (minimum {min_alpha:g})")
    needed = max(min_documents, 2 * folds)
    if n_documents < needed:
        return Preflight(f"too few reviewed documents: {n_documents} reviewed, {needed} needed for {folds}-fold "
                         f"cross-fitting; review {Noun('more document', 'more documents').count(needed - n_documents)}",
                         notes, needed - n_documents)
    return Preflight(None, notes)
