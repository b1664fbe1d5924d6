"""`openai:MODEL` runs end to end: `audit.runs.score_run` on the bundled CHIMERA data against a scripted local
OpenAI-compatible server (devtools/judge_server.py), into a fresh SQLite file per test."""

from __future__ import annotations

import csv
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from audit.outputs.export import export_run
from audit.runs import score_run
from audit.runs import write_judge_log as _write_log
from audit.store.database import open_db
from audit.views import decisions
from devtools.judge_server import TRUNCATED_TEXT, JudgeServer, equal_spans_script, spans_of
from scoring.errors import JudgeFailed
from scoring.families import get_task
from scoring.families.chimera.prompts import CHIMERA_SPAN_JSON_PROMPT_HASH
from scoring.judges.registry import JudgeOptions

ROOT = Path(__file__).resolve().parents[2]
GOLD = str(ROOT / "data/chimera/eval.csv")
PERFECT = str(ROOT / "data/chimera/pred_perfect.jsonl")
MIXED = str(ROOT / "data/chimera/pred_mixed.jsonl")
KEY = "sk-rejudge-test-SECRET-5b1f0c9e"
SPEC = "openai:test-model"
ALIASES = {"analogy": "inspiration", "analogy-src": "inspiration-src", "analogy-target": "inspiration-target"}


# ---------------------------------------------------------------- independent counts from the raw files


def _entities(relations: dict) -> list[tuple[str, list[tuple[str, str]]]]:
    """[(relation type, [(entity type, span), ...]), ...] with the old names renamed."""
    out = []
    for rtype, rels in relations.items():
        for rel in rels if isinstance(rels, list) else [rels]:
            out.append((ALIASES.get(rtype, rtype), [(ALIASES.get(t, t), s) for t, spans in rel.items() for s in spans]))
    return out


def expected_counts(pred_path: str) -> tuple[int, int]:
    """(distinct ordered same-type span pairs, calls the paper's scorer makes), straight from the files."""
    with open(GOLD, newline="", encoding="utf-8") as f:
        gold = {r["paper_id"]: _entities(json.loads(r["readable_relations"] or "{}")) for r in csv.DictReader(f)}
    preds = {}
    for line in Path(pred_path).read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        preds[rec["paper_id"]] = _entities(rec["relations"])
    pairs: set[tuple[str, str, str, str]] = set()
    paper = 0
    for pid, g_rels in gold.items():
        p_rels = preds.get(pid, [])
        g_flat = [e for _, ents in g_rels for e in ents]
        p_flat = [e for _, ents in p_rels for e in ents]
        same = sum(1 for tp, _ in p_flat for tg, _ in g_flat if tp == tg)
        paper += 4 * same  # entity score: pred->gold and gold->pred passes, both span orders each
        for pt, pe in p_rels:
            for gt, ge in g_rels:
                if pt == gt:
                    paper += 4 * sum(1 for tp, _ in pe for tg, _ in ge if tp == tg)  # relation score, same
        for tp, sp in p_flat:
            for tg, sg in g_flat:
                if tp == tg:
                    pairs.update({(pid, tp, sp, sg), (pid, tp, sg, sp)})
    return len(pairs), paper


# ---------------------------------------------------------------- fixtures


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgeServer]:
    with JudgeServer() as srv:
        point_at(monkeypatch, srv)
        yield srv


def point_at(monkeypatch: pytest.MonkeyPatch, srv: JudgeServer, key: str = KEY) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("REJUDGE_JUDGE_BACKOFF", "0.001")
    monkeypatch.delenv("REJUDGE_JUDGE_CONCURRENCY", raising=False)
    monkeypatch.delenv("REJUDGE_PRICES", raising=False)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "x.db"


def judge_stats(row: dict) -> dict:
    return row["summary"]["judge"]


def labels(db: object, run: str) -> dict[tuple[str, str, str, str], str]:
    return {(d["doc"], d["type"], d["left"], d["right"]): d["judge"] for d in decisions(db, run)}  # type: ignore[arg-type]


# ---------------------------------------------------------------- tests


@pytest.mark.parametrize(("pred", "distinct", "paper"), [(PERFECT, 444, 3552), (MIXED, None, None)])
def test_requests_sent_are_the_distinct_ordered_pairs(server: JudgeServer, db_path: Path, pred: str,
                                                      distinct: int | None, paper: int | None) -> None:
    want_distinct, want_paper = expected_counts(pred)
    if distinct is not None:  # chimera.md 3.4: a perfect prediction has P = 444, the paper makes 8P calls
        assert (want_distinct, want_paper) == (distinct, paper)
    seen: list[tuple[int, int]] = []
    row = score_run(open_db(db_path), "chimera", {"gold": GOLD, "pred": pred}, SPEC, run="r",
                    progress=lambda d, t: seen.append((d, t)))
    stats = judge_stats(row)
    assert server.requests == want_distinct == stats["requests"] == stats["distinct_queries"]
    assert max(server.prompts_received.values()) == 1  # no prompt sent twice
    assert stats["paper_calls"] == want_paper > 3 * want_distinct
    assert stats["cached"] == 0 and stats["invalid"] == stats["missing"] == stats["retries"] == 0
    assert stats["prompt_tokens"] > 0 and stats["completion_tokens"] > 0
    assert stats["cost_usd"] is None  # test-model has no price
    assert seen[-1] == (want_distinct, want_distinct)
    assert row["judge_identity"]["prompt_hash"] == "6e5b6cc66c82"  # the prompt of the questions asked
    calls = list(open_db(db_path).query("SELECT params, prompt_tokens FROM judge_cache"))
    assert len(calls) == want_distinct
    assert json.loads(calls[0]["params"]) == {"temperature": 0.0, "max_tokens": 400}
    assert sum(c["prompt_tokens"] for c in calls) == stats["prompt_tokens"]
    if pred == PERFECT:
        for section in ("entities", "relations", "classification"):
            assert row["original_metrics"][section]["avg"]["f1"] == 1.0


@pytest.mark.parametrize(("spec", "prompt_hash"), [(SPEC, "6e5b6cc66c82"),
                                                   ("openai-json:test-model", CHIMERA_SPAN_JSON_PROMPT_HASH)])
def test_a_judge_built_by_its_family_names_its_prompt_on_every_cached_call(server: JudgeServer, db_path: Path,
                                                                           spec: str, prompt_hash: str) -> None:
    # The store reads the prompt hash from the judge identity before asking: the family's make_judge binds the
    # judge to its question, so the identity names the prompt up front.
    assert get_task("chimera").make_judge(spec).identity()["prompt_hash"] == prompt_hash
    row = score_run(open_db(db_path), "chimera", {"gold": GOLD, "pred": MIXED}, spec, run="r")
    calls = list(open_db(db_path).query("SELECT prompt_hash FROM judge_cache"))
    assert len(calls) == judge_stats(row)["requests"] > 0
    assert {c["prompt_hash"] for c in calls} == {prompt_hash}  # every call carries its prompt version
    assert row["judge_identity"]["prompt_hash"] == prompt_hash and row["judge_spec"] == spec


def cache_rows(path: Path) -> dict[str, str | None]:
    return {r["key"]: r["prompt_hash"] for r in open_db(path).query("SELECT key, prompt_hash FROM judge_cache")}


@pytest.mark.parametrize("spec", [SPEC, "openai-json:test-model"])
def test_the_new_run_form_stores_the_same_prompt_hash_as_the_cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                 spec: str) -> None:
    """The form's code path (ui/newrun.py `score_from_form`, with the endpoint and key typed into the form, not in
    the environment) builds its judge through the family as `score` does: same cache keys, same non-NULL
    prompt hash on every row (the form once built its own judge and stored NULL)."""
    from audit.cli import main
    from ui.newrun import score_from_form

    with JudgeServer() as srv:
        point_at(monkeypatch, srv)
        assert main(["--db", str(tmp_path / "cli.db"), "score", "chimera", "--gold", GOLD, "--pred", MIXED,
                     "--judge", spec, "--run", "cli"]) == 0
        monkeypatch.delenv("OPENAI_BASE_URL")
        monkeypatch.delenv("OPENAI_API_KEY")
        options = JudgeOptions(base_url=srv.base_url, api_key=KEY, concurrency=2)
        row = score_from_form(open_db(tmp_path / "form.db"), get_task("chimera"), {"gold": GOLD, "pred": MIXED},
                              spec, run="form", judge_options=options, input_names={}, options={})
        assert srv.auth_headers and set(srv.auth_headers) == {f"Bearer {KEY}"}
    cli, form = cache_rows(tmp_path / "cli.db"), cache_rows(tmp_path / "form.db")
    assert cli and form == cli  # the same requests, keyed alike, each row with the prompt hash
    assert None not in set(form.values()) and set(form.values()) == {row["judge_identity"]["prompt_hash"]}
    assert KEY not in json.dumps(row["judge_identity"])  # the key typed into the form is kept nowhere


def test_the_default_script_agrees_with_the_exact_judge(server: JudgeServer, db_path: Path) -> None:
    db = open_db(db_path)
    llm = score_run(db, "chimera", {"gold": GOLD, "pred": MIXED}, SPEC, run="llm")
    exact = score_run(db, "chimera", {"gold": GOLD, "pred": MIXED}, "exact", run="exact")
    assert labels(db, "llm") == labels(db, "exact")
    assert llm["original_metrics"] == exact["original_metrics"]
    assert server.requests > 0


def test_a_second_run_into_the_same_db_sends_no_requests(server: JudgeServer, db_path: Path) -> None:
    db = open_db(db_path)
    first = score_run(db, "chimera", {"gold": GOLD, "pred": PERFECT}, SPEC, run="one")
    sent = server.requests
    second = score_run(open_db(db_path), "chimera", {"gold": GOLD, "pred": PERFECT}, SPEC, run="two")
    assert server.requests == sent
    assert judge_stats(second)["requests"] == 0 and judge_stats(second)["cached"] == sent
    assert second["original_metrics"] == first["original_metrics"]
    assert labels(db, "one") == labels(db, "two")
    # another prediction file reuses the pairs it shares and asks only the new ones
    third = score_run(db, "chimera", {"gold": GOLD, "pred": MIXED}, SPEC, run="three")
    mixed_distinct, _ = expected_counts(MIXED)
    assert judge_stats(third)["cached"] + judge_stats(third)["requests"] == mixed_distinct
    assert server.requests == sent + judge_stats(third)["requests"] and judge_stats(third)["cached"] > 0


RUN_IN_CHILD = """
import sys
from audit.runs import score_run
from audit.store.database import open_db
score_run(open_db(sys.argv[1]), "chimera", {"gold": sys.argv[2], "pred": sys.argv[3]}, "openai:test-model",
          run="resumed")
"""


def _cached_rows(path: Path) -> int:
    if not path.exists():
        return 0
    try:  # read-only: never create the file the child is about to open (an empty file is not a database)
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        try:
            return conn.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:  # not created yet, or busy
        return 0


def test_a_killed_run_resumes_without_asking_anything_twice(monkeypatch: pytest.MonkeyPatch, db_path: Path) -> None:
    hold = 60
    distinct, _ = expected_counts(MIXED)
    with JudgeServer(hold_after=hold) as srv:
        point_at(monkeypatch, srv)
        env = dict(os.environ, PYTHONPATH=str(ROOT), REJUDGE_JUDGE_CONCURRENCY="4")
        child = subprocess.Popen([sys.executable, "-c", RUN_IN_CHILD, str(db_path), GOLD, MIXED], cwd=ROOT, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 30
            while _cached_rows(db_path) < hold or srv.in_flight < 4:
                assert child.poll() is None, child.communicate()[1].decode()[-2000:]
                assert time.monotonic() < deadline, "the child did not get its first answers in 30 s"
                time.sleep(0.02)
        finally:
            child.kill()  # SIGKILL: no cleanup in the child
            child.wait()
        srv.drop_held()  # the 4 requests it was waiting on are never answered
        assert srv.answered == hold and _cached_rows(db_path) == hold
        db = open_db(db_path)
        assert not list(db.query("SELECT name FROM runs"))  # the killed run stored nothing but answers

        row = score_run(db, "chimera", {"gold": GOLD, "pred": MIXED}, SPEC, run="resumed")
    stats = judge_stats(row)
    assert stats["cached"] == hold and stats["requests"] == distinct - hold
    assert srv.answered == distinct == len(srv.prompts_answered)
    assert max(srv.prompts_answered.values()) == 1  # none asked (and answered) twice


def test_retries_on_429_and_500_are_counted(monkeypatch: pytest.MonkeyPatch, db_path: Path) -> None:
    with JudgeServer(rate_limit_first=4, server_error_on={10, 20}, malformed_on={30}) as srv:
        point_at(monkeypatch, srv)
        row = score_run(open_db(db_path), "chimera", {"gold": GOLD, "pred": PERFECT}, SPEC, run="r")
    stats = judge_stats(row)
    assert stats["retries"] == 7 and stats["requests"] == 444 and stats["failed"] == 0
    assert srv.requests == 444 + 7 and srv.status_counts[429] == 4 and srv.status_counts[500] == 2
    assert row["original_metrics"]["relations"]["avg"]["f1"] == 1.0


def test_concurrency_limit_is_respected_in_a_run(monkeypatch: pytest.MonkeyPatch, db_path: Path) -> None:
    with JudgeServer(delay=0.004) as srv:
        point_at(monkeypatch, srv)
        monkeypatch.setenv("REJUDGE_JUDGE_CONCURRENCY", "3")
        row = score_run(open_db(db_path), "chimera", {"gold": GOLD, "pred": MIXED}, SPEC, run="r")
    assert row["judge_identity"]["concurrency"] == 3
    assert 2 <= srv.max_in_flight <= 3


def test_invalid_answers_are_stored_with_raw_text_counted_and_flagged(monkeypatch: pytest.MonkeyPatch,
                                                                      db_path: Path) -> None:
    from scoring.families.chimera.scorer import load_gold

    docs = [d for d in load_gold(GOLD) if d.gold][:3]
    spans = [d.gold[0].entities[0][1] for d in docs]
    replies = {spans[0]: (TRUNCATED_TEXT, "length"), spans[1]: "<answer>Perhaps</answer>", spans[2]: ""}

    def script(prompt: str) -> str | tuple[str, str]:
        s1, s2 = spans_of(prompt) or ("", "")
        return replies[s1] if s1 == s2 and s1 in replies else equal_spans_script(prompt)

    with JudgeServer(script) as srv:
        point_at(monkeypatch, srv)
        db = open_db(db_path)
        row = score_run(db, "chimera", {"gold": GOLD, "pred": PERFECT}, SPEC, run="r")
        flagged = [d for d in decisions(db, "r") if d["left"] == d["right"] and d["left"] in replies]
        assert len(flagged) >= 3
        assert all(d["judge"] == "invalid" for d in flagged)
        assert [d for d in decisions(db, "r") if d["judge"] == "invalid"] == flagged
        for d in flagged:
            ans = d["detail"]["pred_gold"]
            want = replies[d["left"]]
            assert ans["value"] == "invalid" and ans.get("raw", "") == (want[0] if isinstance(want, tuple) else want)
            assert ans["rationale"].startswith("unparseable:")
        assert judge_stats(row)["invalid"] == len(flagged)
        # the paper-parity metric counts them as no match, so the perfect prediction loses recall
        assert row["original_metrics"]["entities"]["avg"]["recall"] < 1.0
        cached = {r["raw"]: r["value"] for r in db.query("SELECT raw, value FROM judge_cache WHERE value = 'invalid'")}
        assert cached == {TRUNCATED_TEXT: "invalid", "<answer>Perhaps</answer>": "invalid", "": "invalid"}
        # an invalid answer is what the judge said: cached, not asked again
        sent = srv.requests
        again = score_run(db, "chimera", {"gold": GOLD, "pred": PERFECT}, SPEC, run="again")
        assert srv.requests == sent and judge_stats(again)["invalid"] == len(flagged)


def test_the_api_key_is_in_no_stored_byte_nor_export(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    wrong_key = "sk-rejudge-WRONG-key-77aa31"
    db_path = tmp_path / "x.db"
    log = tmp_path / "judge.jsonl"
    with JudgeServer(api_key=KEY) as srv:
        point_at(monkeypatch, srv)
        db = open_db(db_path)
        ok = score_run(db, "chimera", {"gold": GOLD, "pred": MIXED}, SPEC, run="ok")
        cached_before = _cached_rows(db_path)
        # the key is not part of the cache key: only pairs MIXED lacks are sent, and refused with a 401 whose
        # message repeats the key it was given; 401 is fatal: the run stops, names the reason, stores nothing
        point_at(monkeypatch, srv, key=wrong_key)
        with pytest.raises(JudgeFailed, match="HTTP 401") as err:
            score_run(db, "chimera", {"gold": GOLD, "pred": PERFECT}, SPEC, run="bad")
    assert f"Bearer {KEY}" in srv.auth_headers and f"Bearer {wrong_key}" in srv.auth_headers
    assert judge_stats(ok)["failed"] == 0
    concurrency = ok["judge_identity"]["concurrency"]
    assert 1 <= srv.status_counts[401] <= concurrency  # stopped after the first refusals
    assert wrong_key not in str(err.value) and "nothing was stored" in str(err.value)
    assert [r["name"] for r in db.query("SELECT name FROM runs")] == ["ok"]
    assert _cached_rows(db_path) == cached_before  # the cached answers are kept, nothing new cached
    _write_log(get_task("chimera"), list(decisions(db, "ok")), log)
    texts = [export_run(db, "ok", fmt) for fmt in ("json", "csv", "latex")] + [str(err.value)]
    blobs = [p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("x.db")] + [log.read_bytes()]
    assert len(blobs) >= 2  # the database and its -wal at least
    for secret in (KEY, wrong_key, KEY[-12:], wrong_key[-12:]):
        assert all(secret.encode() not in b for b in blobs), secret
        assert all(secret not in t for t in texts), secret


def test_the_judge_log_replays_to_identical_metrics(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def script(prompt: str) -> str | tuple[str, str]:
        s1, s2 = spans_of(prompt) or ("", "")
        if s1.casefold() == s2.casefold():
            return "<answer>Yes</answer>"
        if s1.split()[:1] == s2.split()[:1]:  # same first word: yes one way, unreadable the other
            return "<answer>Yes</answer>" if len(s1) <= len(s2) else "<answer>Same-ish</answer>"
        return "<answer>No</answer>"

    db = open_db(tmp_path / "x.db")
    with JudgeServer(script) as srv:
        point_at(monkeypatch, srv)
        original = score_run(db, "chimera", {"gold": GOLD, "pred": MIXED}, SPEC, run="llm")
    log = tmp_path / "judge_log.jsonl"
    lines = _write_log(get_task("chimera"), list(decisions(db, "llm")), log)
    assert lines == judge_stats(original)["requests"] == srv.requests
    first = json.loads(log.read_text().splitlines()[0])
    assert set(first) >= {"paper_id", "entity_type", "span1", "span2", "answer"}

    replayed = score_run(db, "chimera", {"gold": GOLD, "pred": MIXED}, f"replay:{log}", run="replayed")
    assert replayed["original_metrics"] == original["original_metrics"]
    assert labels(db, "replayed") == labels(db, "llm")
    assert {"match", "no-match", "invalid"} <= set(labels(db, "llm").values())
    assert judge_stats(replayed)["missing"] == 0
    assert judge_stats(replayed)["invalid"] == judge_stats(original)["invalid"] > 0


# ---------------------------------------------------------------- failed jobs store nothing (issue 28)


def _runs(db_path: Path) -> list[str]:
    return [r[0] for r in sqlite3.connect(db_path).execute("SELECT name FROM runs")]


def test_a_server_dying_mid_run_fails_the_job_fast_keeps_the_cache_and_resumes(monkeypatch: pytest.MonkeyPatch,
                                                                               db_path: Path, capsys) -> None:
    from audit.cli import main

    args = ["--db", str(db_path), "score", "chimera", "--gold", GOLD, "--pred", MIXED, "--judge", SPEC, "--run", "r"]
    with JudgeServer(die_after=3) as srv:
        point_at(monkeypatch, srv)
        monkeypatch.delenv("REJUDGE_JUDGE_BACKOFF")  # the product's retry policy: 6 retries, 1 s base
        start = time.monotonic()
        code = main(args)
        took = time.monotonic() - start
        port = srv.port
    err = capsys.readouterr().err
    assert code == 2 and took < 30, took
    assert err.startswith("error:") and err.count("\n") == 1 and "stopped answering" in err
    assert "run the same command again" in err and "3 answers are cached" in err
    assert _runs(db_path) == [] and _cached_rows(db_path) == 3
    with JudgeServer(port=port) as back:  # the server is back at its address: the same command resumes
        assert main(args) == 0
        assert back.answered == expected_counts(MIXED)[0] - 3
    assert _runs(db_path) == ["r"]


def test_a_run_whose_answers_are_mostly_missing_is_a_failed_job_unless_partial(tmp_path: Path, capsys) -> None:
    from audit.cli import main

    db = tmp_path / "m.db"
    assert main(["--db", str(db), "score", "chimera", "--gold", GOLD, "--pred", MIXED, "--judge", "exact",
                 "--run", "full", "--judge-log", str(tmp_path / "full.jsonl")]) == 0
    lines = (tmp_path / "full.jsonl").read_text().splitlines()
    (tmp_path / "few.jsonl").write_text("\n".join(lines[: len(lines) // 5]) + "\n")
    capsys.readouterr()
    base = ["--db", str(db), "score", "chimera", "--gold", GOLD, "--pred", MIXED,
            "--judge", f"replay:{tmp_path / 'few.jsonl'}"]
    assert main([*base, "--run", "few"]) == 2
    err = capsys.readouterr().err
    assert "judge answers are not in the judge log" in err and "--allow-partial" in err and err.count("\n") == 1
    assert _runs(db) == ["full"]
    assert main([*base, "--run", "few", "--allow-partial"]) == 0
    assert sorted(_runs(db)) == ["few", "full"]


def test_judge_batch_import_of_a_file_that_imports_nothing_exits_2(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path, capsys) -> None:
    from audit.cli import main

    with JudgeServer() as srv:
        point_at(monkeypatch, srv)
        db = str(tmp_path / "b.db")
        base = ["--db", db, "judge-batch", "import", "--task", "chimera", "--judge", SPEC, "--gold", GOLD,
                "--pred", MIXED]
        empty = tmp_path / "empty.jsonl"
        empty.write_text("")
        assert main([*base, str(empty)]) == 2
        assert "no result line" in capsys.readouterr().err
        bad = tmp_path / "bad.jsonl"
        bad.write_text('{"custom_id": "nope", "response": {"status_code": 200, "body": {}}}\n{oops\n'
                       '{"custom_id": "x", "error": {"object": "error", "message": "prompt too long", "code": 400}}\n')
        assert main([*base, str(bad)]) == 2
        err = capsys.readouterr().err
        assert "none of its 3 result lines could be imported" in err and err.count("\n") == 1
        assert srv.requests == 0 and _cached_rows(Path(db)) == 0
