"""A fifth family, for tests only: does a system's answer equal the gold answer, as a string?

It plugs in by the registry alone (`TASKS.register("toy", "devtools.toy_family:ToyTask")`), with its view in
`devtools/toy_view.py` (named by `view_module`) and its demo data in `tests/fixtures/toy/`, so the family
contract battery (`tests/families/test_contract.py`) shows that a family kept outside `scoring/families/` and
`ui/families/` gets every shell service (store, review, re-scoring, export, CLI) without a shell file changing.

Documents are questions; the one decision kind, `answer`, is the unordered pair {predicted answer, gold answer}
(a question without a predicted answer has none and counts as unanswered). The `exact` judge says `match` iff
the two strings are equal after trimming spaces; `replay:PATH` reads the judge log (`LOG_FORMAT`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scoring.decisions import MATCH, NO_MATCH, Decision
from scoring.errors import InputError, JudgeSpecError
from scoring.families.base import DemoRun, FamilyBase, InputSpec, Labels, LabelScheme, Loaded, MetricCell, Noun
from scoring.jsonl import read_records
from scoring.judges.answer import INVALID, JudgeStats
from scoring.judges.registry import JudgeOptions
from scoring.judges.transport import AnswerCache, Judge, Progress

KIND = "answer"
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "toy"
LOG_FORMAT = 'JSON lines: {"id", "pred", "gold", "label": "match"|"no-match"} — one per answered question'


def _records(path: str, fields: tuple[str, ...]) -> list[tuple[int, dict]]:
    out = []
    for lineno, rec in read_records(path):
        for f in fields:
            if not isinstance(rec.get(f), str):  # type: ignore[union-attr] (read_records: objects)
                raise InputError(path, lineno, f"field {f!r} must be a string")
        out.append((lineno, rec))
    return out  # type: ignore[return-value]


class ExactJudge(Judge):
    """`exact`: equal after trimming spaces."""

    spec = "exact"

    def label(self, doc: str, pred: str, gold: str) -> str:  # noqa: ARG002 (the replay judge needs the doc)
        return MATCH if pred.strip() == gold.strip() else NO_MATCH


class ReplayJudge(Judge):
    """`replay:PATH`: labels read from a judge log (`LOG_FORMAT`); a pair the log lacks is `invalid`."""

    def __init__(self, path: str) -> None:
        self.spec = f"replay:{path}"
        self.labels: dict[tuple[str, str, str], str] = {}
        for lineno, rec in _records(path, ("id", "pred", "gold", "label")):
            if rec["label"] not in (MATCH, NO_MATCH):
                raise InputError(path, lineno, f"label must be {MATCH} or {NO_MATCH}, got {rec['label']!r}")
            self.labels[(rec["id"], rec["pred"], rec["gold"])] = rec["label"]

    def label(self, doc: str, pred: str, gold: str) -> str:
        return self.labels.get((doc, pred, gold), INVALID)


class ToyTask(FamilyBase):
    """Exact string match of one answer per question (test-only)."""

    name = "toy"
    title = "Toy exact-match QA (tests only)"
    doc_noun = Noun("question")
    label_schemes = {KIND: LabelScheme("binary", (MATCH, NO_MATCH), positive=MATCH, symmetric=True,
                                       keys={MATCH: "a", NO_MATCH: "o"})}
    outcomes = ("correct", "wrong", "unanswered")
    inputs = (InputSpec("gold", "Gold answers", 'JSON lines {"id", "question", "answer"}', suffixes=("jsonl",)),
              InputSpec("pred", "Predicted answers", 'JSON lines {"id", "answer"}', suffixes=("jsonl",)))
    judge_specs = ("exact",)
    headline = (MetricCell(("accuracy",), "accuracy"), MetricCell(("coverage",), "answered"))
    view_module = "devtools.toy_view"  # type: ignore[assignment] (the base's default is a property)

    def demo_runs(self, data_dir: Path) -> list[DemoRun]:  # noqa: ARG002 (its data live with the tests)
        return [DemoRun("demo-toy", {"gold": str(FIXTURES / "gold.jsonl"), "pred": str(FIXTURES / "pred.jsonl")},
                        "exact", "hand-written answers to eight questions")]

    def load(self, inputs: Mapping[str, str]) -> Loaded:
        gold = _records(inputs["gold"], ("id", "question", "answer"))
        pred = {r["id"]: r["answer"] for _, r in _records(inputs["pred"], ("id", "answer"))}
        ids = [r["id"] for _, r in gold]
        warnings = [f"{len(set(pred) - set(ids))} predicted answer(s) name no gold question"] \
            if set(pred) - set(ids) else []
        docs = [{"id": r["id"], "question": r["question"], "gold": r["answer"], "pred": pred.get(r["id"])}
                for _, r in gold]
        return Loaded(docs, warnings)

    def make_judge(self, spec: str, options: JudgeOptions | None = None) -> Judge:  # noqa: ARG002 (none applies)
        name, _, arg = spec.strip().partition(":")
        if name == "exact" and not arg:
            return ExactJudge()
        if name == "replay" and arg:
            return ReplayJudge(arg)
        raise JudgeSpecError(f"the toy family compares strings itself and asks no model: judge 'exact' or "
                             f"'replay:PATH', got {spec!r}")

    def decide(self, loaded: Loaded, judge: Judge, cache: AnswerCache | None,  # noqa: ARG002 (nothing to cache)
               progress: Progress | None, stats: JudgeStats | None = None) -> tuple[list[Decision], JudgeStats]:
        stats = stats or JudgeStats()
        out = []
        for i, d in enumerate(loaded.docs, 1):
            if d["pred"] is not None:
                label = judge.label(d["id"], d["pred"], d["gold"])  # type: ignore[attr-defined]
                stats.distinct_queries += 1
                stats.missing += label == INVALID
                out.append(Decision(d["id"], KIND, "", d["pred"], d["gold"], label, {"exact": d["pred"] == d["gold"]}))
            if progress:
                progress(i, len(loaded.docs))
        return out, stats

    def doc_id(self, doc: Any) -> str:
        return doc["id"]

    def payload(self, doc: Any) -> dict:
        return dict(doc)

    def counts(self, payload: Mapping, labels: Labels) -> dict:
        pred, gold = payload["pred"], payload["gold"]
        label = None if pred is None else labels.get((KIND, "", pred, gold), labels.get((KIND, "", gold, pred)))
        return {"n": 1, "answered": int(pred is not None), "correct": int(label == MATCH)}

    def outcome(self, payload: Mapping, counts: Mapping) -> str:  # noqa: ARG002 (the counts say it all)
        return "unanswered" if not counts["answered"] else "correct" if counts["correct"] else "wrong"

    def metrics(self, total: Mapping, per_doc: Sequence[Mapping] | None = None,
                options: Mapping[str, str] | None = None) -> dict:
        n = total.get("n", 0)
        return {"n": n, "correct": total.get("correct", 0), "answered": total.get("answered", 0),
                "accuracy": total.get("correct", 0) / n if n else 0.0,
                "coverage": total.get("answered", 0) / n if n else 0.0}

    def metric_rows(self, metrics: Mapping) -> list[dict]:
        return [{"section": "all", "type": "answers", "accuracy": metrics["accuracy"],
                 "coverage": metrics["coverage"], "n": metrics["n"]}]

    def judge_log(self, decisions: Sequence[Any]) -> list[dict]:
        out = []
        for d in decisions:
            get = d.get if isinstance(d, Mapping) else lambda k, _d=d: getattr(_d, k, None)
            label = get("judge") or get("judge_label")
            if label in (MATCH, NO_MATCH):  # an invalid label is a missing line: replayed, it is invalid again
                out.append({"id": get("doc") or get("doc_id"), "pred": get("left"), "gold": get("right"),
                            "label": label})
        return out

    def describe_judge_log(self) -> str:
        return LOG_FORMAT

    def sampling_stratum(self, decisions: Sequence[Mapping]) -> str:
        return "matched" if all(d["judge"] == MATCH for d in decisions) else "has-misses"
