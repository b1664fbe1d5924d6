"""`board_table` (the `board show` JSON): per system the run's own judge-only and audited metrics whatever the
reviews, ranks of those, exact intervals and one-rank rank sets after a full review, no interval otherwise."""

from __future__ import annotations

import math
import random
from collections import Counter
from pathlib import Path

import pytest

from audit.board.store import create_board
from audit.board.table import PAIRS_PAIRED, board_table
from audit.rescoring import audit_run
from audit.review.reviews import add_review
from audit.store.database import db_file, run_row
from audit.views import decisions
from scoring.families import TASKS
from scoring.stats.board import competition_ranks
from tests.board.conftest import LITX_RUNS, review_all

RUNS = ["a", "b", "c"]


def _cells(db, run):
    task = TASKS[run_row(db, run)["task"]]
    return task, task.board_cells(run_row(db, run)["original_metrics"])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("policy", ["unanimous", "majority"])
def test_each_systems_values_are_its_runs_own_for_random_reviews_in_random_runs(bdb, seed, policy):
    rng = random.Random(seed)
    create_board(bdb, "t", RUNS)
    pool = [(r, d) for r in RUNS for d in decisions(bdb, r)]
    for r, d in rng.sample(pool, 60):
        labels = TASKS["chimera"].label_schemes[d["kind"]].labels
        for who in rng.sample(["ana", "bo", "cy"], rng.randint(1, 2)):
            add_review(bdb, r, d["id"], rng.choice(labels), who,
                       role="adjudicator" if rng.random() < 0.1 else "reviewer")
    table = board_table(bdb, "t", policy=policy)
    task, cells = _cells(bdb, "a")
    assert table["interval"] == "none" and table["policy"] == policy
    assert table["pairs_explained"] is None  # no sample: A − B is the two values' difference
    assert all(math.isclose(p["difference"], next(s["audited"][table["metric"]] for s in table["systems"]
                                                   if s["system"] == p["a"]) -
                            next(s["audited"][table["metric"]] for s in table["systems"] if s["system"] == p["b"]),
                            abs_tol=1e-12) for p in table["pairs"])
    for s in table["systems"]:
        own = audit_run(bdb, s["run"], policy=policy, rebuild=True).metrics
        judge = run_row(bdb, s["run"])["original_metrics"]
        for c in cells:
            key = "/".join(c.path)
            assert s["audited"][key] == c.value(own), (s["run"], key)
            assert s["judge_only"][key] == c.value(judge), (s["run"], key)
        assert s["estimate"] is None and s["bias"] is None and s["rank_set"] is None
    key = table["metric"]
    assert key == "entities/avg/f1"
    audited = {s["system"]: s["audited"][key] for s in table["systems"]}
    assert {s["system"]: s["rank_audited"] for s in table["systems"]} == competition_ranks(audited,
                                                                                            higher_is_better=True)
    assert all(p["ci"] is None and p["difference"] == pytest.approx(audited[p["a"]] - audited[p["b"]])
               for p in table["pairs"])
    assert all("no interval yet" in s for s in table["settled"])


def test_a_full_review_makes_everything_exact(bdb, tmp_path):
    create_board(bdb, "t", RUNS)
    for i, r in enumerate(RUNS):
        review_all(bdb, r, tmp_path, seed=i)
    table = board_table(bdb, "t")
    assert table["interval"] == "exact"
    rv = table["reviewed"]
    assert rv["decisions"] == rv["of_decisions"] and rv["documents"] == rv["of_documents"] > 0
    key = table["metric"]
    values = {s["system"]: s["audited"][key] for s in table["systems"]}
    ranks = competition_ranks(values, higher_is_better=True)
    for s in table["systems"]:
        own = audit_run(bdb, s["run"]).metrics
        for k, v in s["audited"].items():
            assert s["estimate"][k] == {"value": v, "ci": [v, v], "anytime": {"ci": [v, v]}}
            assert s["bias"][k]["value"] == pytest.approx(s["judge_only"][k] - v)
            assert s["bias"][k]["ci"][0] == s["bias"][k]["ci"][1]
        assert s["audited"][key] == TASKS["chimera"].headline[1].value(own)
        tied = [t for t, v in values.items() if v == values[s["system"]]]
        assert s["rank_set"] == [ranks[s["system"]], ranks[s["system"]] + len(tied) - 1]
    assert all(p["ci"] == [p["difference"]] * 2 for p in table["pairs"])
    assert not any("not settled" in w or "no interval" in w for w in table["settled"])


def _judged(db, run: str) -> dict[str, tuple[int, str]]:
    """qkey -> (decision id, judge label) of the run's span pairs of unequal strings."""
    return {q: (i, j) for i, q, j in db.execute(
        "SELECT d.id, d.qkey, d.judge_label FROM decisions d JOIN runs r ON r.id = d.run_id WHERE r.name = ? AND "
        "d.left != d.right", [run])}


def test_one_shared_review_moves_two_systems(bdb):
    """A question both a's and b's judges called a match, not asked in c, overruled in a: a's and b's audited
    values fall, c's stays."""
    create_board(bdb, "t", RUNS)
    before = {s["system"]: s["audited"]["entities/avg/f1"] for s in board_table(bdb, "t")["systems"]}
    a, b, c = (_judged(bdb, r) for r in RUNS)
    moved = None
    for q in (q for q in sorted(a) if q in b and q not in c and a[q][1] == b[q][1] == "match"):
        add_review(bdb, "a", a[q][0], "no-match", "ana")
        table = board_table(bdb, "t")
        after = {s["system"]: s["audited"]["entities/avg/f1"] for s in table["systems"]}
        assert after["c"] == before["c"]
        if after["a"] != before["a"]:
            moved = after
            break
        add_review(bdb, "a", a[q][0], None, "ana")  # a pair the 1-to-1 matching leaves unused: try the next
    assert moved is not None and moved["a"] < before["a"] and moved["b"] < before["b"]
    assert table["reviewed"]["decisions"] == 1
    keys = [{q for q, in bdb.execute("SELECT d.qkey FROM decisions d JOIN runs r ON r.id = d.run_id WHERE "
                                     "r.name = ?", [r])} for r in RUNS]
    assert table["shared_questions"] == len((keys[0] & keys[1]) | (keys[0] & keys[2]) | (keys[1] & keys[2])) > 0


def test_an_ideation_board_compares_the_systems_inside_its_run(bdb, tmp_path):
    create_board(bdb, "i", ["ideas"])
    table = board_table(bdb, "i")
    task = TASKS["ideation"]
    metrics = run_row(bdb, "ideas")["original_metrics"]
    assert [s["system"] for s in table["systems"]] == ["Human", "AI", "AI_Rerank"]
    assert table["metric"] == "absolute/novelty/mean" and table["shared_questions"] == 0
    for s in table["systems"]:
        assert s["run"] == "ideas"
        assert s["judge_only"]["absolute/novelty/mean"] == metrics["absolute"][s["system"]]["novelty"]["mean"]
        assert s["judge_only"]["pairwise/novelty/score"] == metrics["pairwise"][s["system"]]["novelty"]["score"]
    first = table["systems"][0]["judge_only"]
    assert first["absolute/novelty/mean"] == task.headline[0].value(metrics)  # the headline's first system
    review_all(bdb, "ideas", tmp_path)
    table = board_table(bdb, "i")
    own = audit_run(bdb, "ideas").metrics
    assert table["interval"] == "exact"
    for s in table["systems"]:
        assert s["audited"]["pairwise/novelty/score"] == own["pairwise"][s["system"]]["novelty"]["score"]
        assert s["rank_set"][0] == s["rank_set"][1] or len({t["audited"]["absolute/novelty/mean"]
                                                            for t in table["systems"]}) < 3


def test_a_joint_plan_supplies_estimates_pairs_and_rank_sets(bdb, monkeypatch):
    """With a board plan (h-o's `board_estimates`), its numbers are shown as given and rank sets read its
    simultaneous intervals; the pair it stores b − a is turned round."""
    import audit.board.table as table_mod

    create_board(bdb, "t", ["a", "b"])
    joint = {"systems": {"a": {"entities/avg/f1": {"value": 0.6, "ci": [0.55, 0.65], "anytime": {"ci": [0.5, 0.7]}},
                               "bias": {"entities/avg/f1": {"value": 0.01, "ci": [-0.02, 0.04]}}},
                         "b": {"entities/avg/f1": {"value": 0.4, "ci": [0.35, 0.45], "anytime": {"ci": [0.3, 0.5]}},
                               "bias": {"entities/avg/f1": {"value": 0.05, "ci": [0.01, 0.09]}}}},
             "pairs": [{"a": "b", "b": "a", "difference": -0.2, "ci": [-0.25, -0.15]}], "more_documents": 7}
    monkeypatch.setattr(table_mod, "_joint_estimates", lambda db, name, policy, views=(): joint)
    table = board_table(bdb, "t")
    assert table["interval"] == "joint plan" and table["more_documents"] == 7
    assert table["pairs_explained"] == PAIRS_PAIRED  # why A − B need not be the two estimates' difference
    a, b = table["systems"]
    assert a["estimate"] == {"entities/avg/f1": joint["systems"]["a"]["entities/avg/f1"]}
    assert b["bias"] == joint["systems"]["b"]["bias"]
    assert table["pairs"] == [{"a": "a", "b": "b", "difference": 0.2, "ci": [0.15, 0.25],
                               "ci_simultaneous": [0.15, 0.25]}]
    assert (a["rank_set"], b["rank_set"]) == ([1, 1], [2, 2])
    assert table["settled"] == ["a > b holds"]


def test_a_system_without_an_estimate_gets_no_rank_and_the_pairs_still_speak(bdb, monkeypatch):
    """One system had no estimate yet (a stratum without a reviewed document): the others were ranked among
    themselves ('empty' 2nd beside its rank set [3, 3]) and the words said nothing could be said, while the pairs'
    intervals settled every order and the queue said "the ranking is settled"."""
    import audit.board.table as table_mod

    create_board(bdb, "t", ["a", "b"])
    note = "no interval yet: a stratum has no reviewed document"
    joint = {"systems": {"a": {"entities/avg/f1": {"value": 0.6, "ci": [0.55, 0.65], "anytime": {"ci": [0.5, 0.7]}}},
                         "b": {"entities/avg/f1": {"value": None, "ci": None, "note": note}}},
             "pairs": [{"a": "a", "b": "b", "difference": 0.2, "ci": [0.15, 0.25]}], "more_documents": 0}
    monkeypatch.setattr(table_mod, "_joint_estimates", lambda db, name, policy, views=(): joint)
    table = board_table(bdb, "t")
    a, b = table["systems"]
    assert (a["rank_audited"], b["rank_audited"]) == (None, None)
    assert (a["rank_set"], b["rank_set"]) == ([1, 1], [2, 2])
    assert table["settled"] == [f"no estimate yet for b ({note}), so no ranks; the paired differences say:",
                                "a > b holds"]


def test_the_cached_structure_follows_decisions_a_review_adds(bdb):
    """The question counts are cached per runs' decision count (a review that makes a family re-decide a document
    adds decisions and updates the count, `audit.rescoring.apply_reviews`): a decision added that way is counted,
    a shared one too."""
    create_board(bdb, "t", ["a", "c"])
    first = board_table(bdb, "t")
    rid = run_row(bdb, "c")["id"]
    only_a = bdb.execute("SELECT d.doc_id, d.kind, d.type, d.left, d.right, d.qkey FROM decisions d JOIN runs r ON "
                         "r.id = d.run_id WHERE r.name = 'a' AND d.qkey NOT IN (SELECT qkey FROM decisions WHERE "
                         "run_id = ?) LIMIT 1", [rid]).fetchone()
    bdb.execute("INSERT INTO decisions (run_id, doc_id, kind, type, left, right, judge_label, detail, qkey) VALUES "
                "(?, ?, ?, ?, ?, ?, 'match', '{}', ?)", [rid, *only_a])
    bdb.execute("UPDATE runs SET n_decisions = n_decisions + 1 WHERE id = ?", [rid])
    again = board_table(bdb, "t")
    assert again["shared_questions"] == first["shared_questions"] + 1
    assert again["reviewed"]["of_decisions"] == first["reviewed"]["of_decisions"]  # a's question, now in c too


def test_the_cache_is_never_read_for_another_database_at_the_same_path(bdb, board_template, tmp_path):
    create_board(bdb, "t", ["a", "b", "c"])
    assert board_table(bdb, "t")["reviewed"]["of_decisions"] == 345
    path = db_file(bdb)
    bdb.conn.close()
    from audit.demo import DATA
    from audit.runs import score_run
    from audit.store.database import open_db
    from tests.conftest import GOLD, JUDGE_LOG, PRED_MIXED, PRED_PERFECT

    for suffix in ("", "-wal", "-shm"):
        Path(path + suffix).unlink(missing_ok=True)
    db = open_db(path)
    # the same runs scored again: same names, ids and decision counts; only the creation time tells them apart
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, f"replay:{JUDGE_LOG}", run="a")
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)},
              f"replay:{DATA / 'chimera' / 'judge_smollm2_structured.jsonl'}", run="b")
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_PERFECT)}, f"replay:{JUDGE_LOG}", run="c")
    db.execute("UPDATE decisions SET qkey = 'elsewhere-' || qkey WHERE run_id = ?", [run_row(db, "b")["id"]])
    create_board(db, "t", ["a", "b", "c"])
    assert board_table(db, "t")["reviewed"]["of_decisions"] == 345 + 204
    db.conn.close()


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("board", ["litxbench", "ideation"])
def test_every_family_shows_each_systems_own_audited_values(bdb, board, seed):
    """Random reviews (questions both runs ask first, so reviews are shared) on a LitXBench board of two runs and
    an ideation board of one run's systems: each value is the run's own audited metric, read afresh."""
    rng = random.Random(seed)
    runs = list(LITX_RUNS) if board == "litxbench" else ["ideas"]
    create_board(bdb, "t", runs)
    task = TASKS[board]
    pool = [(r, d) for r in runs for d in decisions(bdb, r)]
    qkey = dict(bdb.execute("SELECT id, qkey FROM decisions").fetchall())
    asked = Counter(qkey.values())
    shared = [(r, d) for r, d in pool if asked[qkey[d["id"]]] > 1]
    for r, d in rng.sample(shared, min(15, len(shared))) + rng.sample(pool, 25):
        labels = task.label_schemes[d["kind"]].labels
        add_review(bdb, r, d["id"], rng.choice(labels), rng.choice(["ana", "bo"]))
    table = board_table(bdb, "t")
    for s in table["systems"]:
        own = audit_run(bdb, s["run"], rebuild=True).metrics
        judge = run_row(bdb, s["run"])["original_metrics"]
        if board == "ideation":
            own, judge = task.system_metrics(own, s["system"]), task.system_metrics(judge, s["system"])
        for c in task.board_cells(run_row(bdb, runs[0])["original_metrics"]):
            assert s["audited"]["/".join(c.path)] == c.value(own), (s["system"], c.path)
            assert s["judge_only"]["/".join(c.path)] == c.value(judge), (s["system"], c.path)
    assert table["reviewed"]["decisions"] > 0


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("policy", ["unanimous", "majority"])
def test_reviewed_counts_split_reviewed_questions_into_settled_and_conflicted(bdb, seed, policy):
    """For random reviews by one to three reviewers in random runs: a question is settled when humans decide it in
    some run of the board, conflicted when reviewed somewhere and settled nowhere; every reviewed question is one
    of the two (the coverage line said "0 of 627 reviewed" when every review conflicted)."""
    from audit.board.table import reviewed_counts
    from audit.views import load_view

    rng = random.Random(seed)
    pool = [(r, d) for r in RUNS for d in decisions(bdb, r)]
    for r, d in rng.sample(pool, 40):
        labels = TASKS["chimera"].label_schemes[d["kind"]].labels
        for who in rng.sample(["ana", "bo", "cy"], rng.randint(1, 3)):
            add_review(bdb, r, d["id"], rng.choice(labels), who)
    views = [load_view(bdb, r, policy) for r in RUNS]
    question = {i: (q if q is not None else ("id", i)) for i, q in bdb.execute("SELECT id, qkey FROM decisions")}
    settled = {question[i] for v in views for i, e in v.effective.items() if e.settled_by_humans}
    reviewed = {question[i] for v in views for i, e in v.effective.items() if e.reviewed}
    counts = reviewed_counts(bdb, views)
    assert counts["decisions"] == len(settled) and counts["conflicted"] == len(reviewed - settled)
    assert counts["decisions"] + counts["conflicted"] == len(reviewed)
    if policy == "unanimous":
        assert counts["conflicted"]  # 40 questions, most with two or three reviewers: some disagree


def test_a_board_whose_reviews_all_conflict_says_so_on_every_surface(bdb):
    from audit.board.export import caption_parts
    from ui.leaderboard import coverage_text

    create_board(bdb, "t", RUNS)
    d = decisions(bdb, "a")[0]
    labels = TASKS["chimera"].label_schemes[d["kind"]].labels
    add_review(bdb, "a", d["id"], labels[0], "ana")
    add_review(bdb, "a", d["id"], labels[1], "bo")
    table = board_table(bdb, "t", policy="unanimous")
    assert table["reviewed"]["decisions"] == 0 and table["reviewed"]["conflicted"] == 1
    said = "1 more reviewed but conflicted: the judge's label stands until adjudicated"
    assert coverage_text(table).startswith(f"0 of {table['reviewed']['of_decisions']:,} distinct questions reviewed "
                                           f"({said})")
    assert said in caption_parts(table)["reviewed"]
    add_review(bdb, "a", d["id"], labels[0], "cy", role="adjudicator")
    settled = board_table(bdb, "t", policy="unanimous")
    assert settled["reviewed"]["decisions"] == 1 and settled["reviewed"]["conflicted"] == 0
    assert "conflicted" not in coverage_text(settled) and "conflicted" not in caption_parts(settled)["reviewed"]
