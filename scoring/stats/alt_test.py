"""The alternative annotator test: can the judge replace one of the human annotators? (docs/alt-test.md)

Calderon, Reichart & Dror (ACL 2025), "The Alternative Annotator Test for LLM-as-a-Judge". For each human j in
turn, on the items j labelled that at least one other human labelled too: the judge's alignment with the remaining
humans, S(judge, i, j), against j's own, S(h_j, i, j) (accuracy for nominal labels, negative RMSE for ordinal
ones); W_judge = 1[S_judge >= S_human], W_human = 1[S_human >= S_judge]. The judge's advantage probability
rho_j = mean W_judge. One-sided paired test of H0: mean(W_human - W_judge) >= epsilon (a one-sample t-test of the
differences against epsilon, alternative "less"); the m p-values are corrected by Benjamini-Yekutieli at q. The
winning rate omega is the share of humans whose H0 is rejected; the judge passes when omega >= 0.5. rho is the mean
of the rho_j, for comparing judges.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
from scipy.stats import false_discovery_control, ttest_1samp

from scoring.nouns import Noun

SCORINGS = ("accuracy", "neg_rmse")
EPSILON = 0.2
"""The paper's suggestion for expert annotators (0.15 skilled, 0.1 crowd workers)."""
MIN_HUMANS_PER_ITEM = 2
MIN_ITEMS_PER_HUMAN = 30
"""The authors' code's defaults: an item needs the left-out human and at least one other; a human needs 30 such
items for the t-test."""
MIN_HUMANS = 2
RECOMMENDED_HUMANS = 3
"""The authors' code runs with two humans; the paper recommends at least three (and 50-100 items): below that the
verdict carries a warning."""


@dataclass(frozen=True)
class AnnotatorResult:
    annotator: str
    n_items: int
    rho_judge: float
    rho_human: float
    p_value: float
    p_adjusted: float
    judge_wins: bool


@dataclass(frozen=True)
class AltTestResult:
    scoring: str
    epsilon: float
    q: float
    annotators: list[AnnotatorResult]
    skipped: dict[str, str] = field(default_factory=dict)
    """Humans left out, with why (too few shared items)."""
    n_items: int = 0
    undefined: str | None = None
    """Why no verdict can be given (fewer than two humans tested), else None."""
    warning: str | None = None
    """Why a verdict should be read with care (fewer humans than the paper recommends), else None."""

    @property
    def winning_rate(self) -> float | None:
        return None if self.undefined else sum(a.judge_wins for a in self.annotators) / len(self.annotators)

    @property
    def advantage_probability(self) -> float | None:
        return None if self.undefined else float(np.mean([a.rho_judge for a in self.annotators]))

    @property
    def passes(self) -> bool | None:
        w = self.winning_rate
        return None if w is None else w >= 0.5

    def to_json(self) -> dict:
        return {"scoring": self.scoring, "epsilon": self.epsilon, "q_fdr": self.q, "n_items": self.n_items,
                "winning_rate": self.winning_rate, "advantage_probability": self.advantage_probability,
                "passes": self.passes, "undefined": self.undefined, "warning": self.warning,
                "annotators": [asdict(a) for a in self.annotators], "skipped": dict(self.skipped)}


def alignment(scoring: str, label: float | Hashable, others: Sequence) -> float:
    """S(label, others): the share of `others` equal to `label` (accuracy) or minus their RMSE from it."""
    if scoring == "accuracy":
        return sum(label == o for o in others) / len(others)
    if scoring == "neg_rmse":
        return -math.sqrt(sum((float(label) - float(o)) ** 2 for o in others) / len(others))
    raise ValueError(f"scoring must be one of {', '.join(SCORINGS)}, got {scoring!r}")


def _p_value(diffs: Sequence[int], epsilon: float) -> float:
    """One-sided p of H0: mean(diffs) >= epsilon. Constant differences have no variance for the t-test: the mean is
    then known exactly, so p is 0 when it is below epsilon and 1 otherwise."""
    if len(set(diffs)) == 1:
        return 0.0 if diffs[0] < epsilon else 1.0
    return float(ttest_1samp(diffs, epsilon, alternative="less").pvalue)


def alt_test(judge: Mapping[Hashable, object], humans: Mapping[str, Mapping[Hashable, object]], *,
             scoring: str = "accuracy", epsilon: float = EPSILON, q: float = 0.05,
             min_humans_per_item: int = MIN_HUMANS_PER_ITEM,
             min_items_per_human: int = MIN_ITEMS_PER_HUMAN) -> AltTestResult:
    """The test of `judge` ({item: label}) against `humans` ({annotator: {item: label}})."""
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {', '.join(SCORINGS)}, got {scoring!r}")
    if not (math.isfinite(epsilon) and 0 <= epsilon < 1):
        raise ValueError(f"epsilon must be in [0, 1), got {epsilon!r}")
    by_item: dict[Hashable, dict[str, object]] = {}
    for h, labels in humans.items():
        for item, label in labels.items():
            if item in judge:
                by_item.setdefault(item, {})[h] = label
    kept = {i: hs for i, hs in by_item.items() if len(hs) >= min_humans_per_item}
    rows: list[tuple[str, int, float, float, float]] = []
    skipped: dict[str, str] = {}
    for h in sorted(humans):
        items = [i for i, hs in kept.items() if h in hs]
        if len(items) < min_items_per_human:
            skipped[h] = f"{Noun('item').count(len(items))} shared with another human (needs {min_items_per_human})"
            continue
        w_judge, w_human = [], []
        for i in items:
            rest = [lab for other, lab in kept[i].items() if other != h]
            s_judge, s_human = alignment(scoring, judge[i], rest), alignment(scoring, kept[i][h], rest)
            w_judge.append(int(s_judge >= s_human))
            w_human.append(int(s_human >= s_judge))
        diffs = [a - b for a, b in zip(w_human, w_judge, strict=True)]
        rows.append((h, len(items), float(np.mean(w_judge)), float(np.mean(w_human)), _p_value(diffs, epsilon)))
    undefined = warning = None
    if len(rows) < MIN_HUMANS:
        undefined = (f"{Noun('human').count(len(rows))} with {min_items_per_human}+ items shared with another human; "
                     f"the test needs at least {MIN_HUMANS}")
    elif len(rows) < RECOMMENDED_HUMANS:
        warning = (f"only {len(rows)} humans tested: the paper recommends at least {RECOMMENDED_HUMANS} "
                   "(each left-out human is compared with the one other)")
    adjusted = list(false_discovery_control([r[4] for r in rows], method="by")) if rows else []
    annotators = [AnnotatorResult(h, n, rj, rh, p, float(pa), bool(pa <= q))
                  for (h, n, rj, rh, p), pa in zip(rows, adjusted, strict=True)]
    return AltTestResult(scoring, epsilon, q, annotators, skipped, len(kept), undefined, warning)
