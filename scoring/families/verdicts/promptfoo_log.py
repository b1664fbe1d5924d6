"""promptfoo results (`promptfoo eval -o results.json`) as judged items.

An item is one result row: a test case × prompt × provider (`results.results[]`). Its first verdict is the row's
overall `success` (pass/fail; promptfoo's pass rate is their mean: successes over every row, errors counted as
failures), then one per assertion (`gradingResult.componentResults[]`): its `pass` as pass/fail, named by the
assertion's type (and its `metric` where given), with the assertion's `reason` as the rationale and its `value`
(e.g. the `llm-rubric` rubric) as the reference and prompt. The reported aggregate is `results.stats`'s
successes over successes, failures and errors.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from scoring.errors import InputError, unicode_problem
from scoring.families.verdicts.importers import Imported, Importer, ImportRefused, id_text, record_error
from scoring.families.verdicts.model import PASS_FAIL
from scoring.jsonl import check_file

OVERALL = "promptfoo (all assertions)"


def _text(v: object) -> str:
    if isinstance(v, str):
        return v
    return "" if v is None else json.dumps(v, ensure_ascii=False)


def _component_name(c: Mapping, k: int, seen: dict[str, int]) -> str:
    a = c.get("assertion") if isinstance(c.get("assertion"), Mapping) else {}
    name = str(a.get("metric") or a.get("type") or f"assertion {k + 1}")
    seen[name] = seen.get(name, 0) + 1
    return name if seen[name] == 1 else f"{name} #{seen[name]}"


def _row(row: Mapping, where: str, n: int, problems: list[str]) -> dict:
    """One result row as an item; an assertion that cannot be read is left out and said in `problems`.

    Raises:
        ValueError: the row has no `success` to read, or its ids are not strings or whole numbers.
    """
    if not isinstance(row.get("success"), bool):
        raise ValueError("no boolean 'success'")
    grading = row.get("gradingResult") if isinstance(row.get("gradingResult"), Mapping) else {}
    test = row.get("testCase") if isinstance(row.get("testCase"), Mapping) else {}
    variables = row.get("vars") if isinstance(row.get("vars"), Mapping) else test.get("vars") or {}
    prompt = row.get("prompt") if isinstance(row.get("prompt"), Mapping) else {}
    response = row.get("response") if isinstance(row.get("response"), Mapping) else {}
    provider = row.get("provider") if isinstance(row.get("provider"), Mapping) else {}
    overall = {"scorer": OVERALL, "scheme": PASS_FAIL, "value": row["success"]}
    reason = grading.get("reason") or row.get("failureReason") or row.get("error")
    if isinstance(reason, str):
        overall["explanation"] = reason
    verdicts, references, seen = [overall], [], {}
    for k, c in enumerate(grading.get("componentResults") or []):
        if not isinstance(c, Mapping) or not isinstance(c.get("pass"), bool):  # said, not dropped unseen
            problems.append(f"assertion {k + 1}: " + (f"'pass' is {c.get('pass')!r}, not true or false"
                                                      if isinstance(c, Mapping) else "not an object")
                            + "; that verdict is skipped")
            continue
        a = c.get("assertion") if isinstance(c.get("assertion"), Mapping) else {}
        v = {"scorer": _component_name(c, k, seen), "scheme": PASS_FAIL, "value": c["pass"]}
        if isinstance(c.get("reason"), str):
            v["explanation"] = c["reason"]
        meta = c.get("metadata") if isinstance(c.get("metadata"), Mapping) else {}
        if isinstance(meta.get("renderedGradingPrompt"), str):  # the grader's prompt, as promptfoo sent it
            v["prompt"] = meta["renderedGradingPrompt"]
        if a.get("value") is not None:
            v.setdefault("prompt", _text(a["value"]))
            references.append(f"{a.get('type', 'assertion')}: {_text(a['value'])}")
        verdicts.append(v)
    item_id = "/".join((id_text(row.get("testIdx", n - 1), "testIdx"), id_text(row.get("promptIdx", 0), "promptIdx"),
                        str(provider.get("label") or provider.get("id") or "")))
    return {"id": item_id, "input": prompt.get("raw") or _text(variables), "output": _text(response.get("output")),
            "target": references or [_text(test.get("description") or "")],
            "verdicts": verdicts, "source": {"framework": "promptfoo", "id": row.get("id"),
                                             "testIdx": row.get("testIdx"), "promptIdx": row.get("promptIdx"),
                                             "provider": provider.get("id"), "file": where}}


def read_promptfoo_results(path: str, options: Mapping[str, str] | None = None) -> Imported:  # noqa: ARG001
    """Every result row of a promptfoo results file as an item.

    Raises:
        ImportRefused: not JSON, or not promptfoo's results shape.
    """
    try:
        check_file(path, what="promptfoo results")
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
    results = data.get("results") if isinstance(data, Mapping) else None
    rows = results.get("results") if isinstance(results, Mapping) else None
    if not isinstance(rows, list):
        raise ImportRefused(f"{path}: not a promptfoo results file (no results.results list; written by "
                            "`promptfoo eval -o results.json`?)")
    items, errors = [], []
    for n, row in enumerate(rows, 1):
        try:
            if not isinstance(row, Mapping):
                raise ValueError("not an object")
            problems: list[str] = []
            items.append(_row(row, Path(path).name, n, problems))
            errors += [record_error(path, n, p) for p in problems]
        except ValueError as e:
            errors.append(record_error(path, n, str(e)))
    stats = results.get("stats") if isinstance(results.get("stats"), Mapping) else {}
    reported = {}
    total = sum(int(stats.get(k) or 0) for k in ("successes", "failures", "errors"))
    if total:
        reported[OVERALL] = int(stats.get("successes") or 0) / total
    return Imported(items, len(rows), errors, reported,
                    {"framework": "promptfoo", "version": results.get("version"), "log": Path(path).name,
                     "eval": data.get("evalId")})


IMPORTER = Importer("promptfoo", "promptfoo results file (promptfoo eval -o results.json)", "verdicts", "items",
                    "recorded", read_promptfoo_results)
