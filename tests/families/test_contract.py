"""The family contract battery, in the spirit of scikit-learn's `check_estimator`: every check runs for every family
of the registry (`scoring.families.TASKS`) and for a fifth, test-only family (`devtools/toy_family.py`) that
plugs in by a registry entry alone, each on its own first demo run with its demo judge.

A check that does not apply to a family (no LLM judge, no symmetric kind, a judge that cannot be replayed) skips,
saying why; so `pytest -rs` lists what each family was not checked for.
"""

from __future__ import annotations

import inspect
import json
import math
import random
import shutil
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from audit.demo import DATA
from audit.outputs.stability import sample_decisions
from audit.rescoring import audit_run, run_options
from audit.review.reviews_io import import_reviews
from audit.runs import score_run
from audit.store.database import SqliteAnswerCache, open_db, run_row
from audit.views import decisions, load_view
from devtools.batch_round_trip import SPEC, batch_round_trip, scripted_endpoint
from scoring.errors import InputError, JudgeSpecError
from scoring.families import TASKS
from scoring.families.base import (
    RESERVED_KEYS,
    DemoRun,
    FamilyBase,
    InputSpec,
    Labels,
    LabelScheme,
    MetricCell,
    OptionSpec,
    TaskFamily,
    certainty,
)
from scoring.families.checks import DocCase, check_family
from scoring.judges.answer import MISSING
from tests.conftest import copy_of

TOY = ("toy", "devtools.toy_family:ToyTask")
NAMES = [*TASKS, TOY[0]]
MEMBERS = list(dict.fromkeys([n for n, _ in inspect.getmembers(TaskFamily) if not n.startswith("_")]
                             + list(TaskFamily.__annotations__)))


@pytest.fixture(scope="module", autouse=True)
def toy_registered(demo_template: Path) -> Iterator[None]:  # noqa: ARG001
    """The fifth family, known to the shell through the registry only (and gone again after this module). The
    session's demo template is built first, so the toy's demo run never enters it."""
    TASKS.register(*TOY)
    yield
    TASKS.unregister(TOY[0])


@pytest.fixture(scope="module", params=NAMES)
def name(request: pytest.FixtureRequest) -> str:
    return request.param


@dataclass
class Scored:
    """A family's first demo run, scored with its demo judge into a database the module shares."""

    fam: TaskFamily
    demo: DemoRun
    db: object
    row: dict
    decisions: list[dict]
    docs: list[dict]
    """payload, counts, outcome of every document in input order."""


@pytest.fixture(scope="module")
def scored(name: str, toy_registered: None, tmp_path_factory: pytest.TempPathFactory,  # noqa: ARG001
           request: pytest.FixtureRequest) -> Scored:
    fam = TASKS[name]
    demo = fam.demo_runs(DATA)[0]
    path = tmp_path_factory.mktemp(name) / "battery.db"
    if name != TOY[0] and not demo.reviews:  # in the demo template as scoring leaves it (no reviews imported)
        db = open_db(copy_of(request.getfixturevalue("demo_template"), path))
        row = run_row(db, demo.name)
    else:
        db = open_db(path)
        row = score_run(db, name, demo.inputs, demo.judge, run=demo.name)
    docs = [{"doc": r["doc_id"], "payload": json.loads(r["payload"]), "counts": json.loads(r["counts"]),
             "outcome": r["outcome"]}
            for r in db.query("SELECT doc_id, payload, counts, outcome FROM documents WHERE run_id = ? ORDER BY idx",
                              [row["id"]])]
    return Scored(fam, demo, db, row, list(decisions(db, demo.name)), docs)


def assert_close(a: object, b: object, where: str = "") -> None:
    """Equal nested JSON values, floats to 1e-9 (a sum's last digits depend on its order)."""
    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, int | float) and isinstance(b, int | float), where
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) or (math.isnan(a) and math.isnan(b)), (where, a, b)
    elif isinstance(a, Mapping):
        assert isinstance(b, Mapping) and set(a) == set(b), (where, sorted(set(a) ^ set(b or {})))
        for k in a:
            assert_close(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list | tuple):
        assert isinstance(b, list | tuple) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_close(x, y, f"{where}[{i}]")
    else:
        assert a == b, (where, a, b)


def doc_labels(decs: list[dict], choose=lambda d: d["judge"]) -> dict[str, dict[tuple, str]]:
    out: dict[str, dict[tuple, str]] = {}
    for d in decs:
        out.setdefault(d["doc"], {})[(d["kind"], d["type"], d["left"], d["right"])] = choose(d)
    return out


# ---------------------------------------------------------------------------------------------- declarations


def test_family_declares_every_member(name, scored):
    fam = scored.fam
    missing = [m for m in MEMBERS if not hasattr(fam, m)]
    assert not missing, f"{name} lacks {missing}"
    assert isinstance(fam, FamilyBase), "a family inherits the shared defaults (scoring.families.base.FamilyBase)"
    assert fam.name == name and fam.title
    assert fam.label_schemes and all(isinstance(s, LabelScheme) for s in fam.label_schemes.values())
    for kind, s in fam.label_schemes.items():
        assert s.labels and s.invalid not in s.labels, kind
        if s.scale == "binary":
            assert s.positive in s.labels and len(s.labels) == 2, kind
        assert set(s.mirror) <= set(s.labels) and all(s.swapped(s.swapped(x)) == x for x in s.labels), kind
        assert not s.mirror or s.symmetric, f"{kind}: only a symmetric kind has a mirrored label"
        taken = {k.lower() for k in s.keys.values()} & RESERVED_KEYS
        assert not taken, f"{kind}: label keys {sorted(taken)} are the queue's own or refused by Streamlit"
    assert fam.inputs and all(isinstance(i, InputSpec) for i in fam.inputs)
    assert all(isinstance(o, OptionSpec) and o.choices for o in fam.options)
    assert fam.judge_specs and fam.headline and all(isinstance(c, MetricCell) for c in fam.headline)
    assert isinstance(fam.describe_judge_log(), str) and fam.describe_judge_log()
    assert isinstance(fam.view_module, str)


def test_demo_run_scores_one_decision_per_question(name, scored):
    fam, row, decs = scored.fam, scored.row, scored.decisions
    json.dumps(row["original_metrics"])
    for cell in fam.headline:
        assert cell.value(row["original_metrics"]) is not None, cell.path
    assert decs, f"{name}: the demo run has no decision to review"
    keys = [(x["doc"], x["kind"], x["type"], x["left"], x["right"]) for x in decs]
    assert len(keys) == len(set(keys))
    for kind, s in fam.label_schemes.items():
        judged = {x["judge"] for x in decs if x["kind"] == kind}
        assert judged <= set(s.judge_labels), (kind, judged - set(s.judge_labels))
        if s.symmetric:  # (x, y) and (y, x) are one decision: never both stored
            sym = [(x["doc"], x["type"], frozenset((x["left"], x["right"]))) for x in decs if x["kind"] == kind]
            assert len(sym) == len(set(sym)), kind
    assert {d["outcome"] for d in scored.docs} <= set(fam.outcomes)
    assert set(fam.outcomes_hidden_first) < set(fam.outcomes)  # some outcome is shown first
    rows = fam.metric_rows(row["original_metrics"])
    assert rows and all(isinstance(r, dict) for r in rows)
    for d in decs:
        assert isinstance(fam.trivial(d), bool) and all(isinstance(v, str) for v in fam.judge_votes(d))


def test_a_decision_is_certain_only_where_the_judge_gave_the_certain_answer(scored):
    """Issue 40.1, for every family: `trivial` (what agreement reports apart and the queue may skip) holds only where
    the judge agreed with `certain_label`; the same decision with any other judge label is `contradicted`, never
    trivial (the queue serves it first). The judge's label is the input chosen to evade the rule."""
    fam = scored.fam
    for d in scored.decisions:
        answer = fam.certain_label(d)
        assert answer is None or answer in fam.label_schemes[d["kind"]].labels, (d["id"], answer)
        assert fam.trivial(d) == (answer is not None and d["judge"] == answer)
        assert certainty(fam, d) == (None if answer is None else "agreed" if d["judge"] == answer else "contradicted")
        if answer is None:
            continue
        for other in fam.label_schemes[d["kind"]].judge_labels:
            if other != answer:
                flipped = {**d, "judge": other}
                assert not fam.trivial(flipped) and certainty(fam, flipped) == "contradicted", (d["id"], other)


def test_take_all_strata_are_the_familys_own_strata(scored):
    """`sampling_take_all` names only strata it was given (the family's `sampling_stratum` names), from the names
    alone: on any subset of the demo's strata it is the same choice restricted to that subset."""
    fam = scored.fam
    by_doc: dict[str, list[dict]] = {}
    for d in scored.decisions:
        by_doc.setdefault(d["doc"], []).append(d)
    names = {fam.sampling_stratum(ds) for ds in by_doc.values()}
    take = fam.sampling_take_all(names)
    assert isinstance(take, set) and take <= names, sorted(take - names)
    assert all(isinstance(h, str) for h in take)
    rng = random.Random(7)
    for _ in range(5):
        sub = set(rng.sample(sorted(names), rng.randint(0, len(names))))
        assert fam.sampling_take_all(sub) == take & sub
    assert fam.sampling_take_all({"no such stratum " + uuid.uuid4().hex}) == set()


# ---------------------------------------------------------------------------------------------- aggregation


def test_aggregate_is_the_stored_fold_and_ignores_document_order(scored):
    fam, options, stored = scored.fam, run_options(scored.row), scored.row["original_metrics"]
    per_doc = [d["counts"] for d in scored.docs]
    assert_close(fam.aggregate(per_doc, options), stored)
    assert_close(fam.aggregate(lambda: per_doc, options, total=scored.row["original_counts"]), stored)
    rng = random.Random(21)
    for _ in range(3):
        shuffled = rng.sample(per_doc, len(per_doc))
        assert_close(fam.aggregate(shuffled, options), scored.row["original_metrics"])


def test_symmetric_kinds_ignore_orientation(scored):
    """Keying every decision of a symmetric kind (right, left), its label mirrored, gives the same counts; labels
    other than the judge's, so that the keys are read."""
    fam = scored.fam
    symmetric = {k: s for k, s in fam.label_schemes.items() if s.symmetric}
    if not symmetric:
        pytest.skip(f"{fam.name}: no symmetric decision kind")

    def other_label(d: dict) -> str:
        labels = fam.label_schemes[d["kind"]].labels
        return labels[(labels.index(d["judge"]) + 1) % len(labels)] if d["judge"] in labels else labels[0]

    by_doc = doc_labels(scored.decisions, other_label)
    changed = 0
    for doc in scored.docs:
        labels: Labels = by_doc.get(doc["doc"], {})
        if not any(k[0] in symmetric for k in labels):
            continue
        swapped = {((k, t, r, le) if k in symmetric else (k, t, le, r)):
                   (symmetric[k].swapped(lab) if k in symmetric else lab) for (k, t, le, r), lab in labels.items()}
        counts = fam.counts(doc["payload"], labels)
        assert fam.counts(doc["payload"], swapped) == counts, doc["doc"]
        changed += counts != doc["counts"]
    assert changed, "the labels chosen changed no document's counts: the check would pass on ignored keys"


def test_reviews_that_confirm_the_judge_leave_the_metrics_unchanged(scored, tmp_path):
    """Every decision reviewed with the judge's own label (through a reviews file) => audited == original."""
    fam, db = scored.fam, scored.db
    run = f"{scored.demo.name}-confirmed"
    row = score_run(db, fam.name, scored.demo.inputs, scored.demo.judge, run=run)
    lines = [{"uid": uuid.uuid4().hex, "doc": d["doc"], "kind": d["kind"], "type": d["type"], "left": d["left"],
              "right": d["right"], "reviewer": "battery", "label": d["judge"], "role": "reviewer", "note": None,
              "blind": False, "created": "2026-01-01T00:00:00+00:00"}
             for d in decisions(db, run) if d["judge"] in fam.label_schemes[d["kind"]].labels]
    assert lines, f"{fam.name}: no decision carries a label a reviewer can give"
    path = tmp_path / "confirm.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    assert import_reviews(db, run, path)["imported"] == len(lines)
    for rebuild in (False, True):
        a = audit_run(db, run, rebuild=rebuild)
        assert a.review_counts["reviewed"] == len(lines) and a.review_counts["overruled"] == 0
        assert_close(a.metrics, row["original_metrics"], "metrics")
        assert_close(a.counts, row["original_counts"], "counts")
        assert not a.changed_docs
    assert run_row(db, run)["n_decisions"] == row["n_decisions"], "confirming the judge added decisions"


# ---------------------------------------------------------------------------------------------- inputs


def _corrupt(src: Path, dst: Path) -> int | None:
    """A copy of `src` with its second non-blank line cut in half; the line number (None: a JSON document
    whose error line the parser chooses)."""
    lines = src.read_text(encoding="utf-8").split("\n")
    if src.suffix == ".jsonl":
        n = [i for i, x in enumerate(lines) if x.strip()][1]
        lines[n] = lines[n][: len(lines[n]) // 2]
        dst.write_text("\n".join(lines), encoding="utf-8")
        return n + 1
    text = "\n".join(lines)
    dst.write_text(text[: len(text) // 2], encoding="utf-8")
    return None


def test_bad_input_names_its_file_and_line(scored, tmp_path):
    fam, inputs = scored.fam, dict(scored.demo.inputs)
    for spec in fam.inputs:
        src = Path(inputs.get(spec.name, ""))
        if src.is_file() and src.suffix == ".jsonl":
            bad = tmp_path / src.name
            line = _corrupt(src, bad)
            inputs[spec.name] = str(bad)
            break
        if spec.folder and src.is_dir() and sorted(src.glob("*.json")):
            folder = tmp_path / src.name
            shutil.copytree(src, folder)
            bad = sorted(folder.glob("*.json"))[0]
            line = _corrupt(bad, bad)
            inputs[spec.name] = str(folder)
            break
    else:
        pytest.fail(f"{fam.name}: the battery finds no JSON-lines file or folder of JSON files among the demo "
                    "inputs to corrupt; teach `_corrupt` its format")
    with pytest.raises(InputError) as e:
        fam.load(inputs)
    assert Path(e.value.path) == bad, (e.value.path, bad)
    assert e.value.line is not None and (line is None or e.value.line == line), (e.value.line, line)
    assert str(e.value).startswith(f"{bad}:{e.value.line}: ")


# ---------------------------------------------------------------------------------------------- judges


def test_judge_log_replays_to_the_same_decisions_and_metrics(scored, tmp_path):
    fam = scored.fam
    log = tmp_path / "judge_log.jsonl"
    lines = fam.judge_log(scored.decisions)
    assert lines and all(isinstance(x, dict) for x in lines)
    log.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    try:
        fam.make_judge(f"replay:{log}")
    except JudgeSpecError as e:
        pytest.skip(f"{fam.name}: its judge cannot be replayed ({e})")
    row = score_run(scored.db, fam.name, scored.demo.inputs, f"replay:{log}", run=f"{scored.demo.name}-replayed")
    replayed = decisions(scored.db, row["name"])
    key = lambda d: (d["doc"], d["kind"], d["type"], d["left"], d["right"], d["judge"])  # noqa: E731
    assert sorted(map(key, replayed)) == sorted(map(key, scored.decisions))
    assert_close(row["original_metrics"], scored.row["original_metrics"])
    assert_close(row["original_counts"], scored.row["original_counts"])


def _has_llm_judge(fam: TaskFamily) -> bool:
    with scripted_endpoint():
        try:
            return fam.make_judge(SPEC).batchable
        except JudgeSpecError:
            return False


def test_judge_batch_round_trip_sends_no_request(name, tmp_path):
    result = batch_round_trip(name, tmp_path)
    if result is None:
        pytest.skip(f"{name}: its judge asks no model; judge-batch export refuses it, saying so (checked)")
    assert result["imported"] == result["exported"] > 0


def test_questions_for_re_ask_to_the_stored_labels(scored, tmp_path):
    """Re-asking `questions_for` of every stored decision, answered by the stored answers (the cache of a run
    scored by an LLM judge), gives the stored label; the questions are exactly those scoring asked."""
    fam = scored.fam
    payloads = {d["doc"]: d["payload"] for d in scored.docs}
    asked = [fam.questions_for(payloads[d["doc"]], d) for d in scored.decisions]
    if not _has_llm_judge(fam):
        assert not any(asked), f"{fam.name}: questions_for gives questions, but no LLM judge is accepted"
        pytest.skip(f"{fam.name}: no LLM answers its decisions (questions_for is [] for every one, checked)")
    assert all(asked), f"{fam.name}: an LLM family has a decision without questions"
    db = open_db(tmp_path / "llm.db")
    with scripted_endpoint():
        row = score_run(db, fam.name, scored.demo.inputs, SPEC, run="llm")
        judge = fam.make_judge(SPEC)
        cache = SqliteAnswerCache(db, SPEC, row["judge_identity"])
        labelled = 0
        for d, questions in sample_decisions(db, "llm", 0):
            keys = [judge.cache_key(q) for q in questions]
            stored = cache.get_many(keys)
            assert set(keys) <= set(stored), (d, "a re-asked question is not one scoring asked")
            values = [stored[k].value for k in keys]
            assert MISSING not in values
            label = fam.label_from_answers(d, values)
            assert label is not None or len(values) > 1, (d, "one answer and no label")
            if label is not None:
                assert label == d["judge_label"], (d, values)
                labelled += 1
    assert labelled, f"{fam.name}: no decision's label could be rebuilt from its answers"


# ---------------------------------------------------------------------------------------------- dashboard


def test_view_module_provides_what_the_pages_call(scored):
    """The view `ui.families.view` finds is the one the registry names and passes the view battery
    (`ui.families.checks`: names, types, cards sighted and blind, document view, report panel), the toy's too."""
    from ui.families import view
    from ui.families.checks import check_view

    mod = view(scored.fam.name)
    assert mod.__name__ == scored.fam.view_module
    assert check_view(mod, load_view(scored.db, scored.demo.name)) == []


# ---------------------------------------------------------------------------------------------- the fifth family


def test_the_toy_family_scores_from_the_cli(toy_registered, tmp_path, capsys):  # noqa: ARG001
    """The registry entry is all the CLI needs too."""
    from audit.cli import main

    demo = TASKS["toy"].demo_runs(DATA)[0]
    db = tmp_path / "toy.db"
    assert main(["--db", str(db), "score", "toy", "--gold", demo.inputs["gold"], "--pred", demo.inputs["pred"],
                 "--run", "toy-cli"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    gold = [json.loads(x) for x in Path(demo.inputs["gold"]).read_text().splitlines()]
    pred = {r["id"]: r["answer"] for r in map(json.loads, Path(demo.inputs["pred"]).read_text().splitlines())}
    correct = sum(pred.get(g["id"], "").strip() == g["answer"] for g in gold)
    assert metrics["accuracy"] == correct / len(gold) and metrics["coverage"] == len(pred) / len(gold)
    assert run_row(open_db(db), "toy-cli")["task"] == "toy"


# ---------------------------------------------------------------------------------------------- the library battery


def doc_cases(scored: Scored) -> list[DocCase]:
    """The demo run's documents as the library battery takes them: payload and judge-side decisions."""
    by_doc: dict[str, list[dict]] = {}
    for d in scored.decisions:
        by_doc.setdefault(d["doc"], []).append({k: d[k] for k in ("kind", "type", "left", "right", "judge",
                                                                   "detail")})
    return [DocCase(d["doc"], d["payload"], by_doc.get(d["doc"], [])) for d in scored.docs]


def test_the_library_battery_passes(scored):
    """`scoring.families.checks.check_family`, what a family author runs, finds nothing on every family."""
    assert check_family(scored.fam, doc_cases(scored), run_options(scored.row)) == []


def test_the_judge_labels_give_the_stored_counts(scored):
    """The battery's documents are the run's: their judge labels give each document's stored counts."""
    fam = scored.fam
    for case, doc in zip(doc_cases(scored), scored.docs, strict=True):
        assert_close(fam.counts(case.payload, case.labels()), doc["counts"], case.doc)
