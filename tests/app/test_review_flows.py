"""Review flows that used to stall: Compare judges offers same-task runs only (no red error for any family), a
sampling plan created from the queue serves its first card at once, reviewer progress follows the reviews, and
the Runs page's own run box follows a newly scored run."""

import pytest

from audit.demo import demo_runs
from audit.outputs.compare import comparable_runs
from audit.store.database import list_runs, open_db
from tests.app.conftest import open_page, plain

DEMOS = [d.name for _, d in demo_runs()]


@pytest.mark.parametrize("run", DEMOS)
def test_compare_offers_same_task_runs_defaulting_to_the_most_recent_on_the_same_inputs(app, app_db, run):
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
        shas = {n: {k: v.get("sha256") for k, v in rows[n]["inputs"].items()} for n in rows}
        another_judge = [n for n in offered if shas[n] == shas[run]]  # the same inputs: what Compare judges is for
        assert max(rows[n]["id"] for n in another_judge or offered) == rows[offered[0]]["id"]  # the most recent
        assert any(m.label == "Shared decisions" for m in at.metric)
    else:
        assert any("No other run of the same task" in i.value for i in at.info)


def test_the_runs_page_box_follows_a_newly_scored_run(app):
    at = open_page(app, "runs")
    before = at.selectbox(key="runs.pick").value
    at.selectbox(key="newrun.chimera.pred.choice").set_value("chimera/pred_perfect.jsonl")
    exact = next(o for o in at.selectbox(key="newrun.chimera.judge").options if o.startswith("exact"))
    at.selectbox(key="newrun.chimera.judge").set_value(exact)
    at.text_input(key="newrun.name").set_value("fresh-run")
    at.button(key="newrun.score").click().run()
    assert not at.exception and not at.error
    assert before != "fresh-run"
    assert at.session_state["current_run"] == "fresh-run"  # the sidebar's current run
    assert at.selectbox(key="runs.pick").value == "fresh-run"  # and the page's own box


@pytest.mark.parametrize("blind", [False, True])
def test_a_blind_reviewer_does_not_read_the_official_f1_in_demo_notes(app, blind):
    from audit.demo import demo_runs as runs

    hidden = [part for _, d in runs() for part in d.judge_derived]
    assert hidden  # LitXBench declares its official F1
    at = app
    at.session_state["blind_mode"] = blind
    at = open_page(at, "runs", reviewer="ana")
    text = plain(" ".join(m.value for m in at.markdown))
    assert all((part in text) != blind for part in hidden)
    if blind:
        assert "judge-derived score hidden in blind review" in text


def test_every_declared_judge_derived_part_is_in_its_note():
    for _, d in demo_runs():
        for part in d.judge_derived:
            assert part in d.note, (d.name, part)
        assert not any(part in d.note_for(blind=True) for part in d.judge_derived)


@pytest.mark.parametrize("run", ["demo-chimera-mixed", "demo-litxbench-drop-meas30"])
def test_a_plan_created_from_the_queue_serves_the_suggested_card_at_once(app, app_db, run):
    import re

    from audit.review.sampling import load_plan, next_sample

    at = open_page(app, "queue", reviewer="ana", run=run)
    at.selectbox(key="queue.mode").set_value("sample").run()
    assert load_plan(open_db(app_db), run) is None
    at.button(key="queue.create_plan").click().run()
    assert not at.exception and not at.error
    db = open_db(app_db)
    suggested = next_sample(db, run)
    text = " ".join(m.value for m in at.markdown)
    head = re.search(r"decision #\d+ \(id (\d+)\) · 1 of (\d+)", text)
    assert head, "the queue is empty until a reload"
    assert int(head[1]) == suggested["decisions"][0] and int(head[2]) > 0
    assert not [s for s in at.success if "Nothing left" in s.value]


def test_reviewer_progress_is_drawn_inside_the_card_fragment():
    """AppTest reruns the whole page, so it cannot see a fragment go stale: check where the table is drawn. The
    function decorated with st.fragment must draw (or call what draws) "Reviewer progress"."""
    import ast

    from tests.conftest import ROOT

    tree = ast.parse((ROOT / "pages" / "queue.py").read_text())
    funcs = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}

    def draws_progress(node) -> bool:
        return any(isinstance(c, ast.Constant) and c.value == "Reviewer progress" for c in ast.walk(node))

    def reaches(name, seen=()) -> bool:
        f = funcs[name]
        called = {c.func.id for c in ast.walk(f) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
        return draws_progress(f) or any(reaches(n, (*seen, name)) for n in called if n in funcs and n not in seen)

    fragments = [f.name for f in funcs.values() if any(ast.unparse(d) == "st.fragment" for d in f.decorator_list)]
    assert fragments and all(reaches(f) for f in fragments)  # the classic card's and the browser card's alike
    top_level = [n for n in tree.body if not isinstance(n, ast.FunctionDef | ast.Import | ast.ImportFrom)]
    assert not any(draws_progress(n) for n in top_level)  # not drawn outside the fragment as well


def test_the_runs_page_asks_for_a_name_only_until_one_is_given(app):
    """"Enter your name in the sidebar before reviewing" stayed when a name was set."""
    from tests.app.conftest import plain

    at = open_page(app, "runs")
    assert "Enter your name in the sidebar before reviewing" in " ".join(plain(c.value) for c in at.caption)
    at = open_page(at, "runs", reviewer="ana")
    said = " ".join(plain(c.value) for c in at.caption)
    assert "You review as ana." in said and "Enter your name" not in said
