"""Scoring a run in memory, for notebooks and scripts: no dashboard, no database.

    >>> from scoring.run import score
    >>> run = score("chimera", {"gold": "data/chimera/eval.csv", "pred": "data/chimera/pred_perfect.jsonl"}, "exact")
    >>> round(run.metrics["entities"]["avg"]["f1"], 4)
    1.0
    >>> run.decisions_frame().columns.tolist()[:5]
    ['doc', 'kind', 'type', 'left', 'right']

`score(...).relabel({decision key: label})` re-scores with reviewed labels without asking the judge again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scoring.decisions import Decision
from scoring.families import get_task
from scoring.families.base import Loaded, TaskFamily
from scoring.judges.answer import JudgeStats


@dataclass
class ScoredRun:
    """A run scored in memory: its family, documents, decisions (one per judge question) and metrics."""

    task: TaskFamily
    loaded: Loaded
    decisions: list[Decision]
    metrics: dict
    stats: JudgeStats
    options: dict = field(default_factory=dict)

    def relabel(self, labels: Mapping[tuple[str, str, str, str, str], str]) -> dict:
        """Metrics with some decisions relabelled: keys are `Decision.key` (doc, kind, type, left, right)."""
        return _metrics(self.task, self.loaded, self.decisions, labels, self.options)

    def decisions_frame(self) -> Any:
        """The decisions as a pandas DataFrame: doc, kind, type, left, right, judge."""
        import pandas as pd

        return pd.DataFrame([{"doc": d.doc, "kind": d.kind, "type": d.type, "left": d.left, "right": d.right,
                              "judge": d.judge} for d in self.decisions],
                            columns=["doc", "kind", "type", "left", "right", "judge"])

    def metrics_frame(self) -> Any:
        """The family's metric rows (section, type, precision, recall, f1, ...) as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.task.metric_rows(self.metrics))


def _metrics(task: TaskFamily, loaded: Loaded, decisions: list[Decision],
             override: Mapping[tuple, str], options: Mapping[str, str]) -> dict:
    by_doc: dict[str, dict] = {}
    for d in decisions:
        by_doc.setdefault(d.doc, {})[(d.kind, d.type, d.left, d.right)] = override.get(d.key, d.judge)
    per_doc = []
    for doc in loaded.docs:
        per_doc.append(task.counts(task.payload(doc), by_doc.get(task.doc_id(doc), {})))
    return task.aggregate(per_doc, options)


def score(task_name: str, inputs: Mapping[str, str], judge_spec: str | None = None,
          options: Mapping[str, str] | None = None) -> ScoredRun:
    """Load the inputs (paths by the family's input names), ask the judge (no cache), aggregate.

    Raises:
        InputError, JudgeSpecError: as the CLI reports them.
    """
    task = get_task(task_name)
    loaded = task.load(dict(inputs))
    judge = task.make_judge(judge_spec or task.judge_specs[0])
    decisions, stats = task.decide(loaded, judge, None, None)
    opts = dict(options or {})
    return ScoredRun(task, loaded, decisions, _metrics(task, loaded, decisions, {}, opts), stats, opts)
