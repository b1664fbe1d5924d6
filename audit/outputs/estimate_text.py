"""The estimated full-review score in words, the one way every paper-facing surface says it (the report's
headline, the LaTeX table and its caption, the Scores page): the estimate with both intervals, each labelled
(`fixed-n`: valid for a number of reviews fixed in advance; `anytime`: valid however the reviewer decided when to
stop, docs/anytime.md), and a number no review can change said to be exact rather than given a zero-width
interval."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from audit.numbers import EMPTY, format_value
from scoring.families.base import NOT_REVIEWABLE, MetricCell, TaskFamily

FIXED_N = "95% interval (fixed-n)"
ANYTIME = "95% interval (anytime)"
INTERVALS_EXPLAINED = ("fixed-n: valid if the number of reviews was fixed before reviewing; anytime: valid however "
                       "the reviewer decided when to stop")


@dataclass(frozen=True)
class EstimateLine:
    """One headline metric's estimate of a full human review, from the run's sampling plan."""

    cell: MetricCell
    estimate: float | None
    fixed_n: tuple[float, float] | None
    anytime: tuple[float, float] | None
    judge_only: float | None
    reviewed_so_far: float | None
    n_sampled: int | None
    note: str
    estimator: str = ""
    """Set when the estimate is not the plain difference estimator (a judge improved on these reviews: the
    cross-fitted one), in words; every surface that says the estimate says this too."""

    @property
    def label(self) -> str:
        return self.cell.label

    @property
    def reviewable(self) -> bool:
        return self.cell.reviewable

    def words(self, fmt=None) -> str:
        """`entity F1 (macro avg) 0.4127, 95% interval [0.3860, 0.4395] (fixed-n), [0.3738, 0.4517] (anytime)`;
        a number no review changes as exact; a missing interval with its reason. `fmt` formats one number
        (default `format_value` in the cell's unit)."""
        one = fmt or (lambda v: format_value(v, self.cell.unit))
        head = f"{self.label} {one(self.estimate)}"
        if not self.reviewable:
            return f"{head} ({NOT_REVIEWABLE})"
        if self.fixed_n is None:
            return f"{head}, no interval yet" + (f": {self.note}" if self.note else "")
        any_text = interval_text(self.anytime, one) if self.anytime else "none yet"
        how = f" ({self.estimator})" if self.estimator else ""
        return f"{head}, 95% interval {interval_text(self.fixed_n, one)} (fixed-n), {any_text} (anytime){how}"


def interval_text(ci: tuple[float, float] | list | None, one) -> str:
    """`[low, high]` with `one` formatting each end; `–` without an interval."""
    return f"[{one(ci[0])}, {one(ci[1])}]" if ci else EMPTY


def estimate_lines(task: TaskFamily, estimates: Mapping) -> list[EstimateLine]:
    """The lines of `audit.review.sampling.estimate`'s (or an export's `sampling[...]["estimate"]`) result, in the
    family's headline order; [] without a plan."""
    out = []
    for cell in task.headline:
        e = estimates.get("/".join(cell.path))
        if not e:
            continue
        ci, anytime = e.get("ci"), (e.get("anytime") or {}).get("ci")
        out.append(EstimateLine(cell, e.get("estimate"), tuple(ci) if ci else None,
                                tuple(anytime) if anytime else None, e.get("judge_only"), e.get("reviewed_so_far"),
                                e.get("n_documents_sampled"), e.get("note") or "", e.get("estimator") or ""))
    return out


def export_estimates(data: Mapping) -> dict:
    """The headline estimates in an export (`audit.outputs.export.export_json`): its plan over all decision kinds, else
    its first plan; {} without a plan. The report and the LaTeX table read the same one."""
    from audit.review.sampling import ALL_KINDS

    sampling = data.get("sampling") or {}
    chosen = sampling.get(ALL_KINDS) or next(iter(sampling.values()), {})
    return chosen.get("estimate") or {}
