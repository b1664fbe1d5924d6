"""Task families: what the shared shell (store, review pages, agreement, export) needs from a benchmark.

A family turns input files into documents, asks its judge for decisions, and turns per-document counts into
metrics. Counts are nested dicts of numbers so the shell can sum them without knowing the benchmark.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from scoring import chimera
from scoring.decisions import Decision
from scoring.errors import InputError
from scoring.judges import AnswerCache, Judge, JudgeStats, Progress, parse_judge_spec

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


class ChimeraTask:
    """CHIMERA recombination extraction (see scoring/chimera.py)."""

    name = "chimera"
    title = "CHIMERA recombination extraction"
    decision_labels = {chimera.KIND: ("match", "no-match")}
    outcomes = chimera.OUTCOMES

    def load(self, gold: str, pred: str, text: str | None = None) -> Loaded:
        if text:
            raise InputError(text, None, "CHIMERA takes no --text file: the abstracts are in the gold CSV")
        docs = chimera.load_gold(gold)
        lp = chimera.load_predictions(pred, [d.paper_id for d in docs])
        warnings = []
        if lp.missing:
            shown = ", ".join(lp.missing[:5]) + (" …" if len(lp.missing) > 5 else "")
            warnings.append(f"{len(lp.missing)} gold paper(s) have no prediction in {pred} and count as "
                            f"'no recombination': {shown}")
        return Loaded([(d, lp.predictions[d.paper_id]) for d in docs], warnings, lp.notes,
                      {"missing_predictions": lp.missing})

    def make_judge(self, spec: str) -> Judge:
        return parse_judge_spec(spec, normalise_type=chimera.normalise_name)

    def decide(self, loaded: Loaded, judge: Judge, cache: AnswerCache | None, progress: Progress | None,
               stats: JudgeStats | None = None) -> tuple[list[Decision], JudgeStats]:
        docs = [d for d, _ in loaded.docs]
        preds = {d.paper_id: p for d, p in loaded.docs}
        return chimera.decide(docs, preds, judge, cache, progress, stats)

    def judge_log(self, decisions: Sequence[Any]) -> list[dict]:
        """Replay-format lines (one per answered ordered pair) for decisions or decision rows."""
        return chimera.judge_log_records(decisions)

    def doc_id(self, doc: Any) -> str:
        return doc[0].paper_id

    def payload(self, doc: Any) -> dict:
        return chimera.doc_to_json(*doc)

    def counts(self, payload: Mapping, labels: Labels) -> dict:
        d, p = chimera.doc_from_json(payload)
        by_pair = {(t, left, right): lab for (_, t, left, right), lab in labels.items()}
        return chimera.doc_counts(d, p, chimera.match_fn_from_labels(by_pair))

    def outcome(self, payload: Mapping, counts: Mapping) -> str:
        d, p = chimera.doc_from_json(payload)
        return chimera.outcome(d, p, counts)  # type: ignore[arg-type]

    def metrics(self, total: Mapping) -> dict:
        full = chimera.sum_counts([total]) if total else chimera.empty_counts()
        return chimera.metrics_from_counts(full)


TASKS: dict[str, TaskFamily] = {"chimera": ChimeraTask()}


def get_task(name: str) -> TaskFamily:
    if name not in TASKS:
        raise InputError(name, None, f"unknown task {name!r}; available: {', '.join(TASKS)}")
    return TASKS[name]
