"""Issue 34, silent acceptances: inputs every family accepted with exit 0 (or crashed on) that now end in one
`error:` line naming the file and line, exit 2, nothing stored. Repeated CSV header names, CHIMERA gold that is
not what it says (spaced ids, a relation as an object, offsets outside the text, an unknown class, NUL and
oversized spans), judge logs and ideation files with unknown or differently cased entity types and criteria,
oversized names and queries, LitXBench units of the wrong dimension, `[]` and `.JSON` gold files, broken
`.meta.json` sidecars, unreadable replay logs, `--db :memory:`, review times out of range and huge
`--min-reviewers`. Tests: tests/hardening/test_round3_inputs.py (each case through the CLI in-process).

Limits are `scoring.limits`.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

from devtools.hardening_cases import Case2
from scoring.limits import MAX_QUERY_CHARS, MAX_SPAN_CHARS, MAX_SYSTEM_NAME_CHARS

ROOT = Path(__file__).resolve().parents[2]
RETRIEVAL = ROOT / "data" / "retrieval" / "demo_rankings.jsonl"
BASE_RUN = "base"

TEXT = "We combine alpha and beta to get gamma."
ENTITIES = [{"start": 11, "end": 16, "tag": "comb-element", "value": "alpha"},
            {"start": 21, "end": 25, "tag": "comb-element", "value": "beta"}]
RELATIONS = {"combination": [{"comb-element": ["alpha", "beta"]}]}
HEADER = ["paper_id", "text", "document_class", "entities", "readable_relations"]


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _jsonl(path: Path, rows: list) -> Path:
    return _write(path, "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))


def gold_csv(path: Path, header: list[str] | None = None, row: list[str] | None = None) -> Path:
    """A one-abstract CHIMERA gold CSV (`HEADER`), with the header or the row replaced when given."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header or HEADER)
    w.writerow(row or ["p1", TEXT, "relevant", json.dumps(ENTITIES), json.dumps(RELATIONS)])
    return _write(path, buf.getvalue())


def chimera_argv(gold: Path, pred: Path, judge: str = "exact") -> list[str | bytes]:
    return ["score", "chimera", "--db", "{db}", "--gold", str(gold), "--pred", str(pred), "--judge", judge]


def _pred(path: Path, relations: object = None, pid: str = "p1") -> Path:
    return _jsonl(path, [{"paper_id": pid, "relations": RELATIONS if relations is None else relations}])


def _chimera_gold_cases(work: Path) -> list[Case2]:
    group = "r3 inputs: chimera gold"
    d = work / "chimera"
    pred = _pred(d / "pred.jsonl")
    row = ["p1", TEXT, "relevant", json.dumps(ENTITIES), json.dumps(RELATIONS)]
    out = []

    def case(name: str, gold: Path, p: Path = pred) -> None:
        out.append(Case2(group, name, chimera_argv(gold, p), watch=[gold, p]))

    case("two readable_relations columns (the second {})",
         gold_csv(d / "dup-rr.csv", [*HEADER, "readable_relations"], [*row, "{}"]))
    case("two paper_id columns (the second a copy)", gold_csv(d / "dup-id.csv", [*HEADER, "paper_id"], [*row, "p1"]))
    case("paper id with surrounding spaces", gold_csv(d / "spaced.csv", row=[" p1 ", *row[1:]]))
    case("a relation given as an object, not a list",
         gold_csv(d / "rel-dict.csv", row=[*row[:4], json.dumps({"combination": {"comb-element": ["alpha", "beta"]}})]))
    case("entity offsets outside the text",
         gold_csv(d / "offsets.csv", row=[*row[:3], json.dumps([{**ENTITIES[0], "start": 500, "end": 505}]), row[4]]))
    case("unknown document_class", gold_csv(d / "class.csv", row=[*row[:2], "maybe", *row[3:]]))
    case("NUL inside a gold span", gold_csv(d / "nul.csv", row=[
        *row[:4], json.dumps({"combination": [{"comb-element": ["al\x00pha", "beta"]}]})]))
    case("predicted span over the size limit",
         gold_csv(d / "ok.csv"), _pred(d / "big-span.jsonl", {"combination": [{"comb-element": [
             "a" * (MAX_SPAN_CHARS + 1), "beta"]}]}))
    return out


def judge_log(path: Path, entity_type: str = "comb-element", answer: str = "yes") -> Path:
    """A CHIMERA judge log answering every question of `gold_csv` x `_pred` (both spans, both orders)."""
    return _jsonl(path, [{"paper_id": "p1", "entity_type": entity_type, "span1": a, "span2": b, "answer": answer}
                         for a in ("alpha", "beta") for b in ("alpha", "beta")])


def _log_cases(work: Path) -> list[Case2]:
    group = "r3 inputs: judge logs"
    d = work / "logs"
    gold, pred = gold_csv(d / "gold.csv"), _pred(d / "pred.jsonl")
    out = []
    for name, etype in (("differently cased entity type (Comb-element)", "Comb-element"),
                        ("unknown entity type (clarity)", "clarity")):
        # every question answered; one more line, of a type no question has, answered nothing unseen
        log = judge_log(d / f"{etype}.jsonl")
        with log.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"paper_id": "p1", "entity_type": etype, "span1": "alpha", "span2": "beta",
                                "answer": "no"}) + "\n")
        out.append(Case2(group, f"chimera judge log: {name}", chimera_argv(gold, pred, f"replay:{log}"),
                         watch=[log]))
    log = judge_log(d / "unreadable.jsonl", answer="Yes.")
    out.append(Case2(group, "chimera replay log whose every answer is unreadable (\"Yes.\")",
                     chimera_argv(gold, pred, f"replay:{log}"), watch=[log]))
    good = judge_log(d / "good.jsonl")
    folder_meta = d / "good.meta.json"
    folder_meta.mkdir(parents=True, exist_ok=True)
    out.append(Case2(group, "judge log whose .meta.json is a folder", chimera_argv(gold, pred, f"replay:{good}"),
                     watch=[good]))
    nan = judge_log(d / "nan.jsonl")
    _write(d / "nan.meta.json", '{"judge_spec": "openai:gpt-4o", "params": {"temperature": NaN}}')
    out.append(Case2(group, "judge log whose .meta.json holds NaN", chimera_argv(gold, pred, f"replay:{nan}"),
                     watch=[nan, d / "nan.meta.json"]))
    return out


def _retrieval_line() -> dict:
    return json.loads(next(x for x in RETRIEVAL.read_text(encoding="utf-8").splitlines() if x.strip()))


def _retrieval_cases(work: Path) -> list[Case2]:
    group = "r3 inputs: retrieval"
    d = work / "retrieval"
    out = []
    for name, change in (("empty query id", {"id": ""}), ("query id of spaces", {"id": "   "}),
                         ("query over the size limit", {"query": "q" * (MAX_QUERY_CHARS + 1)})):
        p = _jsonl(d / f"{len(out)}.jsonl", [{**_retrieval_line(), **change}])
        out.append(Case2(group, name, ["score", "retrieval", "--db", "{db}", "--pred", str(p)], watch=[p]))
    return out


def ideas_file(path: Path, system_b: str = "b") -> Path:
    return _jsonl(path, [{"question_id": "q1", "question": "Q?", "system": "a", "idea": "A"},
                         {"question_id": "q1", "question": "Q?", "system": system_b, "idea": "B"}])


def _verdicts_read_as(run: str, verdict: str) -> Callable[[Path, Path, str], str | None]:
    """Check of a documented acceptance: run `run` is stored and every call of it reads `verdict`."""
    def check(work: Path, db: Path, stderr: str) -> str | None:  # noqa: ARG001
        with sqlite3.connect(db) as c:
            rows = c.execute("SELECT d.detail FROM decisions d JOIN runs r ON r.id = d.run_id WHERE r.name = ?",
                             [run]).fetchall()
        c.close()
        calls = [call for (detail,) in rows for call in json.loads(detail or "{}").get("calls", [])]
        if not calls:
            return f"run {run!r} was not stored with its calls"
        got = {call.get("verdict") for call in calls}
        return None if got == {verdict} else f"verdicts read as {sorted(map(str, got))}, not {verdict!r}"
    return check


def _ideation_cases(work: Path) -> list[Case2]:
    group = "r3 inputs: ideation"
    d = work / "ideation"
    ideas = ideas_file(d / "ideas.jsonl")
    out = []

    def case(name: str, flag: str, rows: list, file_ideas: Path = ideas) -> None:
        p = _jsonl(d / f"{len(out)}.jsonl", rows)
        argv: list[str | bytes] = ["score", "ideation", "--db", "{db}", "--ideas", str(file_ideas)]
        argv += ["--judge", f"replay:{p}"] if flag == "replay" else [f"--{flag}", str(p)]
        out.append(Case2(group, name, argv, watch=[p, file_ideas]))

    def ratings(criterion: str = "novelty") -> list[dict]:
        return [{"question_id": "q1", "system": s, "criterion": criterion, "score": 3} for s in ("a", "b")]

    def calls(criterion: str = "novelty", verdict: str = "first") -> list[dict]:
        return [{"question_id": "q1", "criterion": criterion, "first": f, "second": s, "verdict": verdict}
                for f, s in (("a", "b"), ("b", "a"))]

    case("rating criterion differently cased (Novelty)", "absolute", ratings("Novelty"))
    case("rating criterion unknown (clarity)", "absolute", ratings("clarity"))
    case("pairwise criterion differently cased (Novelty)", "pairwise", calls("Novelty"))
    case("judge log criterion differently cased beside the usual one", "replay",
         [*ratings(), *ratings("Novelty")])
    p = _jsonl(d / "first.jsonl", calls(verdict="First"))
    out.append(Case2(group, "verdict \"First\" (documented: read as first)", ["score", "ideation", "--db", "{db}",
                     "--ideas", str(ideas), "--pairwise", str(p), "--run", "verdict-first"], expect="ok",
                     check=_verdicts_read_as("verdict-first", "first")))
    long_ideas = ideas_file(d / "long-name.jsonl", "s" * 10_000)
    out.append(Case2(group, "system name of 10,000 characters", ["score", "ideation", "--db", "{db}", "--ideas",
                                                                  str(long_ideas)], watch=[long_ideas]))
    assert MAX_SYSTEM_NAME_CHARS < 10_000
    out.append(Case2(group, "ideas without judge ratings (nothing to score)", ["score", "ideation", "--db", "{db}",
                                                                             "--ideas", str(ideas)], watch=[ideas]))
    out.append(Case2(group, "ideas without judge ratings, --allow-empty (documented: stored)", [
        "score", "ideation", "--db", "{db}", "--ideas", str(ideas), "--allow-empty", "--run", "ideas-alone"],
        expect="ok", check=_run_field("ideas-alone", lambda row: None if row["n_decisions"] == 0 and any(
            "nothing to score" in w for w in row["summary"]["warnings"]) else f"stored as {row}")))
    return out


def litx_paper(unit: str = "HV", temperature: str = "") -> str:
    return ('[{"raw_materials": {"el": {"kind": "Ingot"}}, "synthesis_groups": [{"kind": "ArcMelting"}],\n'
            ' "output_materials": [{"measurements": [\n'
            '  {"_type": "composition", "composition": {"Fe": 0.5, "Ni": 0.5}},\n'
            f'  {{"kind": "vickers_hardness", "value": 200, "unit": "{unit}"{temperature}}}]}}]}}]\n')


def litx_folders(base: Path, gold: str | None = None, gold_name: str = "p1.json") -> tuple[Path, Path]:
    g, p = base / "gold", base / "pred"
    for f in (g, p):
        f.mkdir(parents=True, exist_ok=True)
    _write(g / gold_name, gold if gold is not None else litx_paper())
    _write(p / "p1.json", litx_paper())
    return g, p


def litx_argv(gold: Path, pred: Path) -> list[str | bytes]:
    return ["score", "litxbench", "--db", "{db}", "--gold", str(gold), "--pred", str(pred), "--judge", "official"]


def _litx_cases(work: Path) -> list[Case2]:
    group = "r3 inputs: litxbench"
    d = work / "litx"
    out = []
    for name, gold, gold_name in (
            ("hardness in parsec", litx_paper(unit="parsec"), "p1.json"),
            ("measurement temperature in parsec", litx_paper(temperature=', "temperature": {"value": 20, '
                                                                         '"unit": "parsec"}'), "p1.json"),
            ("gold file []", "[]\n", "p1.json"),
            ("gold file named .JSON beside a .json one", litx_paper(), "p2.JSON")):
        g, p = litx_folders(d / str(len(out)), gold, gold_name)
        if gold_name != "p1.json":
            _write(g / "p1.json", litx_paper())
        out.append(Case2(group, name, litx_argv(g, p), watch=[g.parent]))
    return out


def _cli_cases(work: Path) -> list[Case2]:
    group = "r3 inputs: command line"
    d = work / "cli"
    gold, pred = gold_csv(d / "gold.csv"), _pred(d / "pred.jsonl")
    out = [Case2(group, f"score --db {shown}", ["score", "chimera", "--db", db, "--gold", str(gold), "--pred",
                                                 str(pred), "--judge", "exact"], watch=[gold, pred])
           for shown, db in ((":memory:", ":memory:"), ("''", ""))]
    for name, created in (("review time in year 1 west of UTC", "0001-01-01T00:00:00+01:00"),
                          ("review time in year 9999 east of UTC", "9999-12-31T23:59:59-01:00")):
        rec = {"uid": f"r3-{len(out)}", "doc": "x", "kind": "entity_pair", "type": "comb-element", "left": "a",
               "right": "b", "reviewer": "ana", "label": "match", "role": "reviewer", "note": None, "blind": False,
               "created": created}
        p = _jsonl(d / f"reviews-{len(out)}.jsonl", [rec])
        out.append(Case2(group, name, ["import-reviews", "--db", "{db}", "--run", BASE_RUN, str(p)], watch=[p]))
    out.append(Case2(group, "assign --min-reviewers 2**70",
                     ["assign", "--db", "{db}", "--run", BASE_RUN, "--reviewers", "ana,bo", "--min-reviewers",
                      str(2**70)]))
    return out


def _run_field(run: str, want: Callable[[dict], str | None]) -> Callable[[Path, Path, str], str | None]:
    """Check of a documented behaviour: run `run` is stored and `want(row)` (its judge_spec, identity and summary
    parsed) finds nothing wrong."""
    def check(work: Path, db: Path, stderr: str) -> str | None:  # noqa: ARG001
        with sqlite3.connect(db) as c:
            row = c.execute("SELECT judge_spec, judge_identity, summary, n_decisions FROM runs WHERE name = ?",
                            [run]).fetchone()
        c.close()
        if row is None:
            return f"run {run!r} was not stored"
        return want({"judge_spec": row[0], "identity": json.loads(row[1] or "{}"), "summary": json.loads(row[2]),
                     "n_decisions": row[3]})
    return check


def _sidecar_claim(row: dict) -> str | None:
    from scoring.judges.replay import SIDECAR_NOTE

    if not row["judge_spec"].startswith("replay:"):
        return f"the run's judge is {row['judge_spec']!r}, not the replay that answered"
    if row["identity"].get("source_note") != SIDECAR_NOTE:
        return "the sidecar's claim is shown without saying it is a claim"
    return None


def _one_invalid(row: dict) -> str | None:
    judge = row["summary"].get("judge", {})
    return None if judge.get("invalid") == 1 else f"judge stats {judge}: expected exactly one invalid answer"


def _live_surrogate(gold: Path, pred: Path) -> Callable[[Path, Path], tuple[int, str]]:
    """`score --judge openai:test-model` against a local server whose first reply holds a lone surrogate."""
    def call(work: Path, db: Path) -> tuple[int, str]:  # noqa: ARG001
        import contextlib
        import os

        from audit.cli import main
        from devtools.judge_server import JudgeServer

        replies = iter(["<answer>yes</answer> \ud800"])
        err = io.StringIO()
        with JudgeServer(lambda _prompt: next(replies, "<answer>yes</answer>")) as srv:
            saved = dict(os.environ)
            os.environ.update({"OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "sk-r3", "REJUDGE_JUDGE_BACKOFF":
                               "0.001", "REJUDGE_JUDGE_CONCURRENCY": "1"})
            try:
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                    argv = [str(a).replace("{db}", str(db)) for a in chimera_argv(gold, pred, "openai:test-model")]
                    status = main([*argv, "--run", "live-surrogate"])
            finally:
                os.environ.clear()
                os.environ.update(saved)
        return status, err.getvalue()
    return call


BATCH_URL = "http://127.0.0.1:9/v1"
"""The endpoint the batch case's cache keys name (nothing is sent to it)."""


def _batch_results(d: Path, gold: Path, pred: Path, model: str) -> Path:
    """A Batch API results file answering every exported request `yes`, each body naming `model`."""
    import os

    from audit.judge_batch import export_requests
    from audit.store.database import open_db

    saved = dict(os.environ)
    os.environ.update({"OPENAI_BASE_URL": BATCH_URL, "OPENAI_API_KEY": "sk-r3"})
    try:
        req = d / "requests.jsonl"
        export_requests(open_db(d / "export.db"), "chimera", {"gold": str(gold), "pred": str(pred)},
                        "openai:test-model", req)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    lines = [json.loads(x) for x in req.read_text(encoding="utf-8").splitlines() if x.strip()]
    return _jsonl(d / "results.jsonl", [
        {"custom_id": r["custom_id"], "error": None, "response": {"status_code": 200, "body": {
            "model": model, "choices": [{"message": {"role": "assistant", "content": "<answer>yes</answer>"},
                                         "finish_reason": "stop"}]}}} for r in lines])


def _judge_cases(work: Path) -> list[Case2]:
    group = "r3 inputs: judges"
    d = work / "judges"
    gold, pred = gold_csv(d / "gold.csv"), _pred(d / "pred.jsonl")
    log = judge_log(d / "claimed.jsonl")
    _write(d / "claimed.meta.json", json.dumps({"judge_spec": "openai:gpt-4o", "model": "gpt-4o"}))
    results = _batch_results(d, gold, pred, "gpt-4o")
    return [
        Case2(group, "replay sidecar claiming openai:gpt-4o (documented: shown as the sidecar's claim)",
              [*chimera_argv(gold, pred, f"replay:{log}"), "--run", "claimed"], expect="ok",
              check=_run_field("claimed", _sidecar_claim)),
        Case2(group, "judge-batch import of results answered by another model",
              ["judge-batch", "import", "--db", "{db}", "--task", "chimera", "--gold", str(gold), "--pred", str(pred),
               "--judge", "openai:test-model", str(results)], env={"OPENAI_BASE_URL": BATCH_URL,
                                                                   "OPENAI_API_KEY": "sk-r3"}, watch=[results]),
        Case2(group, "live reply with a lone surrogate (one invalid answer, the run completes)", None, expect="ok",
              call=_live_surrogate(gold, pred), check=_run_field("live-surrogate", _one_invalid)),
    ]


def _form_cases(work: Path) -> list[Case2]:
    """The dashboard's new-run form reads inputs with the same loaders: a gold CSV with a repeated column shows it
    (round 2's form driver, `inputs._form`)."""
    from devtools.hardening_cases.inputs import _form

    # the demo gold (the form's default predictions match it) with a second, empty readable_relations column
    csv.field_size_limit(2**27)
    with (ROOT / "data" / "chimera" / "eval.csv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([[*rows[0], "readable_relations"],
                                                    *([*r, "{}"] for r in rows[1:] if r)])
    gold = _write(work / "form" / "dup-rr.csv", buf.getvalue())
    return [Case2("r3 inputs: new-run form", "gold CSV with two readable_relations columns", None,
                  call=_form("chimera", "gold", gold), watch=[gold])]


def cases(work: Path, base_db: Path) -> list[Case2]:  # noqa: ARG001 (every case copies the base itself)
    return [*_chimera_gold_cases(work), *_log_cases(work), *_retrieval_cases(work), *_ideation_cases(work),
            *_litx_cases(work), *_cli_cases(work), *_judge_cases(work), *_form_cases(work)]
