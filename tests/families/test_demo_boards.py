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
