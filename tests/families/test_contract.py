"""Every registered family provides what the shell asks for (scoring/families/base.py `TaskFamily`), and its demo
runs score, store and re-score through the shell with the invariants the shell relies on."""

from __future__ import annotations

import inspect
import json

import pytest

from scoring.families import TASKS
from scoring.families.base import DemoRun, InputSpec, LabelScheme, MetricCell, OptionSpec, TaskFamily

MEMBERS = [n for n, _ in inspect.getmembers(TaskFamily) if not n.startswith("_")] + \
    list(TaskFamily.__annotations__)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_family_provides_every_member(name):
    fam = TASKS[name]
    missing = [m for m in dict.fromkeys(MEMBERS) if not hasattr(fam, m)]
    assert not missing, f"{name} lacks {missing}"
    assert fam.name == name and fam.title
    assert fam.label_schemes and all(isinstance(s, LabelScheme) for s in fam.label_schemes.values())
    for kind, s in fam.label_schemes.items():
        assert s.labels and s.invalid not in s.labels, kind
        if s.scale == "binary":
            assert s.positive in s.labels and len(s.labels) == 2, kind
    assert fam.inputs and all(isinstance(i, InputSpec) for i in fam.inputs)
    assert all(isinstance(o, OptionSpec) and o.choices for o in fam.options)
    assert fam.judge_specs
    assert fam.headline and all(isinstance(c, MetricCell) for c in fam.headline)
    assert isinstance(fam.describe_judge_log(), str)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_demo_runs_score_and_their_decisions_are_one_per_question(name, tmp_path):
    from audit.demo import DATA
    from audit.runs import score_run
    from audit.store import open_db
    from audit.views import decisions

    fam = TASKS[name]
    demos = fam.demo_runs(DATA)
    assert demos and all(isinstance(d, DemoRun) for d in demos)
    db = open_db(tmp_path / "c.db")
    d = demos[0]
    row = score_run(db, name, d.inputs, d.judge, run=d.name)
    json.dumps(row["original_metrics"])
    for cell in fam.headline:
        assert cell.value(row["original_metrics"]) is not None, cell.path
    decs = list(decisions(db, d.name))
    keys = [(x["doc"], x["kind"], x["type"], x["left"], x["right"]) for x in decs]
    assert len(keys) == len(set(keys))
    for kind, s in fam.label_schemes.items():
        judged = {x["judge"] for x in decs if x["kind"] == kind}
        assert judged <= set(s.judge_labels), (kind, judged - set(s.judge_labels))
    if s.symmetric:
        sym = [(x["doc"], x["kind"], x["type"], frozenset((x["left"], x["right"]))) for x in decs]
        assert len(sym) == len(set(sym))
    rows = fam.metric_rows(row["original_metrics"])
    assert rows and all(isinstance(r, dict) for r in rows)
