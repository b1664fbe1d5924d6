"""The sample queue names its decisions by id and by the pages' `#N` (a newcomer passed an id with `#`, as the README
writes numbers, and labelled another decision of another paper: ids and numbers differ in every run but the first)."""

from __future__ import annotations

import json

from audit.cli import main
from audit.review.sampling import create_plan
from audit.store.database import open_db
from audit.views import as_view
from tests.conftest import copy_of

RUN = "demo-litxbench-drop-meas30"


def test_the_queue_gives_each_decisions_number_and_review_takes_it(tmp_path, demo_template, capsys):
    path = copy_of(demo_template, tmp_path / "d.db")
    db = open_db(path)
    create_plan(db, RUN, seed=2)
    assert main(["--db", str(path), "queue", "--run", RUN, "--next"]) == 0
    served = json.loads(capsys.readouterr().out)
    view = as_view(db, RUN)
    pairs = list(zip(served["decisions"], served["numbers"], strict=True))
    assert pairs and all(view.decision_by_number(int(n.removeprefix("#"))) == i for i, n in pairs)
    assert any(f"#{i}" != n for i, n in pairs)  # not the first run: an id is not its number
    dec, number = pairs[0]
    kind = next(d for d in view.decisions() if d["id"] == dec)["kind"]
    label = view.task.label_schemes[kind].labels[0]
    assert main(["--db", str(path), "review", "--run", RUN, "--decision", number, "--label", label,
                 "--reviewer", "bo", "--sampled"]) == 0
    assert db.execute("SELECT decision_id FROM reviews WHERE reviewer = 'bo'").fetchall() == [(dec,)]
