"""Whole-run scoring in the reference files' shapes: `score_run_json` (= `expected_*.json`) and `paper_details`
(= one paper of `details_*.json`: which gold material / item / configuration was paired with which prediction)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

from scoring.families.litxbench import hallucination
from scoring.families.litxbench.load import json_files, load_folder, load_paper, load_texts
from scoring.families.litxbench.match import NONE, Constraints, ItemMatch
from scoring.families.litxbench.model import Paper
from scoring.families.litxbench.score import (
    LITXBENCH_VERSION,
    SCORER,
    PaperResult,
    Solver,
    overall_report,
    paper_counts,
    paper_report,
)


def _items_detail(im: ItemMatch) -> dict:
    def side(it: object) -> dict:
        return {"type": it.type, "path": it.path, "what": it.what()}  # type: ignore[attr-defined]
    return {"matched": [{"target": side(im.gold[i]), "extracted": side(im.pred[j]), "score": s}
                        for i, j, s in im.pairs],
            "unmatched_target": [side(im.gold[i]) for i in im.unmatched_gold],
            "unmatched_extracted": [side(im.pred[j]) for j in im.unmatched_pred]}


def paper_details(r: PaperResult) -> dict:
    """The `details` block of one paper (paths, costs, scores, alignments, unmatched lists)."""
    mats = []
    for i, j, mp in r.matched:
        cm = mp.configs
        mats.append({
            "target": r.gold[i].path, "extracted": r.pred[j].path, "cost": mp.cost,
            "process_edit_distance": mp.alignment.distance,
            "process_alignment": [[None if a is None else mp.gold_events[a].kind.value,
                                   None if b is None else mp.pred_events[b].kind.value] for a, b in mp.alignment.steps],
            "items": _items_detail(mp.items),
            "configurations": {
                "matched": [{"target": cm.gold[a].path, "extracted": cm.pred[b].path, "score": cp.score,
                             "breakdown": dict(cp.breakdown), "items": _items_detail(cp.items)}
                            for a, b, cp in cm.pairs],
                "unmatched_target": [cm.gold[a].path for a in cm.unmatched_gold],
                "unmatched_extracted": [cm.pred[b].path for b in cm.unmatched_pred]},
        })
    return {"matched_materials": mats, "unmatched_target_materials": [r.gold[i].path for i in r.unmatched_gold],
            "unmatched_extracted_materials": [r.pred[j].path for j in r.unmatched_pred]}


def score_paper(gold: Paper, pred: Paper, text: str | None, cons: Constraints = NONE,
                with_details: bool = False) -> dict:
    """One paper's reference block (with `compare_seconds`, `not_found_values` and optionally `details`)."""
    t0 = time.perf_counter()
    result = Solver(gold, pred).solve(cons)
    counts = paper_counts(result, cons.relative)
    seconds = time.perf_counter() - t0
    h = hallucination.summary(hallucination.check(pred, text))
    out = paper_report(counts, h)
    out["compare_seconds"] = seconds
    out["hallucination"]["not_found_values"] = h["not_found_values"]
    out["_counts"] = counts
    if with_details:
        out["details"] = paper_details(result)
    return out


def score_run_json(gold: str | Path, pred: str | Path, text: str | Path | None = None, *, kind_mode: str = "enum",
                   with_details: bool = False, relative: bool = False) -> dict:
    """Score a run folder against a gold folder, in the shape of the reference `expected_*.json`.

    A gold paper without a prediction file counts as an empty extraction (`[]`); prediction files that name no
    gold paper are ignored (listed under `unknown_predictions`).
    """
    golds = load_folder(gold, kind_mode)
    pred_files = json_files(pred)
    texts, _ = load_texts(text, list(golds)) if text else ({}, list(golds))
    papers: dict[str, dict] = {}
    counts: dict[str, Mapping] = {}
    halluc: dict[str, Mapping] = {}
    missing = []
    for pid, g in golds.items():
        if pid in pred_files:
            p = load_paper(pred_files[pid], kind_mode)
        else:
            missing.append(pid)
            p = Paper(pid, [], "")
        block = score_paper(g, p, texts.get(pid), Constraints(relative=relative), with_details)
        counts[pid] = block.pop("_counts")
        halluc[pid] = block["hallucination"]
        papers[pid] = block
    overall = overall_report(counts, halluc)
    overall["compare_seconds_total"] = sum(b["compare_seconds"] for b in papers.values())
    return {"scorer": SCORER, "litxbench_version": LITXBENCH_VERSION, "kind_mode": kind_mode, "papers": papers,
            "overall": overall, "missing_predictions": missing,
            "unknown_predictions": sorted(set(pred_files) - set(golds))}
