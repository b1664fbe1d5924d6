"""Every export format applies the effective-label policy the user chose (issue 21, second divergence).

On the CHIMERA demo data one decision gets a 2-1 review (two reviewers overrule the judge's match, one confirms
it). Under `unanimous` that decision is conflicted and keeps the judge's label; under `majority` it is overruled.
For each policy the JSON, CSV and LaTeX exports (through the CLI, as a user runs them) must tell the same story:
the LaTeX table's numbers are the JSON's, and the CSV's effective labels, scored again with the family's scorer,
give the JSON's audited metrics.
"""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from audit.cli import main
from audit.effective import POLICIES
from audit.review.reviews import add_review
from audit.views import decisions, document, document_ids
from scoring.families import get_task
from scoring.families.base import add_nested

RUN = "mixed"


@pytest.fixture
def two_one(db_with_run):
    """The run with a 2-1 review on a non-trivial comb-element decision the judge matched."""
    d = next(x for x in decisions(db_with_run, RUN)
             if x["judge"] == "match" and x["type"] == "comb-element" and x["left"] != x["right"])
    add_review(db_with_run, RUN, d["id"], "no-match", "ana")
    add_review(db_with_run, RUN, d["id"], "no-match", "bo")
    add_review(db_with_run, RUN, d["id"], "match", "cy")
    return db_with_run, d


def _export(db_path, fmt: str, policy: str, capsys) -> str:
    capsys.readouterr()
    assert main(["export", "--db", str(db_path), "--run", RUN, "--format", fmt, "--policy", policy]) == 0
    return capsys.readouterr().out


def _latex_rows(tex: str) -> dict[tuple[str, str], list[str]]:
    """(section, type) -> the six P / R / F1 cells (original, audited) of the table body."""
    rows = {}
    for line in tex.splitlines():
        cells = [c.strip() for c in line.removesuffix(r"\\").split("&")]
        if len(cells) == 8 and re.fullmatch(r"[\d.]+|--", cells[2]):
            rows[(cells[0].replace(r"\_", "_"), cells[1].replace(r"\_", "_"))] = cells[2:]
    return rows


def _metrics_from_csv(db, text: str) -> dict:
    """The run's metrics recomputed by the family's scorer from the CSV's effective labels alone."""
    task = get_task("chimera")
    labels: dict[str, dict] = {}
    for r in csv.DictReader(io.StringIO(text)):
        labels.setdefault(r["doc"], {})[(r["kind"], r["type"], r["left"], r["right"])] = r["effective"]
    total: dict = {}
    per_doc = []
    for doc_id in document_ids(db, RUN):
        counts = task.counts(document(db, RUN, doc_id)["payload"], labels.get(doc_id, {}))
        add_nested(total, counts)
        per_doc.append(counts)
    return task.metrics(total, per_doc if task.needs_doc_counts else None, {})


def test_every_export_format_applies_the_policy(two_one, db_path, capsys):
    db, d = two_one
    task = get_task("chimera")
    f1 = {}
    for policy in POLICIES:
        data = json.loads(_export(db_path, "json", policy, capsys))
        table = _export(db_path, "latex", policy, capsys)
        text = _export(db_path, "csv", policy, capsys)
        assert data["effective_label_policy"]["name"] == policy
        f1[policy] = data["audited"]["entities"]["comb-element"]["f1"]

        # LaTeX: every audited (and original) cell is the JSON's number, and the caption names the policy
        rows = _latex_rows(table)
        for o, a in zip(task.metric_rows(data["original"]), task.metric_rows(data["audited"]), strict=True):
            want = [o["precision"], o["recall"], o["f1"], a["precision"], a["recall"], a["f1"]]
            assert rows[(o["section"], o["type"])] == ["--" if v is None else f"{100 * v:.1f}" for v in want]
        assert policy in table.split(r"\caption{", 1)[1]

        # CSV: the 2-1 decision's row follows the policy, and its effective labels give the JSON's metrics
        by_id = {int(r["id"]): r for r in csv.DictReader(io.StringIO(text))}
        row = by_id[d["id"]]
        assert (row["effective"], row["source"]) == (("match", "conflicted") if policy == "unanimous"
                                                      else ("no-match", "majority"))
        assert {r["policy"] for r in by_id.values()} == {policy}
        recomputed = _metrics_from_csv(db, text)
        for section in ("classification", "entities", "relations"):
            for typ, vals in data["audited"][section].items():
                for k, v in vals.items():
                    assert recomputed[section][typ][k] == pytest.approx(v, abs=1e-12), (policy, section, typ, k)
        assert data["reviews"]["conflicted"] == (1 if policy == "unanimous" else 0)
    assert f1["majority"] < f1["unanimous"]  # the policy matters here: the majority overrules the judge's match
