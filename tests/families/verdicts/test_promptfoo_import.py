"""promptfoo results (#41): a real `promptfoo eval -o results.json` with an llm-rubric grader
(tests/fixtures/verdicts/README.md): every row imports with its verdicts, references and the grader's reasons and
prompt; with no review the pass rate is promptfoo's own; a row without a verdict is skipped and named."""

from __future__ import annotations

import json
import math

from audit.framework_logs import import_log
from audit.store.database import open_db
from scoring.families.verdicts.promptfoo_log import OVERALL, read_promptfoo_results
from tests.conftest import ROOT

RESULTS = ROOT / "data" / "verdicts" / "promptfoo_results.json"


def test_zero_review_pass_rate_is_promptfoos(tmp_path):
    stats = json.loads(RESULTS.read_text(encoding="utf-8"))["results"]["stats"]
    want = stats["successes"] / (stats["successes"] + stats["failures"] + stats["errors"])
    result = import_log(open_db(tmp_path / "a.db"), "promptfoo", str(RESULTS), run="pf")
    assert result["reported"] == {OVERALL: want}
    assert math.isclose(result["metrics"]["headline"]["mean"], want, rel_tol=0, abs_tol=1e-9)


def test_every_row_has_verdicts_references_and_the_graders_reason():
    got = read_promptfoo_results(str(RESULTS))
    assert got.records == len(got.items) == 5 and not got.errors
    for item in got.items:
        rubric = next(v for v in item["verdicts"] if v["scorer"] == "llm-rubric")
        assert item["target"] and rubric["explanation"] and "<Rubric>" in rubric["prompt"]
    spider = next(i for i in got.items if "spider" in i["input"])
    assert spider["output"] == "Spiders have eight legs." and spider["verdicts"][1]["value"] is False


def test_a_row_without_a_verdict_is_skipped_and_named(tmp_path):
    data = json.loads(RESULTS.read_text(encoding="utf-8"))
    del data["results"]["results"][3]["success"]
    bad = tmp_path / "results.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    result = import_log(open_db(tmp_path / "a.db"), "promptfoo", str(bad), run="pf")
    assert result["imported"] == 4 and result["errors"] == [f"{bad}: record 4: no boolean 'success'"]


def test_an_assertion_that_cannot_be_read_is_named_and_an_id_that_is_not_one_skips_its_row(tmp_path):
    """An assertion whose `pass` is "yes" was dropped without a word (its scorer's n fell from 5 to 4), and a
    `testIdx` that is an object became the id "{'a': 1}"."""
    data = json.loads(RESULTS.read_text(encoding="utf-8"))
    rows = data["results"]["results"]
    rows[1]["gradingResult"]["componentResults"][0]["pass"] = "yes"
    rows[2]["testIdx"] = {"a": 1}
    bad = tmp_path / "results.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    result = import_log(open_db(tmp_path / "a.db"), "promptfoo", str(bad), run="pf")
    assert result["imported"] == 4 and result["skipped"] == 1
    assert result["errors"] == [f"{bad}: record 2: assertion 1: 'pass' is 'yes', not true or false; that verdict is "
                                "skipped", f"{bad}: record 3: testIdx is dict, not a string or a whole number"]
