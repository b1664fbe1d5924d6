"""The paper's human study of recombination prediction (`user_study_results.csv`), summarised as a worked example.

Each row: one annotator ranked 6 suggestions for one inspiration query (5 systems + the gold, `positive`) from 1
(best) to 6. Like the paper's `results_analysis.py`, figures per system leave out rows marked ill-defined
(`is_ill_defined == "checked"`) and give the mean and median rank and the "normalised rank" rank x knowledge_level / 6.

Agreement: no example was ranked by two annotators (every `example_id` occurs once), so item-level agreement
(Krippendorff's alpha over examples) cannot be computed. What can be measured is whether the annotators agree on
the ORDER OF THE SYSTEMS: each annotator's mean rank per system, ranked; Kendall's W over annotators (from the
Friedman statistic, tie-corrected: W = chi2 / (m (k - 1)) for m annotators and k systems) and Krippendorff's alpha
(ordinal) with annotators as coders and systems as units.
"""

from __future__ import annotations

import csv
import json
import statistics
from collections import defaultdict
from pathlib import Path

import krippendorff
import numpy as np
from scipy.stats import friedmanchisquare, rankdata

from scoring.errors import InputError

COLUMNS = ("example_id", "annotator", "baselines_results", "is_ill_defined", "knowledge_level")
GOLD_SYSTEM = "positive"
"""The key of the gold answer among the ranked suggestions."""


def _read(path: Path) -> list[dict]:
    rows = []
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(str(path), 1, f"missing columns: {', '.join(missing)}")
        for row in reader:
            line = reader.line_num
            try:
                results = json.loads(row["baselines_results"])
                ranks = {name: int(r["rank"]) for name, r in results.items()}
                level = int(row["knowledge_level"])
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
                raise InputError(str(path), line, f"unreadable baselines_results or knowledge_level: {e}") from None
            if sorted(ranks.values()) != list(range(1, len(ranks) + 1)):
                raise InputError(str(path), line, f"ranks must be a permutation of 1..{len(ranks)}, got {ranks}")
            rows.append({"example_id": row["example_id"], "annotator": row["annotator"], "ranks": ranks,
                         "ill_defined": row["is_ill_defined"].strip() == "checked", "knowledge_level": level,
                         "suggestions": {name: r.get("suggestion") for name, r in results.items()}})
    if not rows:
        raise InputError(str(path), None, "no rows")
    return rows


def _system_figures(rows: list[dict]) -> dict:
    by_system: dict[str, list[int]] = defaultdict(list)
    norm: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        for name, rank in r["ranks"].items():
            by_system[name].append(rank)
            norm[name].append(rank * r["knowledge_level"] / 6)
    return {name: {"n": len(v), "mean_rank": statistics.fmean(v), "median_rank": statistics.median(v),
                   "mean_normalized_rank": statistics.fmean(norm[name]),
                   "median_normalized_rank": statistics.median(norm[name]),
                   "ranked_first": sum(x == 1 for x in v) / len(v)}
            for name, v in sorted(by_system.items(), key=lambda kv: statistics.fmean(kv[1]))}


def _agreement(rows: list[dict], systems: list[str]) -> dict:
    by_annotator: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_annotator[r["annotator"]].append(r)
    annotators = sorted(by_annotator)
    mean_ranks = np.array([[statistics.fmean(r["ranks"][s] for r in by_annotator[a]) for s in systems]
                           for a in annotators])
    orders = np.array([rankdata(row) for row in mean_ranks])
    m, k = mean_ranks.shape
    out: dict = {
        "examples_with_several_annotators": 0,
        "item_level": None,
        "item_level_note": "every example was ranked by one annotator only: no item-level agreement can be computed",
        "annotators": annotators,
        "systems": systems,
        "annotator_system_order": {a: dict(zip(systems, map(float, orders[i]), strict=True))
                                   for i, a in enumerate(annotators)},
    }
    if m >= 3 and k >= 3:
        chi2, p = friedmanchisquare(*mean_ranks.T)
        out["kendalls_w"] = float(chi2) / (m * (k - 1))
        out["friedman_chi2"], out["friedman_p"] = float(chi2), float(p)
    else:
        out["kendalls_w"] = None
    out["krippendorff_alpha_ordinal"] = float(krippendorff.alpha(reliability_data=orders,
                                                                 level_of_measurement="ordinal"))
    return out


def user_study_summary(path: str | Path) -> dict:
    """Mean human rank per system (ill-defined rows left out, as in the paper) and annotator agreement.

    Returns {"rows", "examples", "ill_defined", "annotators": {name: rows}, "systems": {system: {"n", "mean_rank",
    "median_rank", "mean_normalized_rank", "median_normalized_rank", "ranked_first"}} (best mean rank first; the
    gold is `positive`), "systems_all_rows": {system: mean rank with ill-defined rows kept}, "agreement": {...}}.

    Raises:
        InputError: missing columns, unreadable JSON, ranks that are not a permutation.
    """
    path = Path(path)
    rows = _read(path)
    if len({r["example_id"] for r in rows}) != len(rows):
        raise InputError(str(path), None, "an example_id occurs twice: item-level agreement would be possible, "
                                          "but this summary assumes one annotator per example")
    kept = [r for r in rows if not r["ill_defined"]]
    systems = _system_figures(kept)
    annotators: dict[str, int] = defaultdict(int)
    for r in rows:
        annotators[r["annotator"]] += 1
    return {
        "rows": len(rows),
        "examples": len({r["example_id"] for r in rows}),
        "ill_defined": len(rows) - len(kept),
        "annotators": dict(sorted(annotators.items())),
        "systems": systems,
        "systems_all_rows": {s: v["mean_rank"] for s, v in _system_figures(rows).items()},
        "agreement": _agreement(kept, list(systems)),
    }
