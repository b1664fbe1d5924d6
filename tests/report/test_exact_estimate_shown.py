"""A headline number no review can change (CHIMERA's classification F1) is shown with its exact value as the
estimate on every surface that says the estimate, also before the sample reaches the interval's minimum, where the
estimator withholds every cell: the Scores page, the report and the LaTeX table showed "exact" intervals around "–"."""

from __future__ import annotations

import pytest

from audit.outputs.estimate_text import NOT_REVIEWABLE, estimate_lines
from audit.review.sampling import create_plan, estimate
from audit.views import as_view

RUN = "mixed"  # the CHIMERA demo run of `db_with_run`


@pytest.fixture
def planned(db_with_run):
    create_plan(db_with_run, RUN, seed=0)
    return db_with_run


def test_an_exact_cell_is_shown_with_its_value_before_any_review(planned):
    view = as_view(planned, RUN)
    est = estimate(planned, RUN)
    lines = {"/".join(line.cell.path): line for line in estimate_lines(view.task, est)}
    exact = [k for k, line in lines.items() if not line.reviewable]
    assert exact == ["classification/avg/f1"]
    value = view.audit.metrics["classification"]["avg"]["f1"]
    for key, line in lines.items():
        e = est[key]
        if line.reviewable:
            assert line.estimate is None and e["estimate"] is None  # below the minimum: withheld
            continue
        # the estimator itself gives it (the JSON of `audit estimate` and the export read this), exact...
        assert e["estimate"] == e["reviewed_so_far"] == e["judge_only"] == value
        assert e["ci"] == e["anytime"]["ci"] == e["power_tuned"]["ci"] == [value, value]
        assert (e["bias"], e["bias_ci"], e["note"]) == (0.0, [0.0, 0.0], NOT_REVIEWABLE)
        assert line.estimate == value  # ...and the surfaces show its value
        assert line.words().startswith(f"{line.label} 0.8219 (exact")
