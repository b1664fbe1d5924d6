"""Review flows that used to stall: Compare judges offers same-task runs only (no red error for any family), a
sampling plan created from the queue serves its first card at once, reviewer progress follows the reviews, and
the Runs page's own run box follows a newly scored run."""

import pytest

from audit.compare import comparable_runs
from audit.demo import demo_runs
from audit.store import list_runs, open_db
from tests.app.conftest import open_page

DEMOS = [d.name for _, d in demo_runs()]


@pytest.mark.parametrize("run", DEMOS)
def test_compare_offers_same_task_runs_defaulting_to_the_most_recent(app, app_db, run):
    db = open_db(app_db)
    rows = {r["name"]: r for r in list_runs(db)}
    at = open_page(app, "compare", run=run)
    at.selectbox(key="compare.a").set_value(run)
    at.run()
    assert not at.exception and not at.error
    same_task = [n for n in rows if n != run and rows[n]["task"] == rows[run]["task"]]
    offered = comparable_runs(db, run)
    assert set(offered) <= set(same_task)
    if offered:
        b = at.selectbox(key="compare.b")
        assert list(b.options) == offered and b.value == offered[0]
        assert max(rows[n]["id"] for n in offered) == rows[offered[0]]["id"]  # the most recent
        assert any(m.label == "Shared decisions" for m in at.metric)
    else:
        assert any("No other run of the same task" in i.value for i in at.info)
