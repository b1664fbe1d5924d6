"""The `threshold` strategy: a judge that says yes when a similarity score reaches a threshold (fuzzy, embed) gets
the threshold that maximises Cohen's kappa against the humans on the fitting documents, with the kappa-vs-threshold
curve.

A decision may rest on several answers (CHIMERA asks both span orders), each with its own score, and the family's
rule turns the answers into a label (`TaskFamily.label_from_answers`). At threshold t the answers whose score is at
least t say yes; so a decision's label depends only on how many of its scores reach t, and `scored` works out its
label for each count once, with the family's rule. An answer without a score (unreadable, missing) keeps its value at
every threshold.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from scoring.improve.crossfit import Item, Model
from scoring.judges.answer import NO, YES, Answer
from scoring.stats.agreement import kappas_of_tables

SCORE_DECIMALS = 6
"""Scores are rounded in the threshold's unit, so a fuzzy ratio of 72 read back as 0.72 * 100 still reaches 72."""


@dataclass(frozen=True)
class Scored:
    """A decision's answers as the threshold sees them."""

    scores: tuple[float, ...]
    """The scored answers' scores in the threshold's unit, highest first."""
    labels_by_count: tuple[str, ...]
    """The decision's label when the c highest scores reach the threshold, c = 0 .. len(scores)."""


def scored(values: Sequence[str], scores: Sequence[float | None], label_of: Callable[[list[str]], str],
           scale: float = 1.0) -> Scored:
    """A decision's `Scored` from its answers' values and scores (None: no score, the value is kept), `label_of`
    (the family's rule, answers in the question order) and the threshold's unit (`scale` times the score).

    >>> both_yes = lambda a: "match" if a == ["yes", "yes"] else "no-match"
    >>> scored(["no", "no"], [0.7, 0.9], both_yes, scale=100)
    Scored(scores=(90.0, 70.0), labels_by_count=('no-match', 'no-match', 'match'))
    """
    ranked = sorted((i for i, s in enumerate(scores) if s is not None), key=lambda i: -scores[i])  # type: ignore[operator]
    labels = []
    for c in range(len(ranked) + 1):
        answers = list(values)
        for rank, i in enumerate(ranked):
            answers[i] = YES if rank < c else NO
        labels.append(label_of(answers))
    return Scored(tuple(round(float(scores[i]) * scale, SCORE_DECIMALS) for i in ranked),  # type: ignore[arg-type]
                  tuple(labels))


def scored_from_answers(answers: Sequence[Answer], label_of: Callable[[list[str]], str], scale: float) -> Scored:
    """`scored` from a judge's answers to a decision's questions: a yes or no answer's score counts (an answer the
    comparator gave without a score scored 0), any other answer (unreadable, missing) keeps its value."""
    return scored([a.value for a in answers],
                  [(a.score or 0.0) if a.value in (YES, NO) else None for a in answers], label_of, scale)


def _count_codes(items: Sequence[Item], thresholds: Sequence[float], codes: dict[str, int]) -> np.ndarray:
    """Each item's label code at each threshold, shape (items, thresholds)."""
    width = max((len(i.features.scores) for i in items), default=0)
    scores = np.full((len(items), width), -np.inf)
    by_count = np.zeros((len(items), width + 1), dtype=np.int64)
    coded: dict[tuple[str, ...], list[int]] = {}  # few distinct label rows; a refit bootstrap asks this 10^4-10^5 times
    for r, i in enumerate(items):
        n = len(i.features.scores)
        scores[r, :n] = i.features.scores
        row = coded.get(i.features.labels_by_count)
        if row is None:
            row = coded[i.features.labels_by_count] = [codes.setdefault(lab, len(codes))
                                                       for lab in i.features.labels_by_count]
        by_count[r, :n + 1] = row
    counts = (scores[:, :, None] >= np.asarray(thresholds, dtype=float)[None, None, :]).sum(axis=1)
    return np.take_along_axis(by_count, counts, axis=1)


def labels_at(items: Sequence[Item], thresholds: Sequence[float]) -> list[list[str]]:
    """Each item's label at each threshold: [threshold][item]."""
    codes: dict[str, int] = {}
    at = _count_codes(items, thresholds, codes)
    names = list(codes)
    return [[names[c] for c in at[:, t]] for t in range(len(thresholds))]


def kappa_curve(items: Sequence[Item], grid: Sequence[float], labels: Sequence[str]) -> list[float | None]:
    """Cohen's kappa of the items' labels at each threshold of `grid` against their human labels (None where
    undefined). A label outside `labels` (an unreadable answer) leaves the decision out at that threshold."""
    codes = {lab: i for i, lab in enumerate(labels)}
    k = len(labels)
    judge = _count_codes(items, grid, codes)  # labels outside the scale get codes >= k
    human = np.array([codes[i.human] for i in items], dtype=np.int64)
    keep = judge < k
    t_index = np.broadcast_to(np.arange(len(grid))[None, :], judge.shape)
    cells = (t_index * k * k + human[:, None] * k + judge)[keep]
    tables = np.bincount(cells, minlength=len(grid) * k * k).reshape(len(grid), k, k)
    kappas, defined = kappas_of_tables(tables)
    out: list[float | None] = [None] * len(grid)
    for t, value in zip(np.flatnonzero(defined), kappas, strict=True):
        out[int(t)] = round(float(value), 12)
    return out


def best_threshold(grid: Sequence[float], curve: Sequence[float | None], original: float) -> float:
    """The middle of the widest run of neighbouring grid points where kappa is highest (a plateau's middle is the
    threshold least tied to the fitting documents' exact scores); runs equally wide: the one nearest `original`.
    No defined kappa: `original`."""
    defined = [v for v in curve if v is not None]
    if not defined:
        return original
    top = max(defined)
    runs: list[list[float]] = []
    for i, (t, v) in enumerate(zip(grid, curve, strict=True)):
        if v is not None and v == top:
            if runs and i > 0 and curve[i - 1] == top:
                runs[-1].append(t)
            else:
                runs.append([t])
    widest = max(len(r) for r in runs)
    best = min((r for r in runs if len(r) == widest), key=lambda r: min(abs(t - original) for t in r))
    return best[(len(best) - 1) // 2]


def fit_threshold(items: Sequence[Item], grid: Sequence[float], labels: Sequence[str], original: float) -> Model:
    """`{"threshold", "kappa_fit", "n_fit", "curve": [[t, kappa], ...]}` from these items alone."""
    curve = kappa_curve(items, grid, labels) if items else [None] * len(grid)
    t = best_threshold(grid, curve, original)
    return {"threshold": t, "kappa_fit": curve[list(grid).index(t)] if t in grid else None, "n_fit": len(items),
            "curve": [[g, v] for g, v in zip(grid, curve, strict=True)]}


def apply_threshold(model: Model, items: Sequence[Item]) -> list[str]:
    return labels_at(items, [model["threshold"]])[0] if items else []
