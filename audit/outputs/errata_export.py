"""The gold errata file for the benchmark's maintainers (JSON, CSV): benchmark, gold file, and each standing
erratum (`audit.review.errata`) with its proposed correction."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from sqlite_utils import Database

from audit.outputs.cells import rejudge_version, write_csv
from audit.review.errata import current_errata
from audit.views import RunRef, as_view
from scoring.families.base import TaskFamily


def _gold_input(row: dict, task: TaskFamily) -> dict:
    first = task.inputs[0].name
    info = row["inputs"].get(first) or {}
    return {"input": first, "name": info.get("name"), "sha256": info.get("sha256")}


def export_errata(db: Database, run: RunRef) -> dict:
    """The errata file: benchmark (family and title), the gold file (name and SHA-256), and each standing
    erratum naming document, gold item, problem and proposed correction, with reviewer, note and time."""
    view = as_view(db, run)
    row, task = view.row, view.task
    return {
        "benchmark": {"family": task.name, "title": task.title}, "run": row["name"], "gold": _gold_input(row, task),
        "exported": datetime.now(UTC).isoformat(timespec="seconds"), "rejudge_version": rejudge_version(),
        "note": "Proposed corrections to the gold data, flagged by reviewers; scores are not changed by them.",
        "errata": [{"document": r["doc_id"], "gold_item": r["item"], "problem": r["problem"],
                    "correction": r["correction"], "note": r["note"], "reviewer": r["reviewer"],
                    "created": r["created"], "decision": r["decision_id"], "uid": r["uid"]}
                   for r in current_errata(view.db, view)],
    }


CSV_HEADER = ["benchmark", "gold_file", "document", "gold_item", "problem", "correction", "note", "reviewer",
              "created", "decision"]


def export_errata_csv(db: Database, run: RunRef) -> str:
    """The errata file as CSV (one row per standing erratum; cells safe in a spreadsheet)."""
    data = export_errata(db, run)
    return write_csv(CSV_HEADER, [[data["benchmark"]["family"], data["gold"]["name"], e["document"], e["gold_item"],
                                   e["problem"], e["correction"] or "", e["note"] or "", e["reviewer"],
                                   e["created"], "" if e["decision"] is None else e["decision"]]
                                  for e in data["errata"]])


def export_errata_json(db: Database, run: RunRef) -> str:
    return json.dumps(export_errata(db, run), indent=1, ensure_ascii=False) + "\n"
