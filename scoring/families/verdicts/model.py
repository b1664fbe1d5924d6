"""Judged items: the verdicts an eval framework's LLM judge (or any scorer) recorded, in one file format.

A block is one item, a sample (or sample × epoch) of the framework's run: its input, the system's output, the
reference(s), and one verdict per scorer. A verdict keeps the scorer's value as the framework recorded it and,
where kept, the answer the scorer extracted, its explanation (the judge's reply) and the prompt it was asked.

The items file is JSON lines, one item each (`ITEMS_FORMAT`); importers (`scoring.families.verdicts.importers`)
write it from a framework's own log, and anyone can write it by hand.

Label schemes, one decision kind each (`SCHEMES`):

- `graded_cpi`: Inspect's C / P / I (correct, partial, incorrect), with N (no answer) only the judge gives;
  worth 1, 0.5, 0, 0 as Inspect's `value_to_float` reads them.
- `pass_fail`: a boolean verdict (promptfoo's `pass`, DeepEval's `success`); worth 1 or 0.
- `thresholded_score`: a number and its threshold (DeepEval's `score` against `threshold`): label `pass` when
  the number reaches the threshold, or, for a metric where lower is better (`lower_is_better`: DeepEval's
  toxicity, bias and hallucination pass at or below theirs), when it stays at or below it. Worth the number itself
  while the label is the recorded one; a reviewer who overrules it gives the passing or the failing end of [0, 1]
  (1 for `pass`, 0 for `fail`; the other way round where lower is better): a score in [0, 1] is assumed when a
  review overrules one.

Every verdict is worth the number above; a scorer's metric is the mean over items (accuracy for C/P/I, the pass
rate for pass/fail, the mean score for scores), which is what the frameworks report, so the unreviewed aggregate
is the framework's own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from scoring.errors import InputError
from scoring.jsonl import json_type, read_records
from scoring.limits import MAX_ID_CHARS, MAX_ITEM_TEXT_CHARS, MAX_SYSTEM_NAME_CHARS

CPI, PASS_FAIL, SCORE = "graded_cpi", "pass_fail", "thresholded_score"
SCHEMES = (CPI, PASS_FAIL, SCORE)
CORRECT, PARTIAL, INCORRECT, NOANSWER = "C", "P", "I", "N"
PASSED, FAILED = "pass", "fail"
INVALID = "invalid"
CPI_VALUES = {CORRECT: 1.0, PARTIAL: 0.5, INCORRECT: 0.0, NOANSWER: 0.0}
"""Inspect's `value_to_float` for its grade letters."""

ITEMS_FORMAT = (
    'JSON lines, one judged item each: {"id", "input", "output", "target": [references], "verdicts": [{"scorer", '
    f'"scheme": "{CPI}" | "{PASS_FAIL}" | "{SCORE}", "value": "C"|"P"|"I"|"N" | true|false | number, '
    '"threshold" (scores), optional "lower_is_better" (scores: true when a score passes at or below its threshold), '
    'optional "answer", "explanation", "prompt"}], optional "source": {framework ids}}; the '
    "first item's first verdict names the headline scorer, whose verdict on each item counts toward the headline")
TEXT_FIELDS = ("answer", "explanation", "prompt")


@dataclass(frozen=True)
class Verdict:
    """One scorer's recorded verdict on one item."""

    scorer: str
    scheme: str
    value: str | bool | float
    threshold: float | None = None
    answer: str | None = None
    explanation: str | None = None
    prompt: str | None = None
    lower_is_better: bool = False
    """A score that passes at or below its threshold (DeepEval's toxicity, bias, hallucination)."""

    @property
    def label(self) -> str:
        """The label the recorded value gives under its scheme."""
        if self.scheme == CPI:
            return str(self.value) if self.value in CPI_VALUES else INVALID
        if self.scheme == PASS_FAIL:
            return PASSED if self.value is True else FAILED
        value, threshold = float(self.value), self.threshold or 0.0
        return PASSED if (value <= threshold if self.lower_is_better else value >= threshold) else FAILED

    @property
    def number(self) -> float:
        """What the recorded value is worth (the framework's own reading)."""
        if self.scheme == CPI:
            return CPI_VALUES.get(str(self.value), 0.0)
        if self.scheme == PASS_FAIL:
            return 1.0 if self.value is True else 0.0
        return float(self.value)

    def worth(self, label: str | None) -> float:
        """What the verdict is worth under an effective label: the recorded number under the recorded label,
        the label's own value otherwise."""
        if label == self.label:
            return self.number
        if self.scheme == CPI:
            return CPI_VALUES.get(label or "", 0.0)
        return 1.0 if (label == PASSED) != (self.scheme == SCORE and self.lower_is_better) else 0.0

    def to_json(self) -> dict:
        out: dict = {"scorer": self.scorer, "scheme": self.scheme, "value": self.value}
        if self.threshold is not None:
            out["threshold"] = self.threshold
        if self.lower_is_better:
            out["lower_is_better"] = True
        out.update({k: getattr(self, k) for k in TEXT_FIELDS if getattr(self, k) is not None})
        return out


def _check_length(text: str, what: str, where: tuple[str, int | None]) -> None:
    if len(text) > MAX_ITEM_TEXT_CHARS:
        raise InputError(*where, f"{what} is {len(text):,} characters long; the limit is {MAX_ITEM_TEXT_CHARS:,}")


def verdict_from_json(rec: Mapping, where: tuple[str, int | None]) -> Verdict:
    """A verdict object of an items line.

    Raises:
        InputError: at `where`, naming the field.
    """
    path, line = where
    scorer, scheme, value = rec.get("scorer"), rec.get("scheme"), rec.get("value")
    if not isinstance(scorer, str) or not scorer.strip():
        raise InputError(path, line, "a verdict needs a 'scorer' name (a non-empty string)")
    if len(scorer) > MAX_SYSTEM_NAME_CHARS:
        raise InputError(path, line, f"a scorer name is {len(scorer):,} characters long; the limit is "
                                     f"{MAX_SYSTEM_NAME_CHARS:,}")
    if scheme not in SCHEMES:
        raise InputError(path, line, f"verdict of {scorer!r}: 'scheme' must be one of {', '.join(SCHEMES)}, "
                                     f"got {scheme!r}")
    threshold = rec.get("threshold")
    if scheme == CPI and (not isinstance(value, str) or value not in CPI_VALUES):  # another letter: stored unsaid
        raise InputError(path, line, f"verdict of {scorer!r}: a {CPI} value is a letter C, P, I or N, got "
                                     + (repr(value[:40]) if isinstance(value, str) else json_type(value)))
    if scheme == PASS_FAIL and not isinstance(value, bool):
        raise InputError(path, line, f"verdict of {scorer!r}: a {PASS_FAIL} value is true or false, got "
                                     f"{json_type(value)}")
    if scheme == SCORE:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise InputError(path, line, f"verdict of {scorer!r}: a {SCORE} value is a finite number")
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not math.isfinite(threshold):
            raise InputError(path, line, f"verdict of {scorer!r}: a {SCORE} needs its 'threshold' (a number)")
    lower = rec.get("lower_is_better", False)
    if not isinstance(lower, bool) or (lower and scheme != SCORE):
        raise InputError(path, line, f"verdict of {scorer!r}: 'lower_is_better' is true or false, and only a "
                                     f"{SCORE} takes it")
    texts = {}
    for k in TEXT_FIELDS:
        v = rec.get(k)
        if v is not None and not isinstance(v, str):
            raise InputError(path, line, f"verdict of {scorer!r}: {k!r} must be a string, got {json_type(v)}")
        _check_length(v or "", f"verdict of {scorer!r}: {k!r}", (path, line))
        texts[k] = v
    return Verdict(scorer, scheme, value if scheme != SCORE else float(value),  # type: ignore[arg-type]
                   float(threshold) if scheme == SCORE else None, **texts, lower_is_better=lower)


def item_from_json(rec: Mapping, path: str, line: int | None) -> dict:
    """One items line as the document payload: id, gold (input and references), output, verdicts, source.

    Raises:
        InputError: naming file, line and field.
    """
    item_id = rec.get("id")
    if isinstance(item_id, int) and not isinstance(item_id, bool):
        item_id = str(item_id)
    if not isinstance(item_id, str) or not item_id.strip():
        raise InputError(path, line, "an item needs an 'id' (a non-empty string)")
    if len(item_id) > MAX_ID_CHARS:
        raise InputError(path, line, f"an item id is {len(item_id):,} characters long; the limit is {MAX_ID_CHARS:,}")
    text = {}
    for k in ("input", "output"):
        v = rec.get(k, "")
        if not isinstance(v, str):
            raise InputError(path, line, f"item {item_id!r}: {k!r} must be a string, got {json_type(v)}")
        _check_length(v, f"item {item_id!r}: {k!r}", (path, line))
        text[k] = v
    target = rec.get("target", [])
    if isinstance(target, str):
        target = [target]
    if not isinstance(target, list) or not all(isinstance(t, str) for t in target):
        raise InputError(path, line, f"item {item_id!r}: 'target' must be a string or a list of strings")
    _check_length("".join(target), f"item {item_id!r}: 'target'", (path, line))
    raw = rec.get("verdicts")
    if not isinstance(raw, list) or not raw or not all(isinstance(v, dict) for v in raw):
        raise InputError(path, line, f"item {item_id!r}: 'verdicts' must be a non-empty list of objects")
    verdicts = [verdict_from_json(v, (path, line)) for v in raw]
    names = [v.scorer for v in verdicts]
    if len(set(names)) != len(names):
        raise InputError(path, line, f"item {item_id!r}: a scorer gives two verdicts")
    source = rec.get("source", {})
    if not isinstance(source, dict):
        raise InputError(path, line, f"item {item_id!r}: 'source' must be an object")
    return {"id": item_id, "gold": {"input": text["input"], "target": target}, "output": text["output"],
            "verdicts": [v.to_json() for v in verdicts], "source": source}


def verdicts_of(payload: Mapping) -> list[Verdict]:
    """The verdicts of a stored payload (already validated when loaded)."""
    return [Verdict(v["scorer"], v["scheme"], v["value"], v.get("threshold"),
                    *(v.get(k) for k in TEXT_FIELDS), lower_is_better=bool(v.get("lower_is_better")))
            for v in payload["verdicts"]]


def load_items(path: str) -> list[dict]:
    """Every item of an items file, ids unique.

    Raises:
        InputError: naming file, line and reason.
    """
    items: list[dict] = []
    seen: dict[str, int] = {}
    for line, rec in read_records(path, what="judged items"):
        item = item_from_json(rec, path, line)  # type: ignore[arg-type] (read_records: objects)
        if item["id"] in seen:
            raise InputError(path, line, f"item id {item['id']!r} repeats line {seen[item['id']]}")
        seen[item["id"]] = line
        items.append(item)
    if not items:
        raise InputError(path, None, "the items file holds no item")
    return with_headline(items)


def with_headline(items: list[dict]) -> list[dict]:
    """`items` (payloads) with the run's headline scorer named in each (`headline`) and its verdict put first where
    the item has one: the first item's first scorer. The headline was each item's first verdict, so a log whose
    items list their scorers in different orders (DeepEval's metrics) mixed two scorers in one mean."""
    head = items[0]["verdicts"][0]["scorer"]
    for item in items:
        item["verdicts"].sort(key=lambda v: v["scorer"] != head)  # stable: the others keep their order
        item["headline"] = head
    return items


def decision_sides(payload: Mapping, v: Verdict) -> tuple[str, str]:
    """(left, right) of a verdict's decision: the output the scorer judged (its extracted answer where it kept
    one) and the references, one per line."""
    return (v.answer if v.answer is not None else payload["output"]), "\n".join(payload["gold"]["target"])
