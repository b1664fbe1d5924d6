"""Issue #37 §2 for an LLM-improved judge: `score --judge improved:N` on a run sharing the reviewed documents also
asks each fold's judge (its stored rules) and stores their labels, so `estimate` is cross-fitted offline; with
`--no-fold-answers` it says its interval is too narrow. The scripted server (devtools/judge_server.py) distils
strict rules for some folds and lenient ones for others, so the fold judges differ and the average matters.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from rapidfuzz import fuzz

from audit.cli import main
from audit.rescoring import rebuild_audit_state
from audit.review.count_vectors import flatten
from audit.review.reviews import add_review
from audit.review.sampling import _blocks_state, create_plan, estimate, load_plan, metric_of_totals, next_sample
from audit.runs import score_run
from audit.store.database import open_db
from audit.views import load_view
from devtools.judge_server import JudgeServer, point_openai_at, spans_of
from devtools.paraphrase_run import GOLD, true_label, write_paraphrase_predictions
from scoring.improve.llm import RULES_HEAD

RUN = "llm"
SPEC = "openai-json:fake-judge"
LENIENT = "- Treat a light paraphrase of a span as the same idea."
STRICT = "- Be strict: only the same words are the same idea."
KEY = "entities/avg/f1"


def says_match(a: str, b: str, rules: str | None) -> bool:
    """The scripted judge on one span pair: the same text; or, taught lenient rules, a light paraphrase."""
    if a.strip().casefold() == b.strip().casefold():
        return True
    return rules is not None and STRICT not in rules and fuzz.ratio(a.strip(), b.strip()) >= 70


def script(prompt: str) -> str:
    spans = spans_of(prompt)
    if spans is None:  # a distillation request: strict or lenient rules, by the fold's notes
        return "Instructions:\n" + (STRICT if zlib.crc32(prompt.encode()) % 2 else LENIENT)
    taught = prompt.split(RULES_HEAD.strip(), 1)[1] if RULES_HEAD.strip() in prompt else None
    return json.dumps({"justification": "compared", "answer": "yes" if says_match(*spans, taught) else "no"})


@pytest.fixture(scope="module")
def server() -> Iterator[JudgeServer]:
    with JudgeServer(script) as srv:
        yield srv


@pytest.fixture
def env(server: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> JudgeServer:
    return point_openai_at(server, monkeypatch, concurrency=4)


@pytest.fixture
def sampled_db(tmp_path, env) -> tuple[Path, Path]:
    """Paraphrase predictions on 50 documents, judged by the strict scripted LLM; a sampling plan whose first 32
    draws are reviewed with the true labels (a note on every overruled decision)."""
    truth = write_paraphrase_predictions(tmp_path / "pred.jsonl", seed=0)
    lines = [json.loads(x) for x in (tmp_path / "pred.jsonl").read_text().splitlines()]
    keep = [x for x in lines if x["relations"]][:50]
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps(x) + "\n" for x in keep))
    path = tmp_path / "llm.db"
    db = open_db(path)
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(pred)}, SPEC, run=RUN)
    create_plan(db, RUN, seed=0)
    for _ in range(32):
        for i in next_sample(db, RUN)["decisions"]:
            x = next(d for d in load_view(db, RUN).decisions() if d["id"] == i)
            label = true_label(truth, x["doc"], x["type"], x["left"], x["right"])
            note = "a light paraphrase of the same idea" if label != x["judge"] else None
            add_review(db, RUN, i, label, "ann", note=note, sampled=True)
    db.conn.close()
    return path, pred


def counted(path: Path, run: str, reviews: Path) -> None:
    """The source run's sample passed on to `run` in this copy of the study (the source run and its reviews taken
    out first: one database holds a review once): `run`'s estimate counts the very reviews its judge learnt from."""
    assert main(["--db", str(path), "delete-run", "--run", RUN, "--force"]) == 0  # its reviews move to `run`
    db = open_db(path)
    uids = [json.loads(line)["uid"] for line in reviews.read_text(encoding="utf-8").splitlines() if line.strip()]
    db.execute(f"DELETE FROM reviews WHERE uid IN ({','.join('?' * len(uids))})", uids)  # out of this copy too
    for (name,) in db.execute("SELECT name FROM runs").fetchall():
        rebuild_audit_state(db, name)
    create_plan(db, run, seed=0)
    db.conn.close()
    assert main(["--db", str(path), "import-reviews", "--run", run, str(reviews)]) == 0


def hand_estimate(db, run: str, result: dict) -> float:
    """T̂ = Σ_{b∈s} c^H_b + Σ_{b∉s} c̄_b + Σ_h ((M_h − m_h)/m_h) Σ_{b∈s_h} (c^H_b − c^(k(b))_b), the fold judges'
    labels worked out from each fold's rules and the script, then the family's F1 of T̂."""
    view = load_view(db, run)
    task, plan = view.task, load_plan(db, view, None)
    state = _blocks_state(view, plan)
    sampled, certain, paths = state.sampled, state.certain, state.paths
    rules = [f["model"]["rules"] for f in result["fold_judges"]]
    fold_of = {d: k for k, f in enumerate(result["folds"]) for d in f}
    stratum = plan.stratum_of()
    total = sum(np.asarray(v, float) for v in [*sampled.values(), *certain.values()])
    size: dict[str, int] = {}
    drawn: dict[str, int] = {}
    residual: dict[str, np.ndarray] = {}
    for doc in view.document_ids():
        if doc in certain:
            continue
        payload = view.document(doc)["payload"]
        vec = []
        for r in rules:
            labels = {(d["kind"], d["type"], d["left"], d["right"]):
                      ("match" if says_match(d["left"], d["right"], r) else "no-match")
                      if task.questions_for(payload, d) else d["judge"] for d in view.decisions(doc)}
            vec.append(flatten(task.counts(payload, labels), paths))
        h = stratum.get(doc, "no decisions")
        size[h] = size.get(h, 0) + 1
        if doc in sampled:
            drawn[h] = drawn.get(h, 0) + 1
            residual[h] = residual.get(h, 0) + np.asarray(sampled[doc], float) - vec[fold_of[doc]]
        else:
            total = total + np.mean(vec, axis=0)
    for h, res in residual.items():
        total = total + (size[h] - drawn[h]) / drawn[h] * res
    cell = next(c for c in task.headline if "/".join(c.path) == KEY)
    return metric_of_totals(task, cell, paths, view.row["inputs"].get("options") or {})(total)


def test_a_run_scored_with_an_llm_improved_judge_on_its_own_sample_is_cross_fitted_from_the_fold_answers(
        sampled_db, env, tmp_path, capsys, monkeypatch):
    path, pred = sampled_db
    out = tmp_path / "rules.json"
    assert main(["--db", str(path), "improve-judge", "--run", RUN, "--strategy", "rules", "--folds", "4",
                 "--min-documents", "8", "--min-alpha", "0", "--out", str(out), "--force"]) == 0
    r = json.loads(out.read_text())
    rules = [f["model"]["rules"] for f in r["fold_judges"]]
    assert STRICT in rules and LENIENT in rules  # the fold judges differ: their average is not any one of them
    score = ["--db", str(path), "score", "chimera", "--gold", str(GOLD), "--pred", str(pred)]
    capsys.readouterr()
    assert main([*score, "--judge", f"improved:{r['stored_as']}", "--run", "improved"]) == 0
    err = capsys.readouterr().err
    assert "asking the 4 fold judges too" in err and "--no-fold-answers" in err
    db = open_db(path)
    view = load_view(db, "improved")
    # each stored fold label is that fold's rules' answer
    stored = {(f, i): lab for f, i, lab in db.execute("SELECT fold, decision_id, label FROM fold_labels")}
    decisions = view.decisions()
    assert len(stored) == 4 * len(decisions)
    for k, rule in enumerate(rules):
        for d in decisions:
            assert stored[(k, d["id"])] == ("match" if says_match(d["left"], d["right"], rule) else "no-match")
    db.conn.close()
    # a re-run asks nothing: every fold answer from the cache
    before = env.requests
    assert main([*score, "--judge", f"improved:{r['stored_as']}", "--run", "again"]) == 0
    assert env.requests == before
    # skipped: nothing asked for the folds
    assert main([*score, "--judge", f"improved:{r['stored_as']}", "--run", "skipped", "--no-fold-answers"]) == 0
    assert "--no-fold-answers" in capsys.readouterr().err
    reviews = tmp_path / "reviews.jsonl"
    assert main(["--db", str(path), "export-reviews", "--run", RUN, "--out", str(reviews)]) == 0
    copy = tmp_path / "copy.db"
    src, dst = sqlite3.connect(path), sqlite3.connect(copy)
    src.backup(dst)  # (the write-ahead log included)
    src.close()
    dst.close()
    counted(path, "improved", reviews)
    db = open_db(path)
    crossed = estimate(db, "improved")[KEY]
    assert crossed["estimator"].startswith("cross-fitted estimate: the judge was improved (rules")
    # "judge only" is the run's own judge, as its metrics table says; the folds' average judge is kept apart
    original = load_view(db, "improved").row["original_metrics"]
    assert crossed["judge_only"] == original["entities"]["avg"]["f1"]
    assert crossed["bias"] == pytest.approx(crossed["judge_only"] - crossed["estimate"], abs=1e-12)
    assert "folds_judge_only" in crossed
    assert "too narrow" not in crossed["estimator"] and crossed["n_documents_sampled"] >= 30
    assert crossed["estimate"] == pytest.approx(hand_estimate(db, "improved", r), abs=1e-12)
    monkeypatch.setattr("audit.review.sampling.crossfit_setup", lambda *_: None)
    naive = estimate(db, "improved")[KEY]  # the reviews reused as if the judge had never seen them
    monkeypatch.undo()
    assert crossed["ci"] and crossed["estimate"] != pytest.approx(naive["estimate"], abs=1e-3)
    db.conn.close()
    # skipped: the estimate says its interval is too narrow
    counted(copy, "skipped", reviews)
    db = open_db(copy)
    assert db.execute("SELECT count(*) FROM fold_labels WHERE run_id = ?",
                      [load_view(db, "skipped").id]).fetchone()[0] == 0
    assert "too narrow" in estimate(db, "skipped")[KEY]["estimator"]
    db.conn.close()


def test_the_fold_judges_asked_at_scoring_keep_their_prompts_when_their_own_folds_labels_change(
        sampled_db, env, tmp_path, monkeypatch):
    """The changed-labels property through `score`: a reviewer's second thoughts on every decision of fold 0's
    documents leave the prompts fold 0's few-shot judge is asked on the scored run byte-identical; fold 1's judge
    learnt from them and its prompts change (so the check can fail)."""
    from audit.outputs.improve_llm import Asker

    path, pred = sampled_db
    asked: list[list[str]] = []
    real_ask = Asker.ask

    def recording(self, judge, questions):  # noqa: ANN001, ANN202
        asked.append([judge.augment(q).prompt() for q in questions])
        return real_ask(self, judge, questions)

    monkeypatch.setattr(Asker, "ask", recording)

    def improve_and_score(name: str) -> tuple[dict, list[list[str]]]:
        out = tmp_path / f"{name}.json"
        assert main(["--db", str(path), "improve-judge", "--run", RUN, "--strategy", "few-shot", "--folds", "4",
                     "--min-documents", "8", "--min-alpha", "0", "--out", str(out), "--force"]) == 0
        r = json.loads(out.read_text())
        asked.clear()
        assert main(["--db", str(path), "score", "chimera", "--gold", str(GOLD), "--pred", str(pred),
                     "--judge", f"improved:{r['stored_as']}", "--run", name]) == 0
        assert len(asked) == 4  # one batch per fold judge, fold 0 first
        return r, [list(a) for a in asked]

    r, before = improve_and_score("before")
    db = open_db(path)
    view = load_view(db, RUN)
    flipped = 0
    for x in view.decisions():
        if x["doc"] in r["folds"][0] and x["id"] in view.reviews:
            add_review(db, RUN, x["id"], "match" if x["effective"] == "no-match" else "no-match", "ann")
            flipped += 1
    db.conn.close()
    assert flipped > 0
    changed, after = improve_and_score("after")
    assert changed["folds"] == r["folds"]
    assert after[0] == before[0]
    assert after[1] != before[1]


def test_a_server_failure_while_the_folds_are_asked_takes_the_run_back(sampled_db, env, tmp_path, monkeypatch,
                                                                       capsys):
    """The server fails on the second fold judge's questions: the command fails, and neither the run nor any fold
    label is left stored (scoring again later asks only what the cache lacks)."""
    from audit.outputs.improve_llm import Asker

    path, pred = sampled_db
    out = tmp_path / "rules.json"
    assert main(["--db", str(path), "improve-judge", "--run", RUN, "--strategy", "rules", "--folds", "4",
                 "--min-documents", "8", "--min-alpha", "0", "--out", str(out), "--force"]) == 0
    r = json.loads(out.read_text())
    calls = []
    real_ask = Asker.ask

    def failing(self, judge, questions):  # noqa: ANN001, ANN202
        calls.append(1)
        if len(calls) == 2:
            env.always_status = 400
        return real_ask(self, judge, questions)

    monkeypatch.setattr(Asker, "ask", failing)
    try:
        code = main(["--db", str(path), "score", "chimera", "--gold", str(GOLD), "--pred", str(pred),
                     "--judge", f"improved:{r['stored_as']}", "--run", "broken"])
    finally:
        env.always_status = None
    assert code != 0 and len(calls) >= 2  # (a fold whose rules another fold also distilled is all cached)
    assert "OPENAI_BASE_URL" in capsys.readouterr().err
    db = open_db(path)
    assert [n for n, in db.execute("SELECT name FROM runs")] == [RUN]
    assert db.execute("SELECT count(*) FROM fold_labels").fetchone()[0] == 0
    db.conn.close()
