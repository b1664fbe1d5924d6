"""Bring your own eval: import an eval framework's log as a run, and write reviewed verdicts back into it.

`import_log` reads the log with the framework's importer (`scoring.families.get_importer`: which family, input and
judge its records become), stores the records that read as one run, all at once, and reports the others as
`FILE: record N: reason` (in the result and among the run's warnings). `write_back` writes every decision a human
settled otherwise than the judge into a copy of the log, through the framework's own API, with the reviewer and the
note as provenance.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from pathlib import Path

from audit.errors import AuditError
from audit.numbers import count_noun
from audit.runs import execute_run, hash_input, plan_run
from audit.store.database import Database
from audit.views import load_view
from scoring.families import get_importer

MAX_ERRORS_KEPT = 50
"""Skipped records listed in the run's summary (all are counted, and all are returned by `import_log`)."""


def _importer(framework: str):  # noqa: ANN202 (scoring.families.verdicts.importers.Importer, named by the registry)
    return get_importer(framework)


def import_log(db: Database, framework: str, path: str, *, run: str | None = None,
               options: Mapping[str, str] | None = None) -> dict:
    """Import a framework's log as one run; the records that cannot be read are skipped and listed.

    Returns:
        {"run", "records", "imported", "skipped", "errors", "warnings", "reported", "metrics"}: `reported` is the
        framework's own aggregate per scorer, `metrics` the run's (equal where nothing is skipped; `warnings` says
        where they are not, and why).

    Raises:
        AuditError: the importer refuses the whole file, or no record could be read (nothing stored).
    """
    imp = _importer(framework)
    if Path(path).is_dir():
        raise AuditError(f"{path}: is a folder; give the log file")
    if not Path(path).is_file():
        raise AuditError(f"{path}: no such file")
    try:
        got = imp.load(str(path), dict(options or {}))
    except ValueError as e:  # the importer's ImportRefused: the whole file
        raise AuditError(str(e)) from None
    if not got.items:
        first = "; ".join(got.errors[:3])
        raise AuditError(f"{path}: none of its {count_noun(got.records, 'record')} could be imported; nothing was "
                         "stored"
                         + (f" ({first})" if first else ""))
    with tempfile.TemporaryDirectory() as tmp:
        items = Path(tmp) / f"{Path(path).name}.items.jsonl"
        items.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in got.items), encoding="utf-8")
        plan = plan_run(db, imp.family, {imp.input: str(items)}, imp.judge, run=run,
                        input_names={imp.input: Path(path).name})
        plan.inputs[imp.input] = str(path)  # the run records the log's name, size and hash, not the items file's
        skipped = got.skipped
        if got.errors:
            plan.loaded.warnings.append(f"{len(got.errors)} of the records or scores of {Path(path).name} could "
                                        f"not be imported and were skipped ({count_noun(skipped, 'record')} in all): "
                                        + "; ".join(got.errors[:5]) + (" ..." if len(got.errors) > 5 else ""))
        plan.loaded.warnings.extend(got.warnings)
        plan.loaded.extra["import"] = {"framework": framework, "source": got.source, "records": got.records,
                                       "imported": len(got.items), "skipped": skipped,
                                       "errors": got.errors[:MAX_ERRORS_KEPT], "reported": got.reported}
        row = execute_run(db, plan)
    return {"run": row["name"], "records": got.records, "imported": len(got.items), "skipped": skipped,
            "errors": got.errors, "warnings": got.warnings, "reported": got.reported,
            "metrics": row["original_metrics"]}


def reviewed_decisions(db: Database, run: str) -> list[dict]:
    """Decisions of the run that humans settled otherwise than the judge: the effective label, and the reviewer
    and note of the last review that gave it."""
    view = load_view(db, run)
    payloads: dict[str, dict] = {}
    out = []
    for d in view.decisions():
        if d["source"] == "judge" or d["effective"] == d["judge"]:
            continue
        review = next((r for r in reversed(d["reviews"]) if r["label"] == d["effective"]), None)
        if review is None:
            continue
        if d["doc"] not in payloads:
            payloads[d["doc"]] = view.document(d["doc"])["payload"]
        out.append({"payload": payloads[d["doc"]], "kind": d["kind"], "type": d["type"], "label": d["effective"],
                    "reviewer": review["reviewer"], "note": review["note"]})
    return out


def write_back(db: Database, framework: str, run: str, log: str, out: str) -> dict:
    """Write the run's reviewed verdicts into a copy of the framework log it was imported from (`out`).

    Raises:
        AuditError: the framework writes nothing back, the run is of another family, or the log refuses an edit.
    """
    imp = _importer(framework)
    view = load_view(db, run)
    if imp.write_back is None:
        raise AuditError(f"{framework}: its logs take no edits; export the audited run (export --format json/csv)")
    if view.row["task"] != imp.family:
        raise AuditError(f"run {run!r} is a {view.row['task']} run, not one imported from a {framework} log")
    if Path(out).resolve() == Path(log).resolve():
        raise AuditError(f"{out}: write the edited log to a new file, not over the original")
    recorded = (view.row["inputs"].get(imp.input) or {}).get("sha256")
    if not Path(log).is_file():
        raise AuditError(f"{log}: no such file")
    if recorded and hash_input(log)["sha256"] != recorded:
        raise AuditError(f"{log}: not the log run {run!r} was imported from (its SHA-256 differs from the one the run "
                         "recorded); give that log, or import this one as a run of its own")
    reviewed = reviewed_decisions(db, run)
    try:
        written = imp.write_back(log, out, reviewed)
    except ValueError as e:
        raise AuditError(str(e)) from None
    return {"run": run, "log": log, "out": out, "edits": written}
