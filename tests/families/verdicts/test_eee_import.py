"""Every Eval Ever instance files (#41): a real instance file written by Every Eval Ever's own converter
(tests/fixtures/verdicts/README.md) imports every sample with its score and reference; with no review the mean is
the aggregate log's score; a line without a score is skipped and named."""

from __future__ import annotations

import json
import math

from audit.framework_logs import import_log
from audit.store.database import open_db
from scoring.families.verdicts.eee_log import read_eee_instances
from tests.conftest import ROOT

FOLDER = ROOT / "data" / "verdicts" / "eee"
[INSTANCES] = sorted(FOLDER.glob("*_samples.jsonl"))
[AGGREGATE] = [p for p in FOLDER.glob("*.json")]


def test_zero_review_mean_is_the_aggregate_logs_score(tmp_path):
    [result] = json.loads(AGGREGATE.read_text(encoding="utf-8"))["evaluation_results"]
    want = result["score_details"]["score"]
    got = import_log(open_db(tmp_path / "a.db"), "eee", str(INSTANCES), run="e")
    assert got["reported"] == {result["evaluation_result_id"]: want}
    assert math.isclose(got["metrics"]["headline"]["mean"], want, rel_tol=0, abs_tol=1e-9)


def test_every_sample_has_its_score_and_reference():
    got = read_eee_instances(str(INSTANCES))
    assert got.records == len(got.items) == 8 and not got.errors
    choices = {"0": ["Ag", "Au", "Gd", "Go"]}
    first = next(i for i in got.items if i["id"] == "0")
    assert first["target"] == ["Au"] and first["output"] in choices["0"]  # the reference index read as its choice
    assert all(i["target"] and i["verdicts"][0]["scorer"] == "acc" for i in got.items)


def test_a_line_without_a_score_is_skipped_and_named(tmp_path):
    lines = INSTANCES.read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[4])
    rec["evaluation"]["score"] = None
    lines[4] = json.dumps(rec)
    bad = tmp_path / INSTANCES.name
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    got = import_log(open_db(tmp_path / "a.db"), "eee", str(bad), run="e")
    assert got["imported"] == 7 and got["skipped"] == 1
    assert got["errors"] == [f"{bad}: record 5: evaluation 'acc': evaluation.score is None, not a number"]


def test_an_evaluation_whose_lower_score_is_better_passes_at_or_below_the_threshold(tmp_path):
    """The aggregate log's `metric_config.lower_is_better` was ignored: an error rate of 0.1 was labelled "fail"
    and 0.9 "pass", so a reviewer's overrule landed at the wrong end. Each sample's label now follows the metric's
    direction, and with no review the mean is still the aggregate's."""
    from audit.views import decisions

    agg = json.loads(AGGREGATE.read_text(encoding="utf-8"))
    agg["evaluation_results"][0]["metric_config"]["lower_is_better"] = True
    (tmp_path / AGGREGATE.name).write_text(json.dumps(agg), encoding="utf-8")
    (tmp_path / INSTANCES.name).write_text(INSTANCES.read_text(encoding="utf-8"), encoding="utf-8")
    db = open_db(tmp_path / "a.db")
    got = import_log(db, "eee", str(tmp_path / INSTANCES.name), run="e")
    scores = {json.loads(x)["sample_id"]: json.loads(x)["evaluation"]["score"]
              for x in INSTANCES.read_text(encoding="utf-8").splitlines() if x.strip()}
    labels = {d["doc"]: d["judge"] for d in decisions(db, "e")}
    assert labels == {s: ("pass" if v <= 0.5 else "fail") for s, v in scores.items()}
    assert len(set(labels.values())) == 2  # both directions seen
    assert math.isclose(got["metrics"]["headline"]["mean"], sum(scores.values()) / len(scores), abs_tol=1e-12)
