"""DeepEval test runs (#41): a real test run graded by GEval (tests/fixtures/verdicts/README.md) imports every case
with its score, threshold, reference and the judge's reason; with no review the mean score and the pass rate are
DeepEval's own; a metric that errored is skipped and named."""

from __future__ import annotations

import json
import math

from audit.framework_logs import import_log
from audit.store.database import open_db
from audit.views import decisions
from scoring.families.verdicts.deepeval_log import read_deepeval_run
from scoring.families.verdicts.model import PASSED
from tests.conftest import ROOT

[RUN] = sorted((ROOT / "data" / "verdicts" / "deepeval").glob("test_run_*.json"))
METRIC = "Correctness [GEval]"


def test_zero_review_mean_score_and_pass_rate_are_deepevals(tmp_path):
    data = json.loads(RUN.read_text(encoding="utf-8"))
    [scores] = data["metricsScores"]
    db = open_db(tmp_path / "a.db")
    result = import_log(db, "deepeval", str(RUN), run="de")
    want = sum(scores["scores"]) / len(scores["scores"])
    assert math.isclose(result["metrics"]["headline"]["mean"], want, rel_tol=0, abs_tol=1e-9)
    assert math.isclose(result["reported"][METRIC], want, rel_tol=0, abs_tol=1e-9)
    passed = sum(d["judge"] == PASSED for d in decisions(db, "de"))
    assert passed == scores["passes"] == data["testPassed"]


def test_every_case_has_score_reference_and_reason():
    got = read_deepeval_run(str(RUN))
    assert got.records == len(got.items) == 5 and not got.errors
    for item in got.items:
        [v] = item["verdicts"]
        assert item["target"][0] and v["explanation"] and v["threshold"] == 0.5 and "Evaluation Steps" in v["prompt"]


def test_a_metric_that_errored_is_skipped_and_named(tmp_path):
    data = json.loads(RUN.read_text(encoding="utf-8"))
    md = data["testCases"][2]["metricsData"][0]
    md["score"], md["error"] = None, "judge timed out"
    bad = tmp_path / RUN.name
    bad.write_text(json.dumps(data), encoding="utf-8")
    result = import_log(open_db(tmp_path / "a.db"), "deepeval", str(bad), run="de")
    assert result["imported"] == 4
    assert result["errors"] == [f"{bad}: record 3: case case-3: metric '{METRIC}' has no score (error: judge timed "
                                "out)"]
