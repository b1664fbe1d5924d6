"""Task families: what the shared shell (store, review pages, agreement, export) needs from a benchmark.

A family turns input files into documents, asks its judge for decisions, and turns per-document counts into
metrics. Counts are nested dicts of numbers so the shell can sum them without knowing the benchmark.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from scoring.decisions import Decision
from scoring.judges.base import AnswerCache, Judge, JudgeStats, Progress

Labels = Mapping[tuple[str, str, str, str], str]
"""Effective label per (kind, type, left, right) within one document."""


@dataclass
class Loaded:
    """Validated inputs of one run, ready for `decide`."""

    docs: list[Any]
    """Task-specific document objects, in input order."""
    warnings: list[str] = field(default_factory=list)
    """Things the user should know (e.g. gold papers with no prediction), shown with the run."""
    notes: list[str] = field(default_factory=list)
    """Normalisations applied while loading."""
    extra: dict = field(default_factory=dict)


class TaskFamily(Protocol):
    name: str
    title: str
    decision_labels: dict[str, tuple[str, ...]]
    """Allowed labels per decision kind."""
    outcomes: tuple[str, ...]

    def load(self, gold: str, pred: str, text: str | None = None) -> Loaded: ...

    def make_judge(self, spec: str) -> Judge: ...

    def decide(self, loaded: Loaded, judge: Judge, cache: AnswerCache | None, progress: Progress | None,
               stats: JudgeStats | None = None) -> tuple[list[Decision], JudgeStats]: ...

    def doc_id(self, doc: Any) -> str: ...

    def payload(self, doc: Any) -> dict:
        """JSON-able form of one document (gold and prediction), stored once per run."""
        ...

    def counts(self, payload: Mapping, labels: Labels) -> dict:
        """Per-document counts under the given effective labels (missing pairs count as no-match)."""
        ...

    def outcome(self, payload: Mapping, counts: Mapping) -> str: ...

    def metrics(self, total: Mapping) -> dict:
        """The task's metrics JSON from counts summed over documents."""
        ...


def add_nested(total: dict, part: Mapping, sign: int = 1) -> dict:
    """total += sign * part, for nested dicts of numbers (in place; returns total)."""
    for k, v in part.items():
        if isinstance(v, Mapping):
            add_nested(total.setdefault(k, {}), v, sign)
        else:
            total[k] = total.get(k, 0) + sign * v
    return total


def sum_nested(parts: Iterable[Mapping]) -> dict:
    total: dict = {}
    for p in parts:
        add_nested(total, p)
    return total
