"""Every Eval Ever instance files (`<uuid>_samples.jsonl`, schema `InstanceLevelEvaluationLog`) as judged items.

Each line is one sample scored by one aggregate result (`evaluation_name`, `evaluation_result_id`): lines of the same
sample (`sample_id`, same `evaluation_id` and `model_id`) are one item, each line a `thresholded_score` verdict
(`evaluation.score` against 0.5; `evaluation.is_correct` is kept) named by its `evaluation_result_id` (else its
`evaluation_name`). The input is
`input.raw`, the references `input.reference[]`, the output `output.raw` (or the messages of a multi-turn line),
the answer judged `answer_attribution[].extracted_value`. The reported aggregate per evaluation is read from an
aggregate log (`*.json`) in the same folder whose `detailed_evaluation_results.file_path` names this file, and so is
its `metric_config.lower_is_better`: a score of such a metric passes at or below the threshold.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

from scoring.errors import InputError
from scoring.families.verdicts.importers import Imported, Importer, ImportRefused, id_text, record_error
from scoring.families.verdicts.model import SCORE
from scoring.jsonl import read_lines

THRESHOLD = 0.5


def _text(v: object) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return "\n".join(_text(x) for x in v)
    return "" if v is None else json.dumps(v, ensure_ascii=False)


def _output(rec: Mapping) -> str:
    out = rec.get("output")
    if isinstance(out, Mapping):
        return _text(out.get("raw"))
    messages = rec.get("messages") or []
    return "\n\n".join(f"[{m.get('role', '')}] {_text(m.get('content'))}" for m in messages if isinstance(m, Mapping))


def _references(inp: Mapping) -> list[str]:
    """`input.reference[]`; an index into `input.choices` (multiple choice) as the choice it names."""
    refs, choices = inp.get("reference") or [], inp.get("choices")
    if isinstance(choices, list):
        refs = [choices[int(r)] if isinstance(r, str) and r.isdigit() and int(r) < len(choices) else r for r in refs]
    return [_text(r) for r in refs]


def _verdict(rec: Mapping) -> dict:
    """One instance line's evaluation as a verdict.

    Raises:
        ValueError: no name or no finite score.
    """
    name = rec.get("evaluation_result_id") or rec.get("evaluation_name")
    ev = rec.get("evaluation") if isinstance(rec.get("evaluation"), Mapping) else {}
    score = ev.get("score")
    if not isinstance(name, str) or not name:
        raise ValueError("no evaluation_result_id or evaluation_name")
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        raise ValueError(f"evaluation {name!r}: evaluation.score is {score!r}, not a number")
    v: dict = {"scorer": name, "scheme": SCORE, "value": float(score), "threshold": THRESHOLD}
    attribution = [a for a in rec.get("answer_attribution") or [] if isinstance(a, Mapping)]
    extracted = [a.get("extracted_value") for a in attribution if a.get("extracted_value") is not None]
    if extracted:
        v["answer"] = _text(extracted[-1])
    methods = sorted({str(a["extraction_method"]) for a in attribution if a.get("extraction_method")})
    if methods:
        v["explanation"] = f"extracted by {', '.join(methods)}; is_correct = {ev.get('is_correct')}"
    return v


MAX_AGGREGATE_BYTES = 64 * 2**20
"""A JSON file beside the instance log larger than this is not read as its aggregate log (they are a few KB)."""


def _record(line: str) -> object:
    """One instance line as JSON; too deep a nesting is a ValueError like any other unreadable line."""
    try:
        return json.loads(line)
    except RecursionError:
        raise ValueError("not JSON this reader can take (nested too deeply)") from None


def _aggregate(path: Path) -> tuple[dict[str, float], set[str]]:
    """(scores, the evaluations whose lower score is better) of the aggregate log beside an instance file that
    links it (by its file name)."""
    out: dict[str, float] = {}
    lower: set[str] = set()
    for agg in sorted(path.parent.glob("*.json")):
        try:  # any other JSON file beside the log is passed over, a huge or broken one too
            if agg.stat().st_size > MAX_AGGREGATE_BYTES:
                continue
            data = json.loads(agg.read_text(encoding="utf-8"))
        except (ValueError, OSError, UnicodeDecodeError, RecursionError):
            continue
        detail = data.get("detailed_evaluation_results") if isinstance(data, Mapping) else None
        if not isinstance(detail, Mapping) or Path(str(detail.get("file_path", ""))).name != path.name:
            continue
        for r in data.get("evaluation_results") or []:
            score = (r.get("score_details") or {}).get("score") if isinstance(r, Mapping) else None
            name = r.get("evaluation_result_id") or r.get("evaluation_name") if isinstance(r, Mapping) else None
            if isinstance(score, int | float) and not isinstance(score, bool) and name:
                out[str(name)] = float(score)
            config = r.get("metric_config") if isinstance(r, Mapping) else None
            if name and isinstance(config, Mapping) and config.get("lower_is_better") is True:
                lower.add(str(name))
    return out, lower


def read_eee_instances(path: str, options: Mapping[str, str] | None = None) -> Imported:  # noqa: ARG001
    """Every sample of an Every Eval Ever instance file as an item, one verdict per line scoring it.

    Raises:
        ImportRefused: the file unreadable or empty.
    """
    try:
        lines = [(n, x) for n, x in read_lines(path, what="Every Eval Ever instances") if x.strip()]
    except InputError as e:
        raise ImportRefused(str(e)) from None
    if not lines:
        raise ImportRefused(f"{path}: the instance file holds no line")
    items: dict[tuple, dict] = {}
    errors: list[str] = []
    used = 0
    for n, line in lines:
        try:
            rec = _record(line)
            if not isinstance(rec, dict) or "sample_id" not in rec:
                raise ValueError("not an instance record (no sample_id)")
            v = _verdict(rec)
            sample = id_text(rec["sample_id"], "sample_id")
        except ValueError as e:
            errors.append(record_error(path, n, str(getattr(e, "msg", None) and f"not JSON ({e.msg})" or e)))
            continue
        key = (rec.get("evaluation_id"), rec.get("model_id"), sample)
        inp = rec.get("input") if isinstance(rec.get("input"), Mapping) else {}
        item = items.setdefault(key, {
            "id": sample if len({k[:2] for k in items} | {key[:2]}) == 1 else "/".join(map(str, key)),
            "input": _text(inp.get("raw")), "output": _output(rec),
            "target": _references(inp), "verdicts": [],
            "source": {"framework": "every-eval-ever", "evaluation_id": key[0], "model_id": key[1],
                       "sample_id": rec["sample_id"], "sample_hash": rec.get("sample_hash")}})
        if any(x["scorer"] == v["scorer"] for x in item["verdicts"]):
            errors.append(record_error(path, n, f"sample {key[2]!r}: a second line for {v['scorer']!r}"))
            continue
        item["verdicts"].append(v)
        used += 1
    reported, lower = _aggregate(Path(path))
    for item in items.values():
        for v in item["verdicts"]:
            if v["scorer"] in lower:
                v["lower_is_better"] = True
    return Imported(list(items.values()), len(lines), errors, reported,
                    {"framework": "every-eval-ever", "log": Path(path).name}, skipped_records=len(lines) - used)


IMPORTER = Importer("eee", "Every Eval Ever instance file (<uuid>_samples.jsonl)", "verdicts", "items", "recorded",
                    read_eee_instances,
                    reported_from="an aggregate log (*.json) in the same folder whose detailed_evaluation_results."
                                  "file_path names the instance file")
