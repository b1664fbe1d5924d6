"""`improve-judge --strategy few-shot | rules` (issue #37) on a CHIMERA run judged by an LLM, against the scripted
OpenAI-compatible server (devtools/judge_server.py): the mechanics (which reviews reach which prompt, the cache, the
changed-labels test). The scripted "LLM" says yes to equal spans only, unless its prompt carries reviewed examples
with a yes or the reviewers' rules: then to light paraphrases too. The real model: tests/llm/test_improve_real.py.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from rapidfuzz import fuzz

from audit.cli import main
from audit.outputs.improve_judge import judge_to_use
from audit.review.reviews import add_review
from audit.runs import score_run
from audit.store.database import open_db
from audit.views import load_view
from devtools.judge_server import JudgeServer, point_openai_at, spans_of
from devtools.paraphrase_run import GOLD, true_label, write_paraphrase_predictions
from scoring.improve.llm import RULES_HEAD

RUN = "llm"
SPEC = "openai-json:fake-judge"
RULES = "- Treat a light paraphrase of a span as the same idea.\n- Judge the idea, not the exact wording."


def script(prompt: str) -> str:
    spans = spans_of(prompt)
    if spans is None:  # the distillation request
        return "Here are the instructions:\n" + RULES + "\nThat is all."
    a, b = (s.strip() for s in spans)
    same = a.casefold() == b.casefold()
    taught = RULES_HEAD.strip() in prompt or ("Examples:" in prompt and "→ yes" in prompt)
    if not same and taught:
        same = fuzz.ratio(a, b) >= 70
    return json.dumps({"justification": "compared", "answer": "yes" if same else "no"})


@pytest.fixture(scope="module")
def server() -> Iterator[JudgeServer]:
    with JudgeServer(script) as srv:
        yield srv


@pytest.fixture
def env(server: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> JudgeServer:
    return point_openai_at(server, monkeypatch, concurrency=4)


@pytest.fixture(scope="module")
def template(tmp_path_factory, server: JudgeServer) -> tuple[Path, dict]:
    """Paraphrase predictions on the first 40 documents with predictions, judged by the strict scripted LLM; the
    first 20 documents reviewed with the careful human's label, a note on every overruled decision."""
    d = tmp_path_factory.mktemp("llm")
    truth = write_paraphrase_predictions(d / "pred.jsonl", seed=0)
    lines = [json.loads(x) for x in (d / "pred.jsonl").read_text().splitlines()]
    keep = [x for x in lines if x["relations"]][:40]
    (d / "pred.jsonl").write_text("".join(json.dumps(x) + "\n" for x in keep))
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_BASE_URL", server.base_url)
    mp.setenv("OPENAI_API_KEY", "sk-test")
    mp.setenv("REJUDGE_JUDGE_CONCURRENCY", "4")
    try:
        db = open_db(d / "llm.db")
        score_run(db, "chimera", {"gold": str(GOLD), "pred": str(d / "pred.jsonl")}, SPEC, run=RUN)
        decisions = load_view(db, RUN).decisions()
        docs = sorted({x["doc"] for x in decisions})[:20]
        for x in decisions:
            if x["doc"] in docs:
                label = true_label(truth, x["doc"], x["type"], x["left"], x["right"])
                note = "a light paraphrase of the same idea" if label != x["judge"] else None
                add_review(db, RUN, x["id"], label, "ann", note=note)
        db.conn.close()
    finally:
        mp.undo()
    return d / "llm.db", truth


@pytest.fixture
def db_path(tmp_path, template) -> Path:
    path = tmp_path / "db.db"
    shutil.copyfile(template[0], path)
    return path


def improve(path: Path, out: Path, strategy: str, *extra: str) -> dict:
    assert main(["--db", str(path), "improve-judge", "--run", RUN, "--strategy", strategy, "--out", str(out),
                 "--force", *extra]) == 0
    return json.loads(out.read_text())


def flip_fold(path: Path, docs: list[str]) -> int:
    """Change the label of every reviewed decision of these documents (a second thought of the same reviewer)."""
    db = open_db(path)
    view = load_view(db, RUN)
    n = 0
    for x in view.decisions():
        if x["doc"] in docs and x["id"] in view.reviews:
            add_review(db, RUN, x["id"], "match" if x["effective"] == "no-match" else "no-match", "ann")
            n += 1
    db.conn.close()
    return n


def test_few_shot_puts_reviewed_examples_from_other_documents_in_the_prompt_and_caches_the_answers(
        db_path, env, tmp_path):
    before = env.requests
    r = improve(db_path, tmp_path / "fs.json", "few-shot", "--k", "3")
    asked = env.requests - before
    ev = r["evaluation"]
    assert ev["n_documents"] == 20 and r["improved"] is True and ev["kappa_after"] > ev["kappa_before"]
    assert ev["method"].startswith("paired document bootstrap with the cross-fitted judges held fixed")
    after = r["judge_after"]
    assert after["spec"] == SPEC and after["improved"]["strategy"] == "few-shot" and after["improved"]["k"] == 3
    # each fold's judge holds examples of the other folds' documents only
    for fold, judge in zip(r["folds"], r["fold_judges"], strict=True):
        assert judge["held_out_documents"] == fold
        assert not {e["doc"] for e in judge["model"]["examples"]} & set(fold)
    shown = [b["messages"][0]["content"] for b in env.bodies[-asked:]]
    assert all(p.startswith("Examples: expert reviewers") for p in shown)
    assert r["cost"]["requests"] == asked > 0
    # a new prompt: the template is the family's plus the few-shot scaffold
    db = open_db(db_path)
    hashes = {row["prompt_hash"] for row in db.query("SELECT DISTINCT prompt_hash FROM judge_cache")}
    db.conn.close()
    assert len(hashes) == 2
    before = env.requests
    again = improve(db_path, tmp_path / "fs2.json", "few-shot", "--k", "3")
    assert env.requests == before and again["cost"]["requests"] == 0  # every answer from the cache
    assert again["evaluation"] == r["evaluation"]


@pytest.mark.parametrize("strategy", ["few-shot", "rules"])
def test_changing_the_labels_of_one_folds_documents_leaves_that_folds_judge_byte_identical(
        db_path, env, tmp_path, strategy):
    """The fit never reads the labels of the documents it is evaluated on: a reviewer's second thoughts on every
    decision of fold 0's documents leave fold 0's judge the same JSON; the other folds' judges learnt from them
    and change (so the check can fail)."""
    r = improve(db_path, tmp_path / "a.json", strategy)
    assert flip_fold(db_path, r["folds"][0]) > 0
    changed = improve(db_path, tmp_path / "b.json", strategy)
    assert changed["folds"] == r["folds"]
    same = json.dumps(r["fold_judges"][0], sort_keys=True)
    assert json.dumps(changed["fold_judges"][0], sort_keys=True) == same
    if strategy == "few-shot":
        assert changed["fold_judges"][1] != r["fold_judges"][1]
    else:  # fold 0's notes are gone (a second thought without one): the other folds learnt from fewer notes
        assert changed["fold_judges"][1]["model"]["from_notes"] != r["fold_judges"][1]["model"]["from_notes"]


def test_rules_are_distilled_from_the_fit_folds_notes_by_the_model_and_appended(db_path, env, tmp_path):
    before = env.requests
    r = improve(db_path, tmp_path / "rules.json", "rules")
    bodies = env.bodies[before:]
    distil = [b["messages"][0]["content"] for b in bodies if "Human reviewers overruled" in b["messages"][0]["content"]]
    assert len(distil) == len(r["folds"]) + 1  # one per fold, one for the judge to keep
    assert "a light paraphrase of the same idea" in distil[0]
    after = r["judge_after"]
    assert after["rules"] == RULES and after["model"]["edited"] is False
    assert r["improved"] is True
    asked = [b["messages"][0]["content"] for b in bodies if spans_of(b["messages"][0]["content"])]
    assert asked and all(p.endswith(RULES_HEAD + RULES) for p in asked)
    # the notes a fold's judge learnt from are those of its fitting documents only
    db = open_db(db_path)
    doc_of = {x["id"]: x["doc"] for x in load_view(db, RUN).decisions()}
    db.conn.close()
    for fold, judge in zip(r["folds"], r["fold_judges"], strict=True):
        assert judge["model"]["from_notes"] and not {doc_of[i] for i in judge["model"]["from_notes"]} & set(fold)


def test_edited_rules_passed_back_are_the_judge_to_keep(db_path, env, tmp_path):
    edited = tmp_path / "rules.txt"
    edited.write_text("- Two spans naming the same method in other words are the same idea.\n")
    r = improve(db_path, tmp_path / "e.json", "rules", "--rules", str(edited))
    after = r["judge_after"]
    assert after["rules"] == "- Two spans naming the same method in other words are the same idea."
    assert after["model"]["edited"] is True and after["model"]["distilled"] == RULES
    assert after["improved"]["edited"] is True
    assert "edited by hand" in r["evaluation"]["note"]
    # where the distilled rules improved the judge, the advice says the edit itself was not evaluated
    assert "your edited rules, which no fold evaluated" in judge_to_use(r | {"improved": True})


def test_rules_without_rules_strategy_and_an_unreadable_file_are_refused(db_path, env, tmp_path, capsys):
    argv = ["--db", str(db_path), "improve-judge", "--run", RUN, "--out", str(tmp_path / "x.json")]
    assert main([*argv, "--strategy", "few-shot", "--rules", str(tmp_path / "none.txt")]) == 2
    assert "none.txt: --rules must be a readable UTF-8 text file" in capsys.readouterr().err
    (tmp_path / "r.txt").write_text("- x")
    assert main([*argv, "--strategy", "few-shot", "--rules", str(tmp_path / "r.txt")]) == 2
    assert "--rules goes with --strategy rules" in capsys.readouterr().err


def other_predictions(path: Path) -> Path:
    """Another system's predictions on 12 documents nobody reviewed (the paraphrase run's documents 40-51)."""
    write_paraphrase_predictions(path, seed=1)
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(x) + "\n" for x in [x for x in lines if x["relations"]][40:52]))
    return path


def matches(db_path: Path, run: str) -> int:
    db = open_db(db_path)
    try:
        return sum(d["judge"] == "match" for d in load_view(db, run).decisions())
    finally:
        db.conn.close()


@pytest.mark.parametrize("strategy", ["few-shot", "rules"])
def test_score_takes_the_improved_llm_judge_on_another_run_and_withdrawing_a_review_marks_it_stale(
        db_path, env, tmp_path, capsys, strategy):
    """`score --judge improved:ID` (the id improve-judge prints) asks the run's LLM with the learnt prompt on
    another run of the family, caches under the improved prompt's hash, and records what it learnt from; the same
    judge from the result file (`--judge SPEC --learnt-from FILE`) is the same prompts (all cached); withdrawing a
    review it learnt from marks the run stale."""
    from audit.learning import learning_status

    out = tmp_path / "imp.json"
    r = improve(db_path, out, strategy)
    assert f"score with --judge improved:{r['stored_as']}" in capsys.readouterr().err
    pred = other_predictions(tmp_path / "other.jsonl")
    score = ["--db", str(db_path), "score", "chimera", "--gold", str(GOLD), "--pred", str(pred)]
    assert main([*score, "--judge", SPEC, "--run", "plain"]) == 0
    before = env.requests
    assert main([*score, "--judge", f"improved:{r['stored_as']}", "--run", "next"]) == 0
    shown = [b["messages"][0]["content"] for b in env.bodies[before:]]
    assert len(shown) == env.requests - before > 0
    if strategy == "few-shot":
        assert all(p.startswith("Examples: expert reviewers") for p in shown)
    else:
        assert all(p.endswith(RULES_HEAD + RULES) for p in shown)
    assert matches(db_path, "next") > matches(db_path, "plain")  # the taught judge finds the paraphrases
    db = open_db(db_path)
    plain = load_view(db, "plain").row["judge_identity"]
    identity = load_view(db, "next").row["judge_identity"]
    learnt = identity["learnt_from"]
    assert identity["improved"] == r["judge_after"]["improved"] and identity["prompt_hash"] != plain["prompt_hash"]
    assert identity["base_prompt"]["hash"] == plain["prompt_hash"]
    assert learnt["review_ids"] == r["judge_after"]["learnt_from"]["review_ids"] and learnt["seed"] == 0
    assert learnt["split"] == r["folds"] and learnt["improvement_id"] == r["stored_as"]
    cached = db.execute("SELECT count(*) FROM judge_cache WHERE prompt_hash = ?", [identity["prompt_hash"]])
    assert cached.fetchone()[0] >= len(shown)
    db.conn.close()
    before = env.requests
    assert main([*score, "--judge", SPEC, "--learnt-from", str(out), "--run", "from-file"]) == 0
    assert env.requests == before  # the same improved prompts: every answer from the cache
    assert matches(db_path, "from-file") == matches(db_path, "next")
    db = open_db(db_path)
    assert learning_status(db, identity)["stale"] is False
    add_review(db, RUN, r["judge_after"]["learnt_from"]["decisions"][0], None, "ann")  # withdrawn
    db.conn.close()
    capsys.readouterr()
    assert main(["--db", str(db_path), "runs"]) == 0
    listed = {x["name"]: x for x in map(json.loads, capsys.readouterr().out.splitlines())}
    assert listed["next"]["judge_stale"] is True and listed["from-file"]["judge_stale"] is True
    assert "judge_stale" not in listed["plain"]


def test_a_bad_improved_judge_reference_is_refused_in_one_line(db_path, env, tmp_path, capsys):
    score = ["--db", str(db_path), "score", "chimera", "--gold", str(GOLD), "--pred", str(tmp_path / "p.jsonl")]
    other_predictions(tmp_path / "p.jsonl")
    assert main([*score, "--judge", "improved:999"]) == 2
    assert "--judge improved:999: no improve-judge result 999 in this database" in capsys.readouterr().err
    assert main([*score, "--judge", "improved:last"]) == 2
    assert "give the number improve-judge printed" in capsys.readouterr().err
    r = improve(db_path, tmp_path / "imp.json", "rules")
    assert main([*score, "--judge", f"improved:{r['stored_as']}", "--learnt-from", str(tmp_path / "imp.json")]) == 2
    assert "drop --learnt-from" in capsys.readouterr().err
