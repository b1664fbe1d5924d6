"""Boards in the store (issue 36 §2): migration m015 keeps everything, creating refuses with one line naming the
run that differs, a deleted run takes its boards with it."""

from __future__ import annotations

import json

import pytest

from audit.board.store import boards_of_run, create_board, delete_board, get_board, list_boards
from audit.board.table import board_table
from audit.demo import DATA
from audit.errors import AuditError
from audit.rescoring import audit_run
from audit.review.reviews import add_review
from audit.runs import delete_run, score_run
from audit.store.database import db_file, open_db
from audit.store.migrations import SCHEMA_VERSION
from audit.views import decisions
from scoring.families import TASKS


def test_a_database_from_before_boards_migrates_with_nothing_lost(bdb, tmp_path):
    d = next(x for x in decisions(bdb, "a") if x["left"] != x["right"])
    add_review(bdb, "a", d["id"], "no-match" if d["judge"] == "match" else "match", "ana")
    before = {r: audit_run(bdb, r).metrics for r in ("a", "b", "c", "ideas")}
    tables = ("runs", "documents", "decisions", "reviews", "effective", "doc_audit", "audit_state")
    rows = {t: bdb.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in tables}
    # back to schema 14: no boards table, m015 not applied
    bdb.execute("DROP TABLE boards")
    bdb.execute("DELETE FROM _sqlite_migrations WHERE name = 'm015_boards'")
    bdb.execute("PRAGMA user_version = 14")
    path = db_file(bdb)
    bdb.conn.close()
    db = open_db(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION  # every migration, boards (m015) included
    assert list_boards(db) == []
    assert {t: db.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in tables} == rows
    assert {r: audit_run(db, r).metrics for r in before} == before
    assert create_board(db, "t", ["a", "b"])["runs"] == ["a", "b"]
    db.conn.close()


def test_create_get_list_delete(bdb):
    made = create_board(bdb, "paper table", ["c", "a", "b"])
    assert made["family"] == "chimera" and made["runs"] == ["c", "a", "b"] and made["systems"] is None
    assert get_board(bdb, "paper table") == made
    assert [b["name"] for b in list_boards(bdb)] == ["paper table"]
    assert boards_of_run(bdb, "a") == ["paper table"] and boards_of_run(bdb, "ideas") == []
    delete_board(bdb, "paper table")
    assert list_boards(bdb) == []
    with pytest.raises(AuditError, match="unknown board 'paper table'; this database has no boards"):
        get_board(bdb, "paper table")
    with pytest.raises(AuditError, match="unknown board"):
        delete_board(bdb, "paper table")


def test_an_ideation_board_holds_the_systems_of_its_one_run(bdb):
    made = create_board(bdb, "ideas", ["ideas"])
    assert made["systems"] == ["Human", "AI", "AI_Rerank"]


@pytest.mark.parametrize(("runs", "message"), [
    (["a", "other-gold"], "run 'other-gold' is not on the gold of run 'a': 216 of its documents are missing and 6 "
                          "are extra"),
    (["a", "ideas"], "run 'ideas' is of family ideation, run 'a' of chimera: a board compares runs of one family"),
    (["ideas", "a"], "run 'a' is of family chimera, run 'ideas' of ideation"),
    (["a", "nope"], "unknown run 'nope'"),
    (["a", "b", "a"], "run 'a' is given twice"),
    (["a"], "a run of family chimera is one system; give two or more runs"),
    ([], "give its runs"),
])
def test_create_refuses_in_one_line_naming_the_run(bdb, runs, message):
    with pytest.raises(AuditError) as e:
        create_board(bdb, "t", runs)
    assert message in str(e.value) and "\n" not in str(e.value)
    assert list_boards(bdb) == []


def test_create_refuses_a_document_whose_gold_differs(bdb):
    """Same documents, one gold changed: the run is named with the document (an evasion of a doc-id-only check)."""
    rid, doc, payload = bdb.execute("SELECT d.run_id, d.doc_id, d.payload FROM documents d JOIN runs r ON "
                                    "r.id = d.run_id WHERE r.name = 'b' ORDER BY d.idx LIMIT 1").fetchone()
    p = json.loads(payload)
    p["gold"] = {"changed": True, **(p.get("gold") or {})} if isinstance(p.get("gold"), dict) else [p.get("gold"), 1]
    bdb.execute("UPDATE documents SET payload = ? WHERE run_id = ? AND doc_id = ?", [json.dumps(p), rid, doc])
    with pytest.raises(AuditError, match=f"run 'b' is not on the gold of run 'a': the gold of 1 document "
                                         f"differs \\(e.g. '{doc}'\\)"):
        create_board(bdb, "t", ["a", "b"])


def test_create_refuses_a_taken_name_and_an_ideation_board_of_two_runs(bdb):
    create_board(bdb, "t", ["a", "b"])
    with pytest.raises(AuditError, match="board 't' already exists"):
        create_board(bdb, "t", ["a", "c"])
    demo = TASKS["ideation"].demo_runs(DATA)[0]
    score_run(bdb, "ideation", demo.inputs, demo.judge, run="ideas2")
    with pytest.raises(AuditError, match="run 'ideas2': a board of family ideation holds one run"):
        create_board(bdb, "u", ["ideas", "ideas2"])


def test_deleting_a_run_takes_it_off_its_boards_and_deletes_those_left_with_one_system(bdb):
    create_board(bdb, "ab", ["a", "b"])
    create_board(bdb, "bc", ["b", "c"])
    create_board(bdb, "abc", ["a", "b", "c"])
    create_board(bdb, "cba", ["c", "b", "a"])
    out = delete_run(bdb, "a")
    assert out["boards_deleted"] == ["ab"]
    assert out["boards_without_it"] == {"abc": ["b", "c"], "cba": ["c", "b"]}
    assert {b["name"]: b["runs"] for b in list_boards(bdb)} == {"bc": ["b", "c"], "abc": ["b", "c"],
                                                                "cba": ["c", "b"]}
    assert board_table(bdb, "abc")["runs"] == ["b", "c"]  # the board still reads, over the runs it kept


def test_a_generated_system_on_existing_gold_boards_with_the_first(bdb, tmp_path):
    """bench/generate.py's `generate_system`: another prediction set and judge log on the same gold, so the bench's
    five systems make one board."""
    from devtools.generate import generate, generate_system

    generate(8, tmp_path / "one", seed=5)
    generate_system(tmp_path / "one" / "gold.csv", tmp_path / "two", seed=9)
    gold = str(tmp_path / "one" / "gold.csv")
    for name, folder in (("g1", "one"), ("g2", "two")):
        score_run(bdb, "chimera", {"gold": gold, "pred": str(tmp_path / folder / "pred.jsonl")},
                  f"replay:{tmp_path / folder / 'judge.jsonl'}", run=name)
    assert create_board(bdb, "gen", ["g1", "g2"])["runs"] == ["g1", "g2"]
    assert (tmp_path / "one" / "pred.jsonl").read_text() != (tmp_path / "two" / "pred.jsonl").read_text()


def test_a_board_of_runs_scored_by_different_judges_says_so_everywhere(bdb):
    """A board compares systems under one judge: runs scored by two known judges are accepted with a warning that
    `board create` and the table (page, report) carry; one judge, or a replayed log that names no judge, none."""
    from audit.board.table import board_table
    from audit.runs import score_run
    from tests.conftest import GOLD, PRED_MIXED, PRED_PERFECT

    for pred, judge, name in ((PRED_MIXED, "fuzzy:85", "f-mixed"), (PRED_PERFECT, "fuzzy:85", "f-perfect"),
                              (PRED_PERFECT, "exact", "x-perfect")):
        score_run(bdb, "chimera", {"gold": str(GOLD), "pred": str(pred)}, judge, run=name)
    assert "warning" not in create_board(bdb, "one-judge", ["f-mixed", "f-perfect"])
    assert board_table(bdb, "one-judge")["judges_differ"] is None
    replayed = bdb.execute("SELECT name FROM runs WHERE task = 'chimera' AND judge_spec LIKE 'replay:%' AND "
                           "judge_identity NOT LIKE '%\"source\"%' ORDER BY id").fetchone()[0]
    assert "warning" not in create_board(bdb, "log-unnamed", [replayed, "f-perfect"])
    made = create_board(bdb, "two-judges", ["f-mixed", "x-perfect"])
    assert made["warning"] == ("the runs were scored by different judges (f-mixed: fuzzy:85; x-perfect: exact): the "
                               "judge-only values compare the judges as well as the systems, and so do the audited "
                               "ones until every decision is reviewed")
    assert board_table(bdb, "two-judges")["judges_differ"] == made["warning"]
    # a run whose judge is not recorded, beside two that differ, is named, so the list does not read as the board
    three = create_board(bdb, "three", ["f-mixed", "x-perfect", replayed])
    assert f"(f-mixed: fuzzy:85; x-perfect: exact; not recorded: {replayed})" in three["warning"]
