"""Agreement of a run's reviews: human vs judge on every reviewed decision, and human vs human."""

from __future__ import annotations

from itertools import combinations

from sqlite_utils import Database

from audit.rescoring import reviews_by_decision
from audit.reviews import current_labels
from audit.store import run_row
from scoring.decisions import INVALID_LABEL
from scoring.families import get_task
from scoring.stats.agreement import group_stats, multi_rater_stats


def agreement_rows(db: Database, run: str) -> tuple[list[dict], list[dict], dict, int]:
    """Rows for human vs judge (one per reviewer and decision), human vs human (one per reviewer pair and
    decision), the multi-rater table {decision: {reviewer: label}}, and how many labels were left out because
    the judge's answer was unreadable."""
    row = run_row(db, run)
    by_dec = reviews_by_decision(db, row["id"])
    meta = {d["id"]: d for d in db.query(
        "SELECT id, doc_id, kind, type, left, right, judge_label FROM decisions WHERE run_id = ? AND id IN "
        "(SELECT decision_id FROM reviews WHERE run_id = ?)", [row["id"], row["id"]])}
    hvj, hvh, ratings = [], [], {}
    skipped_invalid = 0
    for dec_id, revs in by_dec.items():
        humans, _ = current_labels(revs)
        d = meta[dec_id]
        base = {"decision": dec_id, "kind": d["kind"], "type": d["type"], "doc": d["doc_id"], "left": d["left"],
                "right": d["right"]}
        if humans:
            ratings[str(dec_id)] = humans
        for who, label in sorted(humans.items()):
            if d["judge_label"] == INVALID_LABEL:
                skipped_invalid += 1
                continue
            hvj.append(base | {"reviewer": who, "human": label, "judge": d["judge_label"]})
        for (a, la), (b, lb) in combinations(sorted(humans.items()), 2):
            hvh.append(base | {"reviewer": f"{a} vs {b}", "human": la, "judge": lb})
    return hvj, hvh, ratings, skipped_invalid


def agreement(db: Database, run: str, *, n_resamples: int = 2000, seed: int = 0) -> dict:
    """`{"human_vs_judge": {group: stats}, "human_vs_human": {group: stats}, "multi_rater": {...}, ...}`.

    Human vs judge pairs each reviewer's current label with the judge's label, on every decision that reviewer
    labelled (decisions where the judge's answer was unreadable are left out and counted). Human vs human pairs
    the labels of every two reviewers on decisions both labelled (in `confusion`, rows are the reviewer first in
    alphabetical order); `multi_rater` gives Krippendorff's alpha over all reviewers. Groups are `all`, each
    decision kind and `kind/type`; kappa intervals resample documents.
    """
    hvj, hvh, ratings, skipped = agreement_rows(db, run)
    schemes = get_task(run_row(db, run)["task"]).label_schemes
    ordinal = {k: list(s.labels) for k, s in schemes.items() if s.scale == "ordinal"}
    positive = {k: s.positive for k, s in schemes.items() if s.positive is not None}
    opts = {"ordinal_kinds": ordinal, "positive": positive, "n_resamples": n_resamples, "seed": seed}
    return {
        "human_vs_judge": group_stats(hvj, **opts) if hvj else {},
        "human_vs_human": group_stats(hvh, **opts) if hvh else {},
        "multi_rater": multi_rater_stats(ratings) if ratings else {},
        "excluded_judge_invalid": skipped,
        "reviewers": sorted({r["reviewer"] for r in hvj} | {w for h in ratings.values() for w in h}),
    }
