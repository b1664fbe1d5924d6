"""LitXBench question keys (#40.9, the first start's CPU): keyed once per document, the same keys as hashing each
decision's content on its own, and without spelling the document's experiments once per decision."""

from __future__ import annotations

import copy
import json

import pytest

from audit.store.database import open_db, run_row
from scoring.families import TASKS
from scoring.families.base import content_hash
from scoring.families.litxbench import review
from scoring.families.litxbench.model import KIND_NUMBER
from tests.conftest import copy_of

RUN = "demo-litxbench-process-perturb"


def _reference_key(payload: dict, d: dict) -> str:
    """The key as the family defined it before keys were batched: each decision's content hashed on its own."""
    if d["kind"] == KIND_NUMBER:
        return content_hash([d["kind"], d["type"], d["right"], review.content_at(payload["pred"], d["left"])])
    return content_hash([d["kind"], d["type"], review.content_at(payload["pred"], review.path_of(d["left"])),
                         review.content_at(payload["gold"], review.path_of(d["right"]))])


@pytest.fixture(scope="module")
def stored(tmp_path_factory, demo_template) -> tuple[dict[str, dict], dict[str, list[dict]]]:
    """The demo run's payloads and decisions (kind, type, left, right) by document, as scoring stores them."""
    db = open_db(copy_of(demo_template, tmp_path_factory.mktemp("qk") / "q.db"))
    run_id = run_row(db, RUN)["id"]
    payloads = {r["doc_id"]: json.loads(r["payload"])
                for r in db.query("SELECT doc_id, payload FROM documents WHERE run_id = ?", [run_id])}
    asked: dict[str, list[dict]] = {}
    for r in db.query("SELECT doc_id, kind, type, left, right FROM decisions WHERE run_id = ? ORDER BY id",
                      [run_id]):
        asked.setdefault(r.pop("doc_id"), []).append(r)
    return payloads, asked


def test_batched_keys_are_the_per_decision_keys(stored) -> None:
    fam = TASKS["litxbench"]
    payloads, asked = stored
    n = 0
    for doc, decisions in asked.items():
        payload = payloads[doc]
        want = [_reference_key(payload, d) for d in decisions]
        assert fam.question_keys(payload, decisions) == want, doc
        assert [fam.question_key(copy.deepcopy(payload), d) for d in decisions[:5]] == want[:5]
        n += len(decisions)
    assert n > 3000


def test_keys_tell_identical_elements_and_dead_paths_apart(stored) -> None:
    """The cache is by element identity: two equal materials at different places keep their own counts, a path
    naming nothing keys as the path, and the batch agrees with the reference on each."""
    fam = TASKS["litxbench"]
    payloads, asked = stored
    doc, decisions = next((k, v) for k, v in asked.items() if any(d["kind"] != KIND_NUMBER for d in v))
    payload = copy.deepcopy(payloads[doc])
    first = payload["pred"][0]["output_materials"]
    first.append(copy.deepcopy(first[0]))  # an identical twin: content_at counts it as the second of its kind
    twin = f"experiments[0].output_materials[{len(first) - 1}]"
    pair = next(d for d in decisions if d["kind"] != KIND_NUMBER)
    probes = [pair, {**pair, "left": twin}, {**pair, "left": "experiments[0].output_materials[0]"},
              {**pair, "left": "experiments[99].output_materials[0]"}, {**pair, "right": "no.such[3].path"}]
    keys = fam.question_keys(payload, probes)
    assert keys == [_reference_key(payload, d) for d in probes]
    assert keys[1] != keys[2]  # the twin is another question than the material it copies


def test_keying_a_document_spells_its_content_a_bounded_number_of_times(stored, monkeypatch) -> None:
    """Spelling each decision's content anew encoded ~70x the run's payloads as JSON (most of the first start's
    CPU time); spelling each element once, about their size."""
    fam = TASKS["litxbench"]
    payloads, asked = stored
    encoded = 0
    dumps = json.dumps

    def counting(*args, **kwargs) -> str:
        nonlocal encoded
        text = dumps(*args, **kwargs)
        encoded += len(text)
        return text

    monkeypatch.setattr(json, "dumps", counting)
    for doc, decisions in asked.items():
        fam.question_keys(payloads[doc], decisions)
    monkeypatch.setattr(json, "dumps", dumps)
    size = sum(len(json.dumps(p)) for p in payloads.values())
    assert encoded < 10 * size, (encoded, size)
