"""DeepEval test runs (#41): a real test run graded by GEval (tests/fixtures/verdicts/README.md) imports every case
with its score, threshold, reference and the judge's reason; with no review the mean score and the pass rate are
DeepEval's own; a metric that errored is skipped and named."""

from __future__ import annotations

import json
import math

from audit.framework_logs import import_log
from audit.rescoring import audit_run
from audit.review.reviews import add_review
from audit.store.database import open_db
from audit.views import decisions
from scoring.families.verdicts.deepeval_log import read_deepeval_run
from scoring.families.verdicts.model import FAILED, PASSED
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


def test_a_metric_that_passes_below_its_threshold_keeps_its_recorded_verdict(tmp_path):
    """DeepEval's toxicity passes at or below its threshold: the recorded `success` is the label, and a review that
    overrules it moves the mean score towards the failing end (1), not the passing one."""
    data = json.loads(RUN.read_text(encoding="utf-8"))
    for case, (score, success) in zip(data["testCases"], [(0.1, True), (0.8, False), (0.3, True), (0.0, True),
                                                          (0.6, False)], strict=True):
        case["metricsData"].append({"name": "Toxicity", "threshold": 0.5, "success": success, "score": score,
                                    "reason": "scripted"})
    path = tmp_path / RUN.name
    path.write_text(json.dumps(data), encoding="utf-8")
    db = open_db(tmp_path / "a.db")
    import_log(db, "deepeval", str(path), run="de")
    toxicity = {d["doc"]: d for d in decisions(db, "de") if d["type"] == "Toxicity"}
    recorded = {c["name"]: c["metricsData"][-1]["success"] for c in data["testCases"]}
    assert {doc: d["judge"] == PASSED for doc, d in toxicity.items()} == recorded
    assert all(d["detail"]["lower_is_better"] for d in toxicity.values())
    before = audit_run(db, "de").metrics["scorers"]["Toxicity"]["mean"]
    first = next(d for d in toxicity.values() if d["judge"] == PASSED)  # scored 0.1: overruled, it fails
    add_review(db, "de", first["id"], FAILED, "ana")
    after = audit_run(db, "de").metrics["scorers"]["Toxicity"]["mean"]
    assert math.isclose(after - before, (1.0 - first["detail"]["value"]) / 5, abs_tol=1e-12)


def test_the_headline_is_one_scorers_mean_whatever_order_each_case_lists_its_metrics(tmp_path):
    """DeepEval lists each case's metrics in its own order: the headline took each item's first verdict, so it
    mixed Correctness and Answer Relevancy (0.8, the mean of neither). Invariant, over random orders: the headline
    is the mean of the scorer the first case lists first, over the cases that have it, unreviewed and reviewed."""
    import random

    data = json.loads(RUN.read_text(encoding="utf-8"))
    rng = random.Random(4)
    for n, case in enumerate(data["testCases"]):
        other = {"name": "Answer Relevancy", "score": round(rng.random(), 3), "threshold": 0.5, "reason": "ok",
                 "evaluationModel": "m"}
        other["success"] = other["score"] >= 0.5
        if n != 3:  # one case without the second metric
            case["metricsData"].append(other)
        rng.shuffle(case["metricsData"])
    log = tmp_path / RUN.name
    log.write_text(json.dumps(data), encoding="utf-8")
    db = open_db(tmp_path / "a.db")
    result = import_log(db, "deepeval", str(log), run="de")
    head = data["testCases"][0]["metricsData"][0]["name"]
    assert math.isclose(result["metrics"]["headline"]["mean"], result["metrics"]["scorers"][head]["mean"],
                        rel_tol=0, abs_tol=1e-12)
    assert result["metrics"]["headline"]["n"] == result["metrics"]["scorers"][head]["n"]
    for d in rng.sample(decisions(db, "de"), 4):
        add_review(db, "de", d["id"], FAILED if d["judge"] == PASSED else PASSED, "ana")
    stored, rebuilt = audit_run(db, "de").metrics, audit_run(db, "de", rebuild=True).metrics
    assert stored == rebuilt and stored["headline"] == stored["scorers"][head]


def test_scores_outside_the_unit_range_are_imported_with_a_warning_naming_the_scorer(tmp_path):
    """An overrule counts a score 1 (pass) or 0 (fail): scores of 1.7 and -2 were imported without a word, and an
    audited mean would mix the two scales. The import now says so; the bundled run (scores in [0, 1]) warns of
    nothing."""
    data = json.loads(RUN.read_text(encoding="utf-8"))
    data["testCases"][0]["metricsData"][0]["score"] = 1.7
    data["testCases"][1]["metricsData"][0]["score"] = -2
    log = tmp_path / RUN.name
    log.write_text(json.dumps(data), encoding="utf-8")
    warnings = import_log(open_db(tmp_path / "a.db"), "deepeval", str(log), run="de")["warnings"]
    assert f"{METRIC}: 2 scores outside [0, 1] (e.g. 1.7)" in " ".join(warnings)
    assert import_log(open_db(tmp_path / "b.db"), "deepeval", str(RUN), run="de")["warnings"] == []


def test_a_case_the_headline_scorer_did_not_judge_takes_its_own_verdict_as_its_outcome(tmp_path):
    """With one headline scorer, a case without that metric had a headline of n = 0, read as "incorrect" (and
    listed among the failures on the overview) though it passed its own metric."""
    from audit.views import as_view

    data = json.loads(RUN.read_text(encoding="utf-8"))
    data["testCases"][1]["metricsData"] = [{"name": "Answer Relevancy", "score": 0.9, "threshold": 0.5,
                                            "success": True, "reason": "ok", "evaluationModel": "m"}]
    log = tmp_path / RUN.name
    log.write_text(json.dumps(data), encoding="utf-8")
    db = open_db(tmp_path / "a.db")
    import_log(db, "deepeval", str(log), run="de")
    outcomes = {d["doc"]: d["audited_outcome"] for d in as_view(db, "de").documents()}
    assert outcomes[data["testCases"][1]["name"]] == "partial"  # worth 0.9, its own metric's score
