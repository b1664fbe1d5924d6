"""A median metric (retrieval's median rank) on a board's sampling plan: the single-run rule
(`audit.review.sampling.median_headline`: the median of the difference-estimated distribution function, a
stratified bootstrap fixed-n interval, an anytime one), run on each system's documents with the board's strata and
the board's sample, so a system's median reads as its run's own plan would give it on the same draws.

A block of the board is one gold document; the single-run rule resamples documents, so it applies as is when each
run has one document per block. A run with a gold document repeated (two documents in one block) would have them
drawn together, which a per-document bootstrap does not know: the board then gives no interval and says why,
rather than a too narrow one.
"""

from __future__ import annotations

from audit.review.sampling import median_headline
from scoring.families.base import MetricCell


def median_cells(task) -> list[MetricCell]:
    """The family's headline cells a sample estimates as a median (`TaskFamily.sampled_by`)."""
    return [c for c in task.headline if task.sampled_by(c) == "median"]


def board_median(state, run: str, cell: MetricCell) -> tuple[dict, dict]:
    """(estimate entry, bias entry) of a median `cell` for one run of a board plan (`audit.board.joint.BoardState`),
    in `board_estimates`' shape."""
    documents = state.stored.documents
    repeated = next((b for b in documents if len(documents[b][run]) > 1), None)
    view = state.views[run]
    if repeated is not None:
        note = (f"run {run!r} has {len(documents[repeated][run])} documents with the gold of {repeated!r}: a median's "
                "interval resamples documents, and these would be drawn together, so none is given")
        judge_only = cell.value(view.original_metrics)
        return ({"value": None, "ci": None, "se": None, "label": cell.label, "interval": "fixed-n (bootstrap)",
                 "anytime": {"interval": "anytime", "ci": None, "note": note}, "judge_only": judge_only,
                 "audited": cell.value(view.audit.metrics), "note": note},
                {"value": None, "ci": None})
    sampled_blocks, certain_blocks = state.system_sample(run)

    def docs(blocks) -> dict[str, None]:
        return {d: None for b in blocks for d in documents[b][run]}  # median_headline reads the keys

    strata = {d: state.strata[b] for b in documents for d in documents[b][run]}
    options = view.row["inputs"].get("options") or {}
    h = median_headline(view, state.stored.plan, cell, docs(sampled_blocks), docs(certain_blocks), strata, options)
    return ({"value": h["estimate"], "ci": h["ci"], "se": None, "label": cell.label, "interval": h["interval"],
             "anytime": {"interval": "anytime", "ci": h["anytime"]["ci"], "note": h["anytime"]["note"]},
             "judge_only": h["judge_only"], "audited": h["reviewed_so_far"], "note": h["note"],
             "method": h["method"], "how": h["how"], "n_documents_sampled": h["n_documents_sampled"],
             "n_documents_known": h["n_documents_known"], "n_documents": h["n_total"]},
            {"value": h["bias"], "ci": h["bias_ci"]})

