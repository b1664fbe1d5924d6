"""lm-evaluation-harness sample logs (`--log_samples`: `samples_<task>_<date>.jsonl`) as judged items.

lm-eval has no API to read its logs back, so the documented line format is read directly: `doc_id`, `doc`,
`target`, `arguments` (`gen_args_K.arg_0` the prompt, `arg_1` a multiple-choice continuation), `filtered_resps`,
`filter`, `metrics` (the names) and one key per metric with the sample's value. Each line is an item (one per
document and filter); each metric with a number is a `thresholded_score` verdict (threshold 0.5: a 0/1 metric such
as `acc` passes at 1), and a metric's mean over items is lm-eval's `mean` aggregation. The reported aggregate is
read from the `results_<date>.json` lm-eval wrote beside the samples file (same date), where it is there.

For a multiple-choice task the output is the continuation the model scored highest and the reference the gold
continuation (`gen_args_<target>`), so a reviewer reads words, not indices.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path

from scoring.errors import InputError
from scoring.families.verdicts.importers import Imported, Importer, ImportRefused, id_text, record_error
from scoring.families.verdicts.model import SCORE
from scoring.jsonl import read_lines

THRESHOLD = 0.5
SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d\d-\d\dT[\d.-]+)\.jsonl$")


def _number(v: object) -> float | None:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, int | float) and math.isfinite(v):
        return float(v)
    return None


def _continuations(rec: Mapping) -> list[str]:
    args = rec.get("arguments")
    if not isinstance(args, Mapping):
        return []
    out = []
    for k in sorted(args, key=lambda k: int(k.rsplit("_", 1)[-1]) if k.rsplit("_", 1)[-1].isdigit() else 0):
        a = args[k]
        out.append(str(a.get("arg_1", "")) if isinstance(a, Mapping) else "")
    return out


def _prompt(rec: Mapping) -> str:
    args = rec.get("arguments")
    if isinstance(args, Mapping) and args:
        first = args[next(iter(args))]
        if isinstance(first, Mapping) and isinstance(first.get("arg_0"), str):
            return first["arg_0"]
    return json.dumps(rec.get("doc"), ensure_ascii=False)


def _output_and_target(rec: Mapping) -> tuple[str, list[str]]:
    """(output, references): for multiple choice, the chosen and the gold continuations; else the filtered
    response and the target as logged."""
    resps, target = rec.get("filtered_resps"), rec.get("target")
    choices = _continuations(rec)
    lls = []
    if isinstance(resps, list) and len(resps) == len(choices) > 1:
        for r in resps:
            ll = r[0] if isinstance(r, list) and r else r
            try:
                lls.append(float(ll))
            except (TypeError, ValueError):
                lls = []
                break
    if lls:
        chosen = choices[max(range(len(lls)), key=lls.__getitem__)].strip()
        gold = [choices[int(target)].strip()] if str(target).isdigit() and int(target) < len(choices) else [str(target)]
        return chosen, gold
    out = resps[0] if isinstance(resps, list) and resps else resps
    refs = target if isinstance(target, list) else [target]
    return ("" if out is None else str(out)), [str(t) for t in refs if t is not None]


def _reported(path: Path) -> tuple[dict[str, float], str | None]:
    """The results file beside a samples file (same date): {"metric" or "metric,filter": value}, and the task."""
    m = SAMPLES_NAME.match(path.name)
    if not m:
        return {}, None
    results = path.with_name(f"results_{m['date']}.json")
    if not results.is_file():
        return {}, m["task"]
    try:
        data = json.loads(results.read_text(encoding="utf-8"))
        task = data["results"][m["task"]]
    except (ValueError, KeyError, TypeError, RecursionError):
        return {}, m["task"]
    out = {}
    for key, v in task.items():
        metric, _, filt = key.partition(",")
        if filt and not metric.endswith("_stderr") and _number(v) is not None:
            out[metric if filt == "none" else key] = float(v)
    return out, m["task"]


def _filter_of(line: str) -> str | None:
    try:
        rec = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return str(rec.get("filter") or "none") if isinstance(rec, dict) else None


def read_lmeval_samples(path: str, options: Mapping[str, str] | None = None) -> Imported:
    """Every line of an lm-eval samples file as an item (`options["metric"]`: that metric's verdicts only).

    Raises:
        ImportRefused: the file unreadable, empty, or the metric named in no line.
    """
    metric_wanted = (options or {}).get("metric") or None
    try:
        lines = [(n, line) for n, line in read_lines(path, what="lm-eval samples") if line.strip()]
    except InputError as e:
        raise ImportRefused(str(e)) from None
    if not lines:
        raise ImportRefused(f"{path}: the samples file holds no line")
    items, errors, seen_metrics = [], [], set()
    multi_filter = len({_filter_of(x) for _, x in lines} - {None}) > 1
    for n, line in lines:  # record N = its line number
        try:
            rec = json.loads(line)
        except ValueError as e:
            errors.append(record_error(path, n, f"not JSON ({getattr(e, 'msg', e)})"))
            continue
        except RecursionError:
            errors.append(record_error(path, n, "not JSON this reader can take (nested too deeply)"))
            continue
        if not isinstance(rec, dict) or "doc_id" not in rec:
            errors.append(record_error(path, n, "not an lm-eval sample (no doc_id)"))
            continue
        try:
            doc_id = id_text(rec["doc_id"], "doc_id")
        except ValueError as e:
            errors.append(record_error(path, n, str(e)))
            continue
        names = rec.get("metrics") if isinstance(rec.get("metrics"), list) else []
        filt = str(rec.get("filter") or "none")
        verdicts = []
        for metric in names:
            seen_metrics.add(metric)
            if metric_wanted is not None and metric != metric_wanted:
                continue
            value = _number(rec.get(metric))
            if value is None:
                errors.append(record_error(path, n, f"doc {rec['doc_id']}: metric {metric!r} is "
                                                    f"{rec.get(metric)!r}, not a number (a corpus-level metric "
                                                    "is not a mean over samples)"))
                continue
            verdicts.append({"scorer": metric if filt == "none" else f"{metric},{filt}", "scheme": SCORE,
                             "value": value, "threshold": THRESHOLD})
        if not verdicts:
            if not names:
                errors.append(record_error(path, n, f"doc {rec['doc_id']}: no metric"))
            continue
        output, target = _output_and_target(rec)
        item_id = doc_id + (f"#{filt}" if multi_filter else "")
        items.append({"id": item_id, "input": _prompt(rec), "output": output, "target": target,
                      "verdicts": verdicts,
                      "source": {"framework": "lm-eval", "doc_id": rec["doc_id"], "filter": filt,
                                 "doc_hash": rec.get("doc_hash")}})
    if metric_wanted is not None and metric_wanted not in seen_metrics:
        raise ImportRefused(f"{path}: no sample has a metric {metric_wanted!r}; metrics in the file: "
                            f"{', '.join(sorted(seen_metrics)) or 'none'}")
    reported, task = _reported(Path(path))
    return Imported(items, len(lines), errors, reported,
                    {"framework": "lm-eval", "task": task, "log": Path(path).name})


IMPORTER = Importer(
    "lm-eval", "lm-evaluation-harness samples file (samples_<task>_<date>.jsonl)", "verdicts", "items", "recorded",
    read_lmeval_samples,
    {"metric": "the metric to import; default: every metric of a sample, each a decision of its item"},
    reported_from="lm-eval's results_<date>.json beside the samples file, of the same date")
