"""The SQLite store: schema, WAL, atomic runs, judge cache, concurrent reviewers."""

import subprocess
import sys
import textwrap

import pytest

from audit.errors import RunExists
from audit.runs import score_run
from audit.store.database import open_db
from audit.store.migrations import SCHEMA_VERSION
from scoring.errors import InputError
from scoring.judges.local import ExactJudge
from scoring.judges.registry import JudgeKind, register_judge
from tests.conftest import GOLD, JUDGE_LOG, PRED_MIXED, ROOT, write_jsonl


def test_schema_version_and_wal(fresh_db):
    assert fresh_db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert fresh_db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert {"runs", "documents", "decisions", "reviews", "judge_cache"} <= set(fresh_db.table_names())


def test_failed_load_stores_nothing(fresh_db, tmp_path):
    score_run(fresh_db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, "exact", run="ok")
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"paper_id": "2103.0771", "relations": {}}, "{broken"])
    with pytest.raises(InputError, match="bad.jsonl:2"):
        score_run(fresh_db, "chimera", {"gold": str(GOLD), "pred": str(bad)}, "exact", run="bad")
    assert [r["name"] for r in fresh_db.query("SELECT name FROM runs")] == ["ok"]
    n = fresh_db.execute("SELECT COUNT(*) FROM decisions").fetchone()[0]
    assert n == fresh_db.execute("SELECT n_decisions FROM runs WHERE name='ok'").fetchone()[0]
    with pytest.raises(RunExists):
        score_run(fresh_db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, "exact", run="ok")


def test_missing_predictions_are_reported(fresh_db, tmp_path):
    one = write_jsonl(tmp_path / "one.jsonl", [{"paper_id": "2105.13065", "relations": {}}])
    row = score_run(fresh_db, "chimera", {"gold": str(GOLD), "pred": str(one)}, "exact", run="one")
    assert len(row["summary"]["missing_predictions"]) == 215
    assert "215 gold papers have no prediction" in row["summary"]["warnings"][0]


class ExpensiveExact(ExactJudge):
    cacheable = True
    spec = "expensive"
    asked = 0

    def ask_many(self, queries, progress=None):
        ExpensiveExact.asked += len(queries)
        return super().ask_many(queries, progress)


def expensive_from_spec(*_args: object) -> ExpensiveExact:
    return ExpensiveExact()


def test_rescoring_same_inputs_asks_nothing_new(fresh_db):
    register_judge(JudgeKind("expensive", "expensive", "an exact judge that counts what it is asked", __name__,
                             "expensive_from_spec"))
    r1 = score_run(fresh_db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, "expensive", run="a")
    first = ExpensiveExact.asked
    r2 = score_run(fresh_db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, "expensive", run="b")
    assert first == r1["summary"]["judge"]["distinct_queries"] > 0
    assert ExpensiveExact.asked == first  # nothing asked the second time
    assert r2["summary"]["judge"]["cached"] == first and r2["summary"]["judge"]["requests"] == 0
    assert r1["original_metrics"] == r2["original_metrics"]


WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    from audit.store.database import open_db
    from audit.review.reviews import add_review
    db = open_db(sys.argv[1])
    for i in range(int(sys.argv[3])):
        add_review(db, "mixed", 1 + i % 20, "match" if i % 2 else "no-match", sys.argv[2], note=str(i))
""")


def test_two_processes_reviewing_at_once_lose_nothing(db_with_run, db_path, tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(WRITER.format(root=str(ROOT)))
    n = 300
    procs = [subprocess.Popen([sys.executable, str(script), str(db_path), who, str(n)]) for who in ("ana", "bo")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    db = open_db(db_path)
    counts = dict(db.execute("SELECT reviewer, COUNT(*) FROM reviews GROUP BY reviewer").fetchall())
    assert counts == {"ana": n, "bo": n}
    assert db.execute("SELECT COUNT(DISTINCT uid) FROM reviews").fetchone()[0] == 2 * n


def test_replay_log_missing_pairs_are_reported_not_invented(fresh_db, tmp_path):
    lines = JUDGE_LOG.read_text().splitlines()
    short = tmp_path / "short.jsonl"
    short.write_text("\n".join(lines[: len(lines) // 2]) + "\n")
    row = score_run(fresh_db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, f"replay:{short}", run="short")
    judge = row["summary"]["judge"]
    assert judge["missing"] > 0 and judge["missing_examples"]
    assert any("not available" in w for w in row["summary"]["warnings"])
    labels = [r[0] for r in fresh_db.execute("SELECT judge_label FROM decisions")]
    assert "invalid" in labels
    ex = judge["missing_examples"][0]
    assert {"paper_id", "entity_type", "span1", "span2"} <= set(ex)


def test_one_missing_judge_answer_is_said_in_the_singular(fresh_db, tmp_path):
    """Issue #40 point 9: "1 judge answer(s) were not available" reads as a template; one is one answer."""
    lines = JUDGE_LOG.read_text().splitlines()
    short = tmp_path / "one-short.jsonl"
    short.write_text("\n".join(lines[:-1]) + "\n")
    row = score_run(fresh_db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, f"replay:{short}", run="one")
    assert row["summary"]["judge"]["missing"] == 1
    (warning,) = [w for w in row["summary"]["warnings"] if "not available" in w]
    assert warning.startswith("1 judge answer was not available") and "(s)" not in warning


def test_no_sqlite_utils_plugin_runs_on_the_stores_connections(tmp_path):
    """A sqlite-utils plugin's `prepare_connection` ran on every connection the store opened, after a scan of the
    installed packages for plugins (#38: part of every command's start-up); the store opens its own."""
    from sqlite_utils import hookimpl
    from sqlite_utils.plugins import pm

    from audit.store.database import open_db

    seen = []

    class Plugin:
        @hookimpl
        def prepare_connection(self, conn):
            seen.append(conn)

    plugin = Plugin()
    pm.register(plugin)
    try:
        for _ in range(2):  # a new database, then the existing file opened with every check
            open_db(tmp_path / "p.db").conn.close()
    finally:
        pm.unregister(plugin)
    assert seen == []


@pytest.mark.parametrize(("family", "counts_as"), [
    ("chimera", "not matched"), ("retrieval", "not acceptable"), ("verdicts", "0 (not passed)"),
    ("ideation", "invalid: a rating left out of the mean, a call 0 under the fixed normalisation")])
def test_a_run_short_of_answers_says_what_each_missing_answer_counts_as_in_its_family(family, counts_as):
    # "they count as not matched" was CHIMERA's wording, printed for an ideation rating or comparison too
    from types import SimpleNamespace

    from audit.runs import check_answers
    from scoring.errors import JudgeFailed
    from scoring.families import get_task
    from scoring.judges.answer import JudgeStats

    task = get_task(family)
    judge = SimpleNamespace(spec="replay:x.jsonl", cacheable=False)
    with pytest.raises(JudgeFailed) as failed:
        check_answers(JudgeStats(distinct_queries=10, missing=6), judge, task)
    assert str(failed.value).endswith(f"(each counts as {counts_as})")
    assert task.unanswered_counts_as == counts_as
