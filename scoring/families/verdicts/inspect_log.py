"""Inspect AI logs in and out, through Inspect's own log API (`inspect_ai.log`; its file format is not a frozen spec).

In: `read_inspect_log(PATH, scorer=None)`: each sample × epoch is an item; each of its scores (or only `scorer`'s) a
verdict: a C/P/I/N letter is `graded_cpi`, a boolean (or yes/no, true/false) `pass_fail`, a number
`thresholded_score` (threshold `NUMERIC_THRESHOLD`). The verdict keeps `Score.answer`, `Score.explanation` (the
grader's reply) and the grader's prompt (`metadata.grading`'s first user message, `model_graded_*` scorers). The
reported aggregate per scorer is the first of its `results` metrics named `accuracy` or `mean`.

Out: `write_back(PATH, OUT, edits)`: each reviewed verdict becomes an `edit_score` entry whose provenance names the
reviewer and gives the note as the reason; Inspect recomputes its metrics, and Inspect View shows the edits.

inspect-ai is an optional dependency (about forty packages, boto3 and textual among them): without it, reading or
writing a log raises `ImportRefused` with the one line that installs it.
"""

from __future__ import annotations

import math
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scoring.families.verdicts.importers import Imported, Importer, ImportRefused, record_error
from scoring.families.verdicts.model import CPI, CPI_VALUES, FAILED, PASS_FAIL, PASSED, SCORE
from scoring.jsonl import MAX_BYTES, check_file

INSTALL = "pip install inspect-ai==0.3.285"
NUMERIC_THRESHOLD = 0.5
"""A numeric Inspect score passes at 0.5 or more (0/1 scores: 1 passes); the mean is the number's own."""
HEADLINE_METRICS = ("accuracy", "mean")
BOOL_WORDS = {"yes": True, "true": True, "no": False, "false": False}


def _inspect_log() -> Any:
    try:
        import inspect_ai.log as log_api
    except ImportError:
        raise ImportRefused(f"reading Inspect logs needs inspect-ai, which is not installed: {INSTALL}") from None
    return log_api


def _text(value: object) -> str:
    """A sample input (a string or chat messages) as text."""
    if isinstance(value, str):
        return value
    if isinstance(value, Sequence):
        return "\n\n".join(f"[{getattr(m, 'role', '')}] {getattr(m, 'text', str(m))}" for m in value)
    return "" if value is None else str(value)


def _why(e: Exception) -> str:
    """An exception from Inspect in one short line (pydantic's are many lines long: its first error's place in the
    log and message are kept, which say what to fix)."""
    errors = getattr(e, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            return f"{type(e).__name__}: {where}: {str(first.get('msg', ''))[:200]}"
        except Exception:  # noqa: BLE001 (not pydantic's shape: the first line below)
            pass
    first_line = (str(e).strip().splitlines() or [""])[0]
    return f"{type(e).__name__}: {first_line[:200]}"


def _prompt(metadata: Mapping | None) -> str | None:
    """The grader's prompt a `model_graded_*` scorer kept (`metadata.grading`: its messages)."""
    grading = (metadata or {}).get("grading")
    if isinstance(grading, list):
        for m in grading:
            content = m.get("content") if isinstance(m, Mapping) else getattr(m, "content", None)
            role = m.get("role") if isinstance(m, Mapping) else getattr(m, "role", None)
            if role == "user" and isinstance(content, str):
                return content
    return None


def verdict_of(name: str, score: Any) -> dict:
    """One Inspect `Score` as an items-file verdict.

    Raises:
        ValueError: a value no scheme reads (a dict or list of values, an unknown string), saying which.
    """
    value = score.value
    if isinstance(value, bool):
        scheme, value, threshold = PASS_FAIL, value, None
    elif isinstance(value, int | float):
        if not math.isfinite(value):
            raise ValueError(f"score {name!r} is {value}, not a finite number")
        scheme, value, threshold = SCORE, float(value), NUMERIC_THRESHOLD
    elif isinstance(value, str) and value in CPI_VALUES:
        scheme, threshold = CPI, None
    elif isinstance(value, str) and value.strip().lower() in BOOL_WORDS:
        scheme, value, threshold = PASS_FAIL, BOOL_WORDS[value.strip().lower()], None
    else:
        raise ValueError(f"score {name!r} has value {value!r}: not a C/P/I/N letter, a boolean or a number "
                         "(a score with several values is not read)")
    out: dict = {"scorer": name, "scheme": scheme, "value": value}
    if threshold is not None:
        out["threshold"] = threshold
    for k, v in (("answer", score.answer), ("explanation", score.explanation), ("prompt", _prompt(score.metadata))):
        if isinstance(v, str):
            out[k] = v
    return out


def _reported(log: Any) -> dict[str, float]:
    out: dict[str, float] = {}
    for s in (log.results.scores if log.results else []) or []:
        for metric in HEADLINE_METRICS:
            m = s.metrics.get(metric)
            if m is not None and isinstance(m.value, int | float):
                out[s.name] = float(m.value)
                break
    return out


def check_unpacked_size(path: str, limit: int | None = None) -> None:
    """Refuse a log over `limit` bytes, or an `.eval` archive (a zip) whose members unpack to more: 862 KB of
    archive unpacked to 1.7 GB in memory. A member's header states its size, and Python's zip reader stops there
    (a member that claims less than it holds fails its CRC check instead of growing)."""
    limit = MAX_BYTES if limit is None else limit
    check_file(path, limit=limit, what="Inspect log")
    if not zipfile.is_zipfile(path):
        return
    try:
        with zipfile.ZipFile(path) as z:
            members = z.infolist()
    except (zipfile.BadZipFile, OSError) as e:
        raise ImportRefused(f"{path}: not an Inspect log Inspect can read ({_why(e)})") from None
    total = sum(m.file_size for m in members)
    if total > limit:
        largest = max(members, key=lambda m: m.file_size)
        raise ImportRefused(f"{path}: the archive unpacks to {total:,} bytes (the largest member, "
                            f"{largest.filename[:80]!r}, to {largest.file_size:,}); the limit is {limit:,} bytes")


def _read_log(log_api: Any, path: str) -> tuple[Any, list[tuple[int, Any]], list[str]]:
    """(the log, its samples numbered as records, the samples that could not be read). A whole log Inspect refuses
    is refused; in an `.eval` archive, where each sample is a member of its own, a sample Inspect cannot read is
    skipped and named, and the others are read one by one (one corrupt sample refused the whole log)."""
    try:
        log = log_api.read_eval_log(path)
        return log, list(enumerate(log.samples or [], 1)), []
    except Exception as e:  # noqa: BLE001 (Inspect raises many kinds; each means: not a log it can read)
        whole = ImportRefused(f"{path}: not an Inspect log Inspect can read ({_why(e)})")
    if not zipfile.is_zipfile(path):
        raise whole from None
    try:
        log = log_api.read_eval_log(path, header_only=True)
        summaries = log_api.read_eval_log_sample_summaries(path)
    except Exception:  # noqa: BLE001 (the archive's header or index is broken: the first refusal says why)
        raise whole from None
    numbered, errors = [], []
    for n, summary in enumerate(summaries, 1):
        try:
            numbered.append((n, log_api.read_eval_log_sample(path, summary.id, summary.epoch)))
        except Exception as e:  # noqa: BLE001 (one sample's member: skipped, named)
            errors.append(record_error(path, n, f"sample {summary.id!r} epoch {summary.epoch} cannot be read "
                                                f"({_why(e)})"))
    if not numbered:
        raise whole from None
    return log, numbered, errors


def read_inspect_log(path: str, options: Mapping[str, str] | None = None) -> Imported:
    """Every sample × epoch of an Inspect log as a judged item (`options["scorer"]`: that scorer's verdicts only).

    Raises:
        ImportRefused: inspect-ai missing, the file not an Inspect log, the log without samples, or the scorer
            named in none of them.
    """
    log_api = _inspect_log()
    scorer = (options or {}).get("scorer") or None
    check_unpacked_size(path)
    log, numbered, errors = _read_log(log_api, path)
    samples = [s for _, s in numbered]
    records = len(samples) + len(errors)  # the samples skipped unread are records too
    if not samples:
        raise ImportRefused(f"{path}: the log holds no sample (status {log.status!r}; was it written with samples?)")
    names = sorted({n for s in samples for n in (s.scores or {})})
    if scorer is not None and scorer not in names:
        raise ImportRefused(f"{path}: no sample has a score {scorer!r}; scorers in the log: "
                            f"{', '.join(names) or 'none'}")
    epochs = max((s.epoch for s in samples), default=1)
    items = []
    for n, s in numbered:
        scores = dict(s.scores or {})
        if scorer is not None:
            scores = {scorer: scores[scorer]} if scorer in scores else {}
        if not scores:
            why = f"sample {s.id!r} epoch {s.epoch} has no score" + (f" {scorer!r}" if scorer else "")
            errors.append(record_error(path, n, why + (f" (error: {s.error.message})" if s.error else "")))
            continue
        verdicts = []
        for name, score in scores.items():
            try:
                verdicts.append(verdict_of(name, score))
            except ValueError as e:
                errors.append(record_error(path, n, f"sample {s.id!r} epoch {s.epoch}: {e}"))
        if not verdicts:
            continue
        target = s.target if isinstance(s.target, list) else [s.target]
        items.append({"id": f"{s.id}#{s.epoch}" if epochs > 1 else str(s.id), "input": _text(s.input),
                      "output": s.output.completion if s.output else "", "target": [str(t) for t in target],
                      "verdicts": verdicts, "source": {"framework": "inspect", "sample_id": s.id, "epoch": s.epoch}})
    source = {"framework": "inspect", "task": log.eval.task, "model": log.eval.model,
              "inspect_version": getattr(log.eval.packages, "get", lambda _k: None)("inspect_ai"),
              "log": Path(path).name}
    reducers = getattr(log.eval.config, "epochs_reducer", None) or ["mean"]
    warnings = []
    if epochs > 1 and list(reducers) != ["mean"]:
        source["epochs_reducer"] = list(reducers)
        warnings.append(f"the log reduces each sample's epochs by {', '.join(map(str, reducers))}; the run counts "
                        "every sample × epoch as an item, as Inspect's mean reducer does, so its numbers are means "
                        "over epochs")
    return Imported(items, records, errors, _reported(log), source, warnings=warnings)


@dataclass(frozen=True)
class Edit:
    """A reviewed verdict to write back: which sample, epoch and score, the label, who and why."""

    sample_id: str | int
    epoch: int
    scorer: str
    scheme: str
    label: str
    reviewer: str
    note: str | None


def edit_value(scheme: str, label: str) -> str | bool | float:
    """The Inspect score value of a reviewer's label (the inverse of `verdict_of`)."""
    if scheme == CPI:
        return label
    if scheme == PASS_FAIL:
        return label == PASSED
    return 1.0 if label == PASSED else 0.0 if label == FAILED else math.nan


def write_back(path: str, out: str, edits: Sequence[Edit]) -> int:
    """Write the log at `path` to `out` with one `edit_score` per edit (provenance: the reviewer, the note as
    reason); Inspect recomputes the metrics. Returns the number of edits written.

    Raises:
        ImportRefused: inspect-ai missing, the log unreadable, or a sample of an edit not in it.
    """
    log_api = _inspect_log()
    from inspect_ai.scorer import ScoreEdit

    check_unpacked_size(path)
    try:
        log = log_api.read_eval_log(path)
    except Exception as e:  # noqa: BLE001 (as in read_inspect_log)
        raise ImportRefused(f"{path}: not an Inspect log Inspect can read ({_why(e)}); a log whose unreadable "
                            "samples the import skipped cannot be written back whole") from None
    for e in edits:
        edit = ScoreEdit(value=edit_value(e.scheme, e.label),
                         provenance=log_api.ProvenanceData(author=e.reviewer, reason=e.note or "reviewed in Rejudge"))
        try:
            log_api.edit_score(log, e.sample_id, e.scorer, edit, recompute_metrics=False, epoch=e.epoch)
        except ValueError as err:
            raise ImportRefused(f"{path}: sample {e.sample_id!r} epoch {e.epoch}: {err}") from None
    if edits:
        log_api.recompute_metrics(log)
    log_api.write_eval_log(log, out)
    return len(edits)


def write_reviewed(path: str, out: str, reviewed: Sequence[Mapping]) -> int:
    """`Importer.write_back`: reviewed decisions of a run imported from the log at `path`, as `edit_score` entries."""
    edits = [Edit(r["payload"]["source"]["sample_id"], int(r["payload"]["source"]["epoch"]), r["type"], r["kind"],
                  r["label"], r["reviewer"], r["note"]) for r in reviewed]
    return write_back(path, out, edits)


IMPORTER = Importer(
    "inspect", "Inspect AI log (.eval or .json)", "verdicts", "items", "recorded", read_inspect_log,
    {"scorer": "the score (scorer name) to import; default: every score of a sample, each a decision of its item"},
    write_reviewed)
