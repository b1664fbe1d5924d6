"""The shortcuts that make scoring and reviews fast compute what the plain computation does.

- `hallucination.find` (str.find + digit checks) is the official regex search `(?<!\\d)V(?!\\d)`;
- a corrected-tolerance material pair is the official one only when `tolerance_blind` says every tolerance
  comparison agrees, otherwise it is computed afresh: checked against `material_cost` run directly, on predictions
  whose values are nudged so that the two tolerances disagree;
- the per-document caches (number check, baseline pairs, parsed payload) give what recomputing gives.
"""

from __future__ import annotations

import copy
import json
import random
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.families.litxbench import hallucination, review
from scoring.families.litxbench.family import LitXBenchTask
from scoring.families.litxbench.load import parse_paper
from scoring.families.litxbench.match import Constraints, MaterialPair, material_cost, tolerance_blind, values_match
from scoring.families.litxbench.model import FOUND, KIND_NUMBER, NOT_FOUND
from scoring.families.litxbench.report import paper_details
from scoring.families.litxbench.score import Solver, paper_counts
from scoring.families.litxbench.units import parse_unit

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "data" / "litxbench"
TASK = LitXBenchTask()
RELATIVE = Constraints(relative=True)


# ---------------------------------------------------------------- number search


def _regex_find(variant: str, text: str) -> int | None:
    m = re.search(rf"(?<!\d){re.escape(variant)}(?!\d)", text)
    return m.start() if m else None


def test_find_hand_cases():
    assert hallucination.find("450", "at 450 °C") == 3
    assert hallucination.find("450", "1450 and 4500") is None
    assert hallucination.find("450", "1.450") == 2  # a point is not a digit
    assert hallucination.find("11", "111 11") == 4
    assert hallucination.find("1.1", "11.1.1") == 3  # overlapping occurrences are all tried
    assert hallucination.find("5", "٣5") is None  # an Arabic-Indic digit is a digit for \d
    assert hallucination.find("5", "5") == 0
    assert hallucination.find("-3", "x-3y") == 1


@settings(max_examples=400, derandomize=True, deadline=None)
@given(st.text(alphabet="0123456789.-e ٣x", max_size=40), st.text(alphabet="0123456789.-e", min_size=1, max_size=4))
def test_find_is_the_regex_search(text, variant):
    assert hallucination.find(variant, text) == _regex_find(variant, text)


def test_first_position_is_the_first_spelling_that_occurs():
    # 0.1 + 0.2 is spelled "0.3" then "0.30000000000000004": the first spelling that occurs wins, wherever it is
    assert hallucination.first_at(0.1 + 0.2, "0.30000000000000004 and 0.3") == 24
    assert hallucination.first_at(0.1 + 0.2, "0.30000000000000004") == 0
    assert hallucination.first_at(3.0, "30.0 then 3.0") == 10
    assert hallucination.first_at(0.5, "0.50") is None
    assert hallucination.in_text(0.5, "(0.5)")


# ---------------------------------------------------------------- corrected tolerance


def test_tolerance_blind_hand_cases():
    c, k, mpa = parse_unit("degree_Celsius"), parse_unit("kelvin"), parse_unit("megapascal")
    out, blind = tolerance_blind(lambda: values_match(25, c, 298, k))
    assert out is False and blind is False  # 298 K is 25 °C only under the relative tolerance
    out, blind = tolerance_blind(lambda: values_match(100, mpa, 100, mpa) and not values_match(100, mpa, 300, mpa))
    assert out is True and blind is True
    out, blind = tolerance_blind(lambda: values_match(100, mpa, 100.05, mpa))
    assert out is False and blind is False
    assert tolerance_blind(lambda: 7) == (7, True)  # no comparison made


def _nudged(raw: object, rng: random.Random) -> object:
    """Every third value x (1 + 5e-4): absolute 1e-6 fails, relative 1e-3 passes; a few x (1 + 5e-3): both fail."""
    raw = copy.deepcopy(raw)

    def walk(o: object) -> None:
        if isinstance(o, dict):
            v = o.get("value")
            if "unit" in o and isinstance(v, int | float) and not isinstance(v, bool):
                r = rng.random()
                if r < 0.3:
                    o["value"] = v * (1 + 5e-4)
                elif r < 0.4:
                    o["value"] = v * (1 + 5e-3)
            for x in o.values():
                walk(x)
        elif isinstance(o, list):
            for x in o:
                walk(x)

    walk(raw)
    return raw


@pytest.fixture(scope="module")
def nudged_papers():
    rng = random.Random(7)
    out = []
    for f in sorted((DATA / "pred_drop_meas30").glob("*.json")):
        gold = parse_paper(json.loads((DATA / "gold" / f.name).read_text()), f.stem, "gold")
        pred = parse_paper(_nudged(json.loads(f.read_text()), rng), f.stem, "pred")
        out.append((gold, pred))
    return out


def _summary(mp: MaterialPair) -> tuple:
    """Everything a material pair holds that scoring or decisions read."""
    def items(im):  # noqa: ANN001, ANN202
        return (im.pairs, im.unmatched_gold, im.unmatched_pred, im.dropped, sorted(im.forced), im.scores.tolist())
    cm = mp.configs
    return (mp.cost, mp.alignment.distance, mp.alignment.steps, items(mp.items),
            [(a, b, cp.cost, cp.breakdown, items(cp.items)) for a, b, cp in cm.pairs], cm.unmatched_gold,
            cm.unmatched_pred, cm.dropped,
            sorted((k, cp.cost, items(cp.items)) for k, cp in cm.candidates.items()))


def test_corrected_pairs_equal_a_direct_computation(nudged_papers):
    blind_pairs = sensitive_pairs = papers_that_differ = 0
    for gold, pred in nudged_papers:
        solver = Solver(gold, pred)
        official = solver.solve()
        corrected = solver.solve(RELATIVE)
        for i, g in enumerate(gold.materials):
            for j, p in enumerate(pred.materials):
                direct = material_cost(g, p, RELATIVE)
                assert _summary(solver.pair(i, j, RELATIVE)) == _summary(direct), (gold.paper_id, i, j)
                same = _summary(direct) == _summary(material_cost(g, p))
                blind = solver._blind[(i, j, Constraints())]
                assert not blind or same  # a blind pair is the same pair under both tolerances
                blind_pairs += blind
                sensitive_pairs += not blind
        fresh = Solver(gold, pred).solve(RELATIVE)  # the corrected solve first, with nothing cached
        assert paper_details(fresh) == paper_details(corrected)
        assert np.array_equal(fresh.cost, corrected.cost)
        assert paper_counts(fresh, True) == paper_counts(corrected, True)
        papers_that_differ += paper_counts(corrected, True) != paper_counts(official)
    assert blind_pairs > 100 and sensitive_pairs > 20 and papers_that_differ >= 5  # both branches are exercised


def test_corrected_pairs_under_constraints(nudged_papers):
    checked = 0
    for gold, pred in nudged_papers[:8]:
        solver = Solver(gold, pred)
        base = solver.solve()
        for i, j, mp in base.matched[:3]:
            g, p = gold.materials[i], pred.materials[j]
            if not mp.items.pairs:
                continue
            a, b, _ = mp.items.pairs[0]
            forbid = frozenset({(mp.items.gold[a].path, mp.items.pred[b].path)})
            for cons in (Constraints(forbidden=forbid), Constraints(forbidden=forbid, relative=True)):
                assert _summary(solver.pair(i, j, cons)) == _summary(material_cost(g, p, cons.within(g.path, p.path)))
                checked += 1
    assert checked > 10


# ---------------------------------------------------------------- document caches


@pytest.fixture(scope="module")
def loaded():
    return TASK.load({"gold": str(DATA / "gold"), "pred": str(DATA / "pred_drop_meas30"),
                      "text": str(DATA / "papers")})


def test_number_counts_follow_the_check_and_the_labels(loaded):
    payload = json.loads(json.dumps(TASK.payload(loaded.docs[3])))
    doc = review.doc_from_payload(payload)
    checked = hallucination.check(doc.pred, doc.text)
    plain = hallucination.summary(checked)
    c = review.number_counts(doc, {})
    assert (c["total_numbers"], c["numbers_not_found"]) == (plain["total_numbers"], plain["numbers_not_found"])
    n, found = next((n, f) for n, f in checked if f)
    key = (KIND_NUMBER, n.source, n.path, review.number_text(n.value))
    flipped = review.number_counts(doc, {key: NOT_FOUND})
    assert flipped["numbers_not_found"] == c["numbers_not_found"] + 1
    assert review.number_counts(doc, {key: FOUND}) == c
    at = {d.left: d.detail["at"] for d in review.number_decisions(doc)}
    assert at[n.path] == _regex_first(n.value, doc.text)


def _regex_first(value: float | int, text: str) -> int | None:
    for v in hallucination.variants(value):
        at = _regex_find(v, text)
        if at is not None:
            return at
    return None


def test_a_payload_is_parsed_once_and_told_apart_by_content(loaded):
    payload = TASK.payload(loaded.docs[0])
    doc = review.doc_from_payload(payload)
    assert review.doc_from_payload(json.loads(json.dumps(payload))) is doc
    other_text = {**payload, "text": (payload["text"] or "") + " 123456789"}
    assert review.doc_from_payload(other_text) is not doc
    no_text = review.doc_from_payload({**payload, "text": None})
    assert no_text is not doc and review.number_counts(no_text, {})["numbers_not_found"] == 0


def test_baseline_scopes_match_a_fresh_solve(loaded):
    """Constraints from labels are read against cached baseline pairs; a fresh document must give the same."""
    payload = TASK.payload(loaded.docs[5])
    decisions = review.decisions(review.doc_from_payload(payload))
    labels = {(d.kind, d.type, d.left, d.right): d.judge for d in decisions}
    flipped = {k: ("no-match" if v == "match" else "match") for k, v in list(labels.items())[:40] if v != FOUND
               and v != NOT_FOUND}
    labels.update(flipped)
    cached = review.constraints_from(review.doc_from_payload(payload), labels)
    review._DOCS.clear()
    fresh = review.constraints_from(review.doc_from_payload(payload), labels)
    assert cached == fresh and (cached.forced or cached.forbidden)
