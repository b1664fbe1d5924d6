"""CHIMERA as a task family of the shell (see scoring/families/base.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scoring.decisions import Decision
from scoring.errors import InputError
from scoring.families.base import Labels, Loaded
from scoring.families.chimera import scorer as chimera
from scoring.judges.base import AnswerCache, Judge, JudgeStats, Progress, parse_judge_spec


class ChimeraTask:
    """CHIMERA recombination extraction (see scoring/families/chimera/scorer.py)."""

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
