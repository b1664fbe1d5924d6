"""The demo's boards (issue 36 §5): every run naming a board shares its family, gold and judge spec, so the board
compares systems under one judge; CHIMERA has three systems, LitXBench and retrieval two, ideation one run."""

from collections import defaultdict

from audit.demo import demo_runs


def _boards() -> dict[str, list[tuple[str, object]]]:
    out = defaultdict(list)
    for task, d in demo_runs():
        if d.board:
            out[d.board].append((task, d))
    return dict(out)


def test_one_board_per_family_with_its_systems():
    sizes = {name: len(runs) for name, runs in _boards().items()}
    assert sizes == {"demo-chimera": 3, "demo-retrieval": 2, "demo-ideation": 1, "demo-litxbench": 2}
    assert {runs[0][0] for runs in _boards().values()} == {"chimera", "retrieval", "ideation", "litxbench"}


def test_a_boards_runs_share_family_gold_and_judge():
    for name, runs in _boards().items():
        assert len({task for task, _ in runs}) == 1, name
        assert len({d.judge for _, d in runs}) == 1, name
        golds = {tuple(sorted((k, v) for k, v in d.inputs.items() if k != "pred")) for _, d in runs}
        assert len(golds) == 1, name
        assert len({d.inputs.get("pred") for _, d in runs}) == len(runs), name  # different systems


def test_the_demo_seeds_its_boards_and_leaves_out_one_whose_run_is_gone(demo_template, tmp_path):
    from audit.board.store import list_boards
    from audit.demo import demo_boards, load_demo, seed_boards
    from audit.runs import delete_run
    from audit.store.database import open_db
    from tests.conftest import copy_of

    db = open_db(copy_of(demo_template, tmp_path / "d.db"))
    try:
        assert {b["name"]: b["runs"] for b in list_boards(db)} == demo_boards()
        delete_run(db, "demo-chimera-fuzzy-terse", force=True)  # its board keeps the other two
        assert {b["name"]: b["runs"] for b in list_boards(db)}["demo-chimera"] == ["demo-chimera-fuzzy-mixed",
                                                                                 "demo-chimera-fuzzy-verbose"]
        delete_run(db, "demo-litxbench-process-perturb", force=True)  # takes its board of two with it
        assert "demo-litxbench" not in {b["name"] for b in list_boards(db)}
        assert seed_boards(db) == []  # a board of a deleted demo run is not made again, nor completed
        # "Load the demo runs": the runs, and their boards whole again
        assert load_demo(db) == ["demo-chimera-fuzzy-terse", "demo-litxbench-process-perturb"]
        assert {b["name"]: b["runs"] for b in list_boards(db)} == demo_boards()
    finally:
        db.conn.close()
