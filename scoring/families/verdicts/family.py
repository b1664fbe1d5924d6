"""Judged items (the verdicts of an eval framework's judge) as a task family of the shell (scoring/families/base.py).

Documents are items (`model.py`); a decision is one scorer's verdict on one item, of the kind its scheme names,
with the scorer as its type. The judge cannot be asked again: `recorded` reads the verdicts the framework kept in
the items file, `replay:PATH` a judge log of this family (`LOG_FORMAT`). Metrics per scorer are the mean verdict
value (accuracy, pass rate or mean score, as the framework reports it) and the headline is one scorer's, the
first item's first (`model.with_headline`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scoring.decisions import Decision
from scoring.errors import InputError, JudgeSpecError
from scoring.families.base import (
    DemoRun,
    FamilyBase,
    InputSpec,
    Labels,
    LabelScheme,
    Loaded,
    MetricCell,
    Noun,
    content_hash,
)
from scoring.families.verdicts.model import (
    CORRECT,
    CPI,
    FAILED,
    INCORRECT,
    INVALID,
    ITEMS_FORMAT,
    NOANSWER,
    PARTIAL,
    PASS_FAIL,
    PASSED,
    SCORE,
    Verdict,
    decision_sides,
    load_items,
    verdicts_of,
)
from scoring.jsonl import read_records
from scoring.judges.answer import JudgeStats
from scoring.judges.registry import JudgeOptions
from scoring.judges.transport import AnswerCache, Judge, Progress

RECORDED = "recorded"
DEMO_FILE = Path("verdicts") / "inspect_demo_items.jsonl"
"""The bundled demo run, relative to the data folder: a real Inspect log's items (data/verdicts/SOURCE.md)."""
LOG_FORMAT = ('JSON lines {"id", "scorer", "label", "value"}: one recorded verdict per item and scorer (label as '
              "the family names it, value as the framework recorded it); an item's scorer the log lacks is invalid")
OUTCOMES = ("correct", "partial", "incorrect")


class RecordedJudge(Judge):
    """`recorded`: the verdicts the framework kept (the items file's); nothing is asked."""

    spec = RECORDED

    def identity(self) -> dict:
        return {"spec": self.spec, "rule": "the verdicts the eval framework recorded (its judge is not asked again)"}

    def label(self, item_id: str, v: Verdict) -> str:  # noqa: ARG002 (the replay judge needs the id)
        return v.label


class VerdictReplayJudge(Judge):
    """`replay:PATH`: labels read from a judge log in `LOG_FORMAT`; an (item, scorer) the log lacks is invalid."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.spec = f"replay:{path}"
        self.labels: dict[tuple[str, str], str] = {}
        for line, rec in read_records(path, what="judge log"):
            item, scorer, label = (rec.get(k) for k in ("id", "scorer", "label"))  # type: ignore[union-attr]
            if not all(isinstance(x, str) for x in (item, scorer, label)):
                raise InputError(path, line, "'id', 'scorer' and 'label' must be strings")
            old = self.labels.get((item, scorer))  # type: ignore[arg-type]
            if old is not None and old != label:
                raise InputError(path, line, f"conflicting labels for item {item!r}, scorer {scorer!r}")
            self.labels[(item, scorer)] = label  # type: ignore[index]
        if not self.labels:
            raise InputError(path, None, "the judge log has no verdicts")

    def identity(self) -> dict:
        return {"spec": self.spec, "verdicts": len(self.labels)}

    def label(self, item_id: str, v: Verdict) -> str:
        return self.labels.get((item_id, v.scorer), INVALID)


class VerdictsTask(FamilyBase):
    """An eval framework's judged items: review its judge's verdicts, audit its reported scores."""

    name = "verdicts"
    title = "Judged items (an eval framework's judge verdicts)"
    doc_noun = Noun("item", article="an")
    label_schemes = {
        CPI: LabelScheme("ordinal", (INCORRECT, PARTIAL, CORRECT), judge_only=(NOANSWER,),
                         titles={CORRECT: "C (correct)", PARTIAL: "P (partially correct)", INCORRECT: "I (incorrect)",
                                 NOANSWER: "N (no answer)"},
                         keys={CORRECT: "y", PARTIAL: "h", INCORRECT: "x"}),
        PASS_FAIL: LabelScheme("binary", (PASSED, FAILED), positive=PASSED, keys={PASSED: "a", FAILED: "f"}),
        SCORE: LabelScheme("binary", (PASSED, FAILED), positive=PASSED,
                           titles={PASSED: "pass (meets the threshold)", FAILED: "fail (misses the threshold)"},
                           keys={PASSED: "a", FAILED: "f"}),
    }
    kind_titles = {CPI: "graded C/P/I", PASS_FAIL: "pass/fail", SCORE: "score with threshold"}
    outcomes = OUTCOMES
    unanswered_counts_as = "0 (not passed)"
    inputs = (InputSpec("items", "Judged items", ITEMS_FORMAT, suffixes=("jsonl",)),)
    judge_specs = (RECORDED,)
    headline = (MetricCell(("headline", "mean"), "mean verdict (accuracy / pass rate / mean score)", "headline"),)

    def demo_runs(self, data_dir: Path) -> list[DemoRun]:
        path = Path(data_dir) / DEMO_FILE
        if not path.is_file():
            return []
        return [DemoRun("demo-verdicts-inspect", {"items": str(path)}, RECORDED,
                        "a tiny QA task run by Inspect AI with its mockllm model and graded by model_graded_fact "
                        "(data/verdicts/SOURCE.md): review the grader's verdicts",
                        judge_derived=())]

    def load(self, inputs: Mapping[str, str]) -> Loaded:
        extra = sorted(set(inputs) - {"items"})
        if extra:
            raise InputError(str(inputs[extra[0]]), None, f"judged items take only --items, not --{extra[0]}")
        if not inputs.get("items"):
            raise InputError("items", None, "judged items need --items (JSON lines)")
        return Loaded(load_items(inputs["items"]))

    def make_judge(self, spec: str, options: JudgeOptions | None = None) -> Judge:  # noqa: ARG002 (none applies)
        name, _, arg = spec.strip().partition(":")
        if name == RECORDED and not arg:
            return RecordedJudge()
        if name == "replay" and arg:
            return VerdictReplayJudge(arg)
        raise JudgeSpecError(f"judged items keep the verdicts their framework recorded and this family asks no model "
                             f"again: judge {RECORDED!r} or 'replay:PATH', got {spec!r}")

    def decide(self, loaded: Loaded, judge: Judge, cache: AnswerCache | None,  # noqa: ARG002 (nothing to cache)
               progress: Progress | None, stats: JudgeStats | None = None) -> tuple[list[Decision], JudgeStats]:
        stats = stats or JudgeStats()
        out = []
        for i, item in enumerate(loaded.docs, 1):
            for v in verdicts_of(item):
                label = judge.label(item["id"], v)  # type: ignore[attr-defined]
                stats.distinct_queries += 1
                stats.missing += label == INVALID and v.label != INVALID
                left, right = decision_sides(item, v)
                detail = {"value": v.value, "recorded_label": v.label,
                          **({"threshold": v.threshold} if v.threshold is not None else {}),
                          **({"lower_is_better": True} if v.lower_is_better else {}),
                          **{k: getattr(v, k) for k in ("answer", "explanation", "prompt") if getattr(v, k)}}
                out.append(Decision(item["id"], v.scheme, v.scorer, left, right, label, detail))
            if progress:
                progress(i, len(loaded.docs))
        return out, stats

    def doc_id(self, doc: Any) -> str:
        return doc["id"]

    def payload(self, doc: Any) -> dict:
        return dict(doc)

    def counts(self, payload: Mapping, labels: Labels) -> dict:
        """Per scorer: `n` (1 when the item has its decision) and `sum` (the verdict's worth under its effective
        label); `headline` is the headline scorer's (a payload stored before it was named: the first verdict's)."""
        scorers: dict[str, dict] = {}
        headline = {"n": 0, "sum": 0.0}
        head = payload.get("headline")
        for i, v in enumerate(verdicts_of(payload)):
            left, right = decision_sides(payload, v)
            label = labels.get((v.scheme, v.scorer, left, right))
            if label is None:
                continue
            worth = v.worth(label)
            scorers[v.scorer] = {"n": 1, "sum": worth}
            if (v.scorer == head) if head is not None else i == 0:
                headline = {"n": 1, "sum": worth}
        return {"headline": headline, "scorers": scorers}

    def outcome(self, payload: Mapping, counts: Mapping) -> str:
        """The headline verdict's worth; an item the headline scorer did not judge (another lm-eval filter, a
        DeepEval case without that metric) takes its own first verdict's, not "incorrect"."""
        h = counts["headline"]
        if not h["n"]:
            own = counts.get("scorers") or {}
            first = next((own[v["scorer"]] for v in payload["verdicts"] if own.get(v["scorer"], {}).get("n")), None)
            h = first or h
        value = h["sum"] / h["n"] if h["n"] else 0.0
        return "correct" if value >= 1 else "incorrect" if value <= 0 else "partial"

    def metrics(self, total: Mapping, per_doc: Sequence[Mapping] | None = None,
                options: Mapping[str, str] | None = None) -> dict:
        def mean(c: Mapping) -> dict:
            n = c.get("n", 0)
            return {"n": n, "mean": c.get("sum", 0.0) / n if n else 0.0}

        return {"headline": mean(total.get("headline", {})),
                "scorers": {s: mean(c) for s, c in sorted((total.get("scorers") or {}).items())}}

    def metric_rows(self, metrics: Mapping) -> list[dict]:
        return [{"section": "scorers", "type": s, "mean": m["mean"], "n": m["n"]}
                for s, m in metrics["scorers"].items()]

    def metric_bounds(self, cell: MetricCell) -> tuple[float, float] | None:  # noqa: ARG002 (one cell)
        """None: a scorer's numbers need not lie in [0, 1] (a mean of raw scores)."""
        return None

    def judge_log(self, decisions: Sequence[Any]) -> list[dict]:
        out = []
        for d in decisions:
            get = d.get if isinstance(d, Mapping) else lambda k, _d=d: getattr(_d, k, None)
            label = get("judge") or get("judge_label")
            detail = get("detail") or {}
            if label != INVALID:  # an invalid label is a missing line: replayed, it is invalid again
                out.append({"id": get("doc") or get("doc_id"), "scorer": get("type"), "label": label,
                            "value": detail.get("value")})
        return out

    def describe_judge_log(self) -> str:
        return LOG_FORMAT

    def question_key(self, payload: Mapping, decision: Mapping) -> str:
        """The verdict on one sample in one epoch (the item's id): each epoch is its own grading, so two epochs with
        the same output are two questions; runs imported from the same log share them."""
        return content_hash([payload["id"], decision["kind"], decision["type"], decision["left"], decision["right"]])

    def sampling_stratum(self, decisions: Sequence[Mapping]) -> str:
        """Items by the set of judge labels their verdicts carry (`C`, `I`, `fail/pass`, ...)."""
        return "/".join(sorted({d["judge"] for d in decisions})) or "no verdict"


__all__ = ["VerdictsTask", "FAILED", "PASSED"]
