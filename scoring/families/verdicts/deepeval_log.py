"""DeepEval test runs (the `test_run_<date>.json` DeepEval keeps under `DEEPEVAL_RESULTS_FOLDER`) as judged items.

An item is one test case (`testCases[]`); each of its metrics (`metricsData[]`) is a `thresholded_score` verdict:
the metric's `score` against its `threshold` (passing at or above it, or at or below it where the recorded
`success` says lower is better: toxicity, bias, hallucination; `lower_is_better`), with the judge's `reason` as
rationale, `verboseLogs` (criteria, evaluation steps) as the prompt and `evaluationModel` kept. The reference is
the case's expected output (else its context). The Python API's snake_case names (`metrics_data`, `actual_output`,
...) are read too. The reported
aggregate per metric is the mean of `metricsScores[].scores`, which is the mean score; its pass rate is
`passes` over passes, fails and errors.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

from scoring.errors import InputError, unicode_problem
from scoring.families.verdicts.importers import Imported, Importer, ImportRefused, record_error
from scoring.families.verdicts.model import SCORE
from scoring.jsonl import check_file


def _get(m: Mapping, camel: str) -> object:
    """A field by DeepEval's JSON name (`actualOutput`) or its Python name (`actual_output`)."""
    if camel in m:
        return m[camel]
    snake = "".join("_" + c.lower() if c.isupper() else c for c in camel)
    return m.get(snake)


def _text(v: object) -> str:
    if isinstance(v, str):
        return v
    return "" if v is None else json.dumps(v, ensure_ascii=False)


LOWER_IS_BETTER = ("toxicity", "bias", "hallucination")
"""DeepEval's metrics that pass at or below their threshold (by name, for a record without `success`)."""


def lower_is_better(name: str, score: float, threshold: float, success: object) -> bool:
    """Whether the metric passes at or below its threshold: what its recorded `success` says where the score is not
    on the threshold, else its name (`LOWER_IS_BETTER`).

    >>> lower_is_better("Toxicity", 0.1, 0.5, True), lower_is_better("Correctness [GEval]", 0.9, 0.5, True)
    (True, False)
    >>> lower_is_better("My metric", 0.2, 0.5, True), lower_is_better("Bias", 0.5, 0.5, None)
    (True, True)
    """
    if isinstance(success, bool) and score != threshold:
        return success == (score < threshold)
    return name.strip().lower().startswith(LOWER_IS_BETTER)


def _verdict(md: Mapping) -> dict:
    """One metric's data as a verdict.

    Raises:
        ValueError: no finite score or threshold (a metric that errored), saying which.
    """
    name, score, threshold = _get(md, "name"), _get(md, "score"), _get(md, "threshold")
    if not isinstance(name, str) or not name:
        raise ValueError("a metric without a name")
    for what, v in (("score", score), ("threshold", threshold)):
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            err = _get(md, "error")
            raise ValueError(f"metric {name!r} has no {what}" + (f" (error: {err})" if err else ""))
    v: dict = {"scorer": name, "scheme": SCORE, "value": float(score), "threshold": float(threshold)}  # type: ignore[arg-type]
    if lower_is_better(name, float(score), float(threshold), _get(md, "success")):  # type: ignore[arg-type]
        v["lower_is_better"] = True
    for key, field in (("explanation", "reason"), ("prompt", "verboseLogs")):
        text = _get(md, field)
        if isinstance(text, str) and text:
            v[key] = text
    return v


def read_deepeval_run(path: str, options: Mapping[str, str] | None = None) -> Imported:  # noqa: ARG001
    """Every test case of a DeepEval test run as an item.

    Raises:
        ImportRefused: not JSON, or not a DeepEval test run.
    """
    try:
        check_file(path, what="DeepEval test run")
        text = Path(path).read_text(encoding="utf-8-sig")  # a byte-order mark, as every other reader takes it
        data = json.loads(text)
    except InputError as e:
        raise ImportRefused(str(e)) from None
    except (ValueError, UnicodeDecodeError) as e:
        raise ImportRefused(f"{path}: not JSON ({e})") from None
    except RecursionError:
        raise ImportRefused(f"{path}: not JSON this reader can take (nested too deeply)") from None
    if problem := unicode_problem(text, data):
        raise ImportRefused(f"{path}: {problem}")
    cases = _get(data, "testCases") if isinstance(data, Mapping) else None
    if not isinstance(cases, list):
        raise ImportRefused(f"{path}: not a DeepEval test run (no testCases list; the test_run_*.json DeepEval "
                            "writes under DEEPEVAL_RESULTS_FOLDER)")
    items, errors = [], []
    for n, case in enumerate(cases, 1):
        if not isinstance(case, Mapping):
            errors.append(record_error(path, n, "not an object"))
            continue
        verdicts = []
        for md in _get(case, "metricsData") or []:
            try:
                verdicts.append(_verdict(md if isinstance(md, Mapping) else {}))
            except ValueError as e:
                errors.append(record_error(path, n, f"case {_get(case, 'name') or n}: {e}"))
        if not verdicts:
            if not _get(case, "metricsData"):
                errors.append(record_error(path, n, f"case {_get(case, 'name') or n}: no metric data"))
            continue
        expected = _get(case, "expectedOutput")
        context = _get(case, "context") or _get(case, "retrievalContext") or []
        target = [_text(expected)] if expected is not None else [_text(c) for c in context]
        models = sorted({str(_get(md, "evaluationModel")) for md in _get(case, "metricsData") or []
                         if isinstance(md, Mapping) and _get(md, "evaluationModel")})
        items.append({"id": str(_get(case, "name") or f"case {n}"), "input": _text(_get(case, "input")),
                      "output": _text(_get(case, "actualOutput")), "target": target, "verdicts": verdicts,
                      "source": {"framework": "deepeval", "order": _get(case, "order"), "name": _get(case, "name"),
                                 "evaluation_models": models}})
    reported = {}
    for m in _get(data, "metricsScores") or []:
        scores = [s for s in (m.get("scores") or []) if isinstance(s, int | float)] if isinstance(m, Mapping) else []
        if scores:
            reported[str(m.get("metric"))] = sum(scores) / len(scores)
    return Imported(items, len(cases), errors, reported, {"framework": "deepeval", "log": Path(path).name})


IMPORTER = Importer("deepeval", "DeepEval test run (test_run_<date>.json)", "verdicts", "items", "recorded",
                    read_deepeval_run)
