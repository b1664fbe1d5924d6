"""Retrieval on a board's plan: one block per query (the family's gold key), and the median rank estimated by the
single-run rule on each ranker's documents with the board's sample (`audit.board.median`)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from audit.board.joint import board_estimates, create_board_plan, load_board_plan, next_board_document
from audit.board.store import create_board
from audit.board.table import board_table
from audit.rescoring import audit_run
from audit.review.reviews import add_review
from audit.review.reviews_io import import_reviews
from audit.runs import score_run
from audit.store.database import open_db
from audit.views import load_view

ROOT = Path(__file__).resolve().parents[2]
FILES = {"wl": ROOT / "data" / "retrieval" / "demo_rankings.jsonl",
         "bm25": ROOT / "data" / "retrieval" / "demo_rankings_bm25.jsonl"}
MEDIAN = "all/median_rank"


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """Two rankers of the same 30 demo queries (those whose gold both rank in their top 15: few decisions)."""
    d = tmp_path_factory.mktemp("retrieval-board")
    rows = {k: {r["id"]: r for r in map(json.loads, p.read_text().splitlines()) if r} for k, p in FILES.items()}
    ids = [i for i in rows["wl"] if rows["wl"][i]["positive_index"] < 15 and rows["bm25"][i]["positive_index"] < 15]
    ids = ids[:30]
    db = open_db(d / "r.db")
    for k in FILES:
        path = d / f"{k}.jsonl"
        path.write_text("".join(json.dumps(rows[k][i]) + "\n" for i in ids))
        score_run(db, "retrieval", {"pred": str(path)}, "gold-only", run=k)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    return d / "r.db"


@pytest.fixture
def rdb(template, tmp_path):
    path = tmp_path / "r.db"
    shutil.copyfile(template, path)
    db = open_db(path)
    create_board(db, "r", ["wl", "bm25"])
    create_board_plan(db, "r", ["wl", "bm25"], seed=2)
    yield db
    db.conn.close()


def _review_served(db, n: int, seed: int = 0) -> int:
    rng = random.Random(seed)
    done = 0
    while done < n and (pick := next_board_document(db, "r", ["wl", "bm25"])) is not None:
        for part in pick["review_in"]:
            view = load_view(db, part["run"])
            for dec in part["decisions"]:
                d = view.decision(dec)
                add_review(db, part["run"], dec, rng.choice(view.task.label_schemes[d["kind"]].labels), "ana")
        done += 1
    return done


def test_a_block_is_one_query(rdb):
    """Every query its own block (before, the family had no gold key: all queries made one block)."""
    stored = load_board_plan(rdb, "r")
    assert len(stored.documents) == 30 and 0 < len(stored.plan.blocks) <= 30
    assert all(len(per["wl"]) == len(per["bm25"]) == 1 for per in stored.documents.values())


@pytest.fixture(scope="module")
def deep_template(tmp_path_factory) -> Path:
    """Both rankers on the first 110 demo queries: enough in the sampled (20+ above) strata for a median."""
    d = tmp_path_factory.mktemp("retrieval-deep")
    db = open_db(d / "r.db")
    for k, src in FILES.items():
        path = d / f"{k}.jsonl"
        path.write_text("".join(src.read_text().splitlines(keepends=True)[:110]))
        score_run(db, "retrieval", {"pred": str(path)}, "gold-only", run=k)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    return d / "r.db"


def _label_blocks(db, blocks, tmp_path, seed: int) -> None:
    """Every decision of both runs in `blocks` labelled at random (one import per run)."""
    rng = random.Random(seed)
    stored = load_board_plan(db, "r")
    for run in ("wl", "bm25"):
        view = load_view(db, run)
        docs = {d for b in blocks for d in stored.documents[b][run]}
        lines = [json.dumps({"uid": f"{run}-{seed}-{d['id']}", "doc": d["doc"], "kind": d["kind"], "type": d["type"],
                             "left": d["left"], "right": d["right"], "reviewer": "ana",
                             "label": rng.choice(view.task.label_schemes[d["kind"]].labels), "role": "reviewer",
                             "note": None, "blind": False, "created": "2026-01-01T00:00:00+00:00"})
                 for d in view.decisions() if d["doc"] in docs]
        if lines:
            path = tmp_path / f"{run}-{seed}.jsonl"
            path.write_text("\n".join(lines) + "\n")
            import_reviews(db, run, path)


def test_the_median_rank_is_estimated_on_the_boards_sample(deep_template, tmp_path):
    """The take-all strata reviewed whole, then the first 32 documents of each sampled stratum in the plan's random
    order drawn (as the queue draws inside a stratum) and reviewed: each ranker's median has an estimate, a
    bootstrap interval inside its anytime one, and the judge's bias."""
    path = tmp_path / "r.db"
    shutil.copyfile(deep_template, path)
    rdb = open_db(path)
    create_board(rdb, "r", ["wl", "bm25"])
    create_board_plan(rdb, "r", ["wl", "bm25"], seed=2)
    plan = load_board_plan(rdb, "r").plan
    take_all = [b.id for b in plan.blocks if b.stratum in plan.take_all]
    drawn = []
    for stratum in {b.stratum for b in plan.blocks} - set(plan.take_all):
        drawn += [b.id for b in sorted((b for b in plan.blocks if b.stratum == stratum), key=lambda b: b.rank)][:32]
    rdb.conn.executemany("INSERT INTO board_draws (board, block, served) VALUES ('r', ?, '2026-01-01')",
                         [(b,) for b in drawn])
    _label_blocks(rdb, take_all + drawn, tmp_path, 0)
    est = board_estimates(rdb, "r")
    for run in ("wl", "bm25"):
        m = est["systems"][run][MEDIAN]
        assert m["value"] is not None and m["ci"] is not None, m["note"]
        assert m["ci"][0] <= m["value"] <= m["ci"][1]
        assert m["anytime"]["ci"][0] <= m["ci"][0] and m["ci"][1] <= m["anytime"]["ci"][1]
        assert m["judge_only"] == load_view(rdb, run).original_metrics["all"]["median_rank"]
        assert m["interval"] == "fixed-n (bootstrap)" and "median of the difference-estimated" in m["how"]
        bias = est["systems"][run]["bias"][MEDIAN]
        assert bias["value"] == pytest.approx(m["judge_only"] - m["value"])
    table = board_table(rdb, "r")
    for s in table["systems"]:  # `board show` carries it
        assert s["estimate"][MEDIAN]["value"] == est["systems"][s["run"]][MEDIAN]["value"]


def test_a_full_review_makes_the_median_exact(rdb):
    _review_served(rdb, 10_000)
    est = board_estimates(rdb, "r")
    for run in ("wl", "bm25"):
        m = est["systems"][run][MEDIAN]
        audited = audit_run(rdb, run).metrics["all"]["median_rank"]
        assert m["value"] == pytest.approx(audited) and m["ci"] == [m["value"], m["value"]]
