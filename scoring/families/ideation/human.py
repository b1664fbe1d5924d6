"""Human ratings worked example: Si et al. (2024) expert reviews of 147 research ideas (data/ideation/).

Every idea has 2-4 reviews on 1-10 scales; conditions Human, AI, AI_Rerank (49 ideas each). 41 reviews appear
twice, under an AI idea and under an AI_Rerank idea (the same proposal sat in both conditions: 18 idea pairs
share all their reviews). `deduplicate` merges each such pair into one unit and keeps one copy of each review
(337 -> 296 reviews, 147 -> 129 ideas) before any statistic that pools conditions.

Scales: `to_five(s) = 1 + 4 (s - 1) / 9` maps 1-10 linearly onto the judge's 1-5 (ideation.md section 6).
Agreement (Krippendorff's alpha, ICC) does not change under that linear map; means do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from scoring.families.ideation.model import CRITERIA
from scoring.stats.agreement import krippendorff_alpha
from scoring.stats.bootstrap import N_RESAMPLES, SEED, ratio_interval

DATA = Path(__file__).resolve().parents[3] / "data" / "ideation"
SCORES_CSV = DATA / "si2024_ideation_scores.csv"
CONDITIONS = ("Human", "AI", "AI_Rerank")
SCALE_NOTE = "Si et al. scores are on 1-10; mapped to 1-5 as s5 = 1 + 4 (s10 - 1) / 9 (linear)"


def to_five(s10: float) -> float:
    """1-10 -> 1-5, linear: 1 -> 1, 10 -> 5."""
    return 1 + 4 * (s10 - 1) / 9


def load_reviews(path: str | Path = SCORES_CSV) -> pd.DataFrame:
    """The tidy review table (one row per review; idea ids whitespace-stripped; `unit` = idea id)."""
    df = pd.read_csv(path, dtype={"idea_id": str, "condition": str, "topic": str})
    df["idea_id"] = df["idea_id"].str.strip()
    df["unit"] = df["idea_id"]
    return df


def deduplicate(df: pd.DataFrame) -> pd.DataFrame:
    """Merge ideas that share reviews into one unit (named by the first idea id, sorted) and keep one copy of
    each shared review (the first by `review_idx`). Rows that are not duplicates are untouched."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    dup = df[df["is_cross_condition_duplicate"]]
    for _, ideas in dup.groupby("shared_review_group")["idea_id"]:
        roots = sorted({find(i) for i in ideas})
        for r in roots[1:]:
            parent[r] = roots[0]
    out = df.sort_values("review_idx").copy()
    out["unit"] = [find(i) for i in out["idea_id"]]
    out = out[~(out["is_cross_condition_duplicate"] & out.duplicated("shared_review_group"))]
    return out.reset_index(drop=True)


def _column(criterion: str) -> str:
    if criterion not in CRITERIA:
        raise KeyError(f"unknown criterion {criterion!r}; expected one of {', '.join(CRITERIA)}")
    return f"{criterion}_score"


def icc1(df: pd.DataFrame, criterion: str) -> float | None:
    """One-way random-effects ICC(1) over units (unbalanced: k0 = (N - sum n_i^2 / N) / (k - 1)).

    ICC(1) = (MSB - MSW) / (MSB + (k0 - 1) MSW); None with fewer than two units or no within-unit spread.
    Reference: Shrout & Fleiss (1979); McGraw & Wong (1996) for unequal group sizes.
    """
    col = _column(criterion)
    g = df.groupby("unit")[col]
    n = g.size().to_numpy(dtype=float)
    k, total = len(n), n.sum()
    if k < 2 or total <= k:
        return None
    means = g.mean().to_numpy()
    grand = df[col].mean()
    msb = float((n * (means - grand) ** 2).sum() / (k - 1))
    msw = float(((df[col] - g.transform("mean")) ** 2).sum() / (total - k))
    k0 = (total - (n ** 2).sum() / total) / (k - 1)
    denom = msb + (k0 - 1) * msw
    return float((msb - msw) / denom) if denom else None


def alpha_ordinal(df: pd.DataFrame, criterion: str) -> float | None:
    """Krippendorff's alpha (ordinal) over units; raters are anonymous, so each unit's reviews fill rater slots
    in review order (alpha depends only on the values within each unit)."""
    col = _column(criterion)
    groups = [list(v) for _, v in df.sort_values("review_idx").groupby("unit")[col]]
    width = max((len(g) for g in groups), default=0)
    data = [[g[r] if r < len(g) else None for g in groups] for r in range(width)]
    return krippendorff_alpha(data, level="ordinal", labels=list(range(1, 11))) if data else None


def reviewer_pairs(df: pd.DataFrame, criterion: str) -> dict:
    """Same-unit review pairs (every pair of reviews of a unit, in review order): count, mean absolute
    difference, exact agreement, Pearson r."""
    col = _column(criterion)
    xs, ys = [], []
    for _, v in df.sort_values("review_idx").groupby("unit")[col]:
        vals = list(v)
        for i in range(len(vals)):
            for j in range(i + 1, len(vals)):
                xs.append(vals[i])
                ys.append(vals[j])
    x, y = np.asarray(xs, float), np.asarray(ys, float)
    r = float(np.corrcoef(x, y)[0, 1]) if len(x) > 1 and x.std() and y.std() else None
    return {"n_pairs": len(x), "mean_abs_diff": float(np.abs(x - y).mean()) if len(x) else None,
            "exact_agreement": float((x == y).mean()) if len(x) else None, "pearson_r": r}


def idea_spread(df: pd.DataFrame, criterion: str) -> pd.DataFrame:
    """Per unit: condition, n reviews, mean, min, max, range and standard deviation (ddof = 1) on 1-10."""
    col = _column(criterion)
    g = df.groupby("unit")
    out = pd.DataFrame({"condition": g["condition"].first(), "n": g[col].size(), "mean": g[col].mean(),
                        "min": g[col].min(), "max": g[col].max(), "sd": g[col].std(ddof=1)})
    out["range"] = out["max"] - out["min"]
    return out


def condition_means(df: pd.DataFrame, criterion: str, *, five: bool = False, n_resamples: int = N_RESAMPLES,
                    seed: int = SEED) -> dict:
    """{condition: {"mean", "ci", "n_reviews", "n_ideas"}}: mean over reviews, 95% bootstrap interval resampling
    ideas (the idea is the cluster). `five` maps scores to 1-5 first (`to_five`)."""
    col = _column(criterion)
    out = {}
    for cond in CONDITIONS:
        sub = df[df["condition"] == cond]
        vals = sub[col].map(to_five) if five else sub[col]
        per = vals.groupby(sub["unit"]).agg(["sum", "size"])
        out[cond] = {"mean": float(vals.mean()) if len(vals) else None,
                     "ci": ratio_interval(per["sum"].tolist(), per["size"].tolist(), n_resamples=n_resamples,
                                          seed=seed),
                     "n_reviews": int(len(vals)), "n_ideas": int(len(per))}
    return out


def _clean(v: float | None) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v


def human_reference(path: str | Path = SCORES_CSV, criteria: Sequence[str] = CRITERIA, *,
                    n_resamples: int = N_RESAMPLES, seed: int = SEED) -> dict:
    """The human-human ceiling and condition gaps of Si et al. (2024), for a page beside judge-human agreement.

    Agreement statistics use the de-duplicated reviews (units = distinct proposals); condition means keep every
    review (a proposal in two conditions counts in both), on 1-10 and mapped to 1-5.
    """
    raw = load_reviews(path)
    dedup = deduplicate(raw)
    out: dict = {"source": "Si, Yang, Hashimoto (2024), arXiv 2409.04109; NoviScl/AI-Researcher (MIT)",
                 "scale_note": SCALE_NOTE,
                 "n_reviews": int(len(raw)), "n_ideas": int(raw["idea_id"].nunique()),
                 "n_duplicate_reviews": int(len(raw) - len(dedup)),
                 "n_reviews_dedup": int(len(dedup)), "n_units_dedup": int(dedup["unit"].nunique()),
                 "criteria": {}}
    for c in criteria:
        spread = idea_spread(dedup, c)
        out["criteria"][c] = {
            "alpha_ordinal": _clean(alpha_ordinal(dedup, c)),
            "icc1": _clean(icc1(dedup, c)),
            "icc1_with_duplicates": _clean(icc1(raw, c)),
            **reviewer_pairs(dedup, c),
            "mean_idea_range": float(spread["range"].mean()),
            "condition_means": condition_means(raw, c, n_resamples=n_resamples, seed=seed),
            "condition_means_1_5": condition_means(raw, c, five=True, n_resamples=n_resamples, seed=seed),
        }
    return out
