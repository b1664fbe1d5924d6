"""The strict 1-to-1 variant (scoring/families/chimera/strict.py): chimera.md §4.4's worked examples by hand, the
invariants that hold between it and the paper code (hypothesis), equality on the perfect prediction, and its place
beside (never instead of) the paper-code numbers in the metrics JSON and rows."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.families.chimera import scorer as chimera
from scoring.families.chimera import strict
from scoring.families.chimera.family import ChimeraTask
from scoring.families.chimera.scorer import ChimeraDoc, ChimeraPrediction, Relation
from scoring.judges.local import ExactJudge
from tests.conftest import GOLD, PRED_PERFECT

CE = "comb-element"
TASK = ChimeraTask()


def doc(*rels: Relation) -> ChimeraDoc:
    return ChimeraDoc("p1", "text", "relevant" if rels else "irrelevant", rels, (), 2)


def pred(*rels: Relation) -> ChimeraPrediction:
    return ChimeraPrediction("p1", rels, 1)


def comb(*spans: str) -> Relation:
    return Relation("combination", tuple((CE, s) for s in spans))


def counts(d: ChimeraDoc, p: ChimeraPrediction, matches: set[tuple[str, str]]) -> dict:
    return chimera.doc_counts(d, p, lambda t, pv, gv: (pv, gv) in matches)


def triple(c: dict) -> tuple[int, int, int]:
    return c["tp"], c["fp"], c["fn"]


def both(c: dict, section: str, t: str) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    return triple(c[section][t]), triple(c[strict.STRICT][section][t])


def prf(tp: int, fp: int, fn: int) -> tuple[float, float]:
    return tp / (tp + fp) if tp + fp else 0.0, tp / (tp + fn) if tp + fn else 0.0


# ---------------------------------------------------------------- chimera.md §4.4 by hand


def test_two_predictions_hitting_one_gold_cost_precision_only_in_strict():
    # gold {A,B}, pred {A1,A2}, both match only A: code tp=1 fp=0 fn=1 (P 1.00, R 0.50); 1-to-1 tp=1 fp=1 fn=1
    c = counts(doc(comb("A", "B")), pred(comb("A1", "A2")), {("A1", "A"), ("A2", "A")})
    for section, t in (("relations", "combination"), ("entities", CE)):
        paper, one = both(c, section, t)
        assert paper == (1, 0, 1) and one == (1, 1, 1)
        assert prf(*paper) == (1.0, 0.5) and prf(*one) == (0.5, 0.5)
    assert c[strict.STRICT]["entities"][CE]["pred_om"] == 0 and c["entities"][CE]["pred_om"] == 1


def test_one_prediction_matching_two_gold_costs_recall_only_in_strict():
    # gold {A,B}, pred {X}, X matches both: code P 1.00 R 1.00 (gold over-matching 1); 1-to-1 R 0.50
    c = counts(doc(comb("A", "B")), pred(comb("X")), {("X", "A"), ("X", "B")})
    for section, t in (("relations", "combination"), ("entities", CE)):
        paper, one = both(c, section, t)
        assert paper == (1, 0, 0) and one == (1, 0, 1)
        assert prf(*paper) == (1.0, 1.0) and prf(*one) == (1.0, 0.5)


def test_partial_match_without_over_matching_is_the_same_in_both():
    # gold {A,B,C}, pred {A1,D}: tp=1 fp=1 fn=2 in both (P 0.50, R 0.33)
    c = counts(doc(comb("A", "B", "C")), pred(comb("A1", "D")), {("A1", "A")})
    for section, t in (("relations", "combination"), ("entities", CE)):
        paper, one = both(c, section, t)
        assert paper == one == (1, 1, 2)


def test_type_mismatch_is_all_errors_in_both():
    c = counts(doc(comb("A", "B")), pred(Relation("inspiration", (("inspiration-src", "s"),
                                                                  ("inspiration-target", "t")))), set())
    s = c[strict.STRICT]
    assert triple(s["relations"]["inspiration"]) == triple(c["relations"]["inspiration"]) == (0, 2, 0)
    assert triple(s["relations"]["combination"]) == triple(c["relations"]["combination"]) == (0, 0, 2)
    assert triple(s["entities"][CE]) == (0, 0, 2) and triple(s["entities"]["inspiration-src"]) == (0, 1, 0)


def test_strict_precision_can_be_higher_when_the_first_match_wastes_a_gold_entity():
    # P1 matches G1 only, P2 matches G1 and G2 (first match G1), P3 nothing. Code: tp 1 (G1 once), fp 1 (P3),
    # fn 0 -> P 0.50. Maximum matching P1-G1, P2-G2: tp 2, fp 1 -> P 0.67. So "strict <= code" is not general.
    c = counts(doc(comb("G1", "G2")), pred(comb("P1", "P2", "P3")), {("P1", "G1"), ("P2", "G1"), ("P2", "G2")})
    paper, one = both(c, "entities", CE)
    assert paper == (1, 1, 0) and one == (2, 1, 0)
    assert prf(*one)[0] == pytest.approx(2 / 3) and prf(*paper)[0] == 0.5


def test_relations_align_one_to_one():
    # Two predicted combinations both fully matching the one gold combination: the code aligns both with it
    # (tp 4, fp 0: double credit); strict aligns one (tp 2) and the other's entities are false positives.
    m = {("A1", "A"), ("B1", "B"), ("A2", "A"), ("B2", "B")}
    c = counts(doc(comb("A", "B")), pred(comb("A1", "B1"), comb("A2", "B2")), m)
    paper, one = both(c, "relations", "combination")
    assert paper == (4, 0, 0) and one == (2, 2, 0)


def test_strict_recall_can_be_higher_when_a_repeated_prediction_matches_two_gold_entities():
    # pred {A, A} (one span twice), A matches gold c and d of {a, b, c, d}. Code: both A take c (tp 1), the gold
    # pass finds c and d (fn 2) -> R 1/3; maximum matching A-c, A-d: tp 2, fn 2 -> R 1/2.
    c = counts(doc(comb("a", "b", "c", "d")), pred(comb("A", "A")), {("A", "c"), ("A", "d")})
    paper, one = both(c, "entities", CE)
    assert paper == (1, 0, 2) and one == (2, 0, 2)
    assert prf(*paper)[1] == pytest.approx(1 / 3) and prf(*one)[1] == 0.5


def test_a_span_repeated_in_one_relation_is_one_relation_entity_but_two_flat_entities():
    c = counts(doc(comb("A", "B")), pred(comb("A", "A")), {("A", "A")})
    s = c[strict.STRICT]
    assert s["relations"]["combination"]["total_pred_ent"] == c["relations"]["combination"]["total_pred_ent"] == 1
    assert triple(s["relations"]["combination"]) == triple(c["relations"]["combination"]) == (1, 0, 1)
    assert triple(c["entities"][CE]) == (1, 0, 1) and triple(s["entities"][CE]) == (1, 1, 1)


# ---------------------------------------------------------------- invariants (hypothesis)

SPANS = ("a", "b", "c", "d")


@st.composite
def cases(draw, one_gold_per_pred: bool = False, one_pred_per_gold: bool = False):
    """One combination per side (every published pipeline), gold spans distinct, predicted ones may repeat, and a
    random match relation; optionally each prediction (or each gold entity) has at most one match. With one
    match per gold entity the predictions are distinct too, or a repeated span would give that gold entity a
    match per repetition in the flat entity score."""
    gold = draw(st.lists(st.sampled_from(SPANS), min_size=1, max_size=4, unique=True))
    preds = draw(st.lists(st.sampled_from([s.upper() for s in SPANS]), min_size=1, max_size=4,
                          unique=one_pred_per_gold))
    pairs = [(p, g) for p in dict.fromkeys(preds) for g in gold]
    if one_gold_per_pred:
        m = {(p, g) for p in dict.fromkeys(preds) if (g := draw(st.sampled_from([None, *gold]))) is not None}
    elif one_pred_per_gold:
        m = {(p, g) for g in gold if (p := draw(st.sampled_from([None, *dict.fromkeys(preds)]))) is not None}
    else:
        m = {pair for pair in pairs if draw(st.booleans())}
    return doc(comb(*gold)), pred(comb(*preds)), m


def _sections(c: dict):
    for section, t in (("entities", CE), ("relations", "combination")):
        yield section, c[section][t], c[strict.STRICT][section][t]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(cases())
def test_strict_and_code_agree_without_over_matching_and_strict_counts_are_never_smaller(case):
    c = counts(*case)
    for section, paper, one in _sections(c):
        assert one["total_pred_ent"] == paper["total_pred_ent"] and one["total_gold_ent"] == paper["total_gold_ent"]
        assert one["tp"] + one["fp"] == one["total_pred_ent"] and one["tp"] + one["fn"] == one["total_gold_ent"]
        assert one["tp"] >= paper["tp"] and one["fp"] >= paper["fp"] and one["fn"] >= paper["fn"], section
        if paper["pred_om"] == 0 and paper["gold_om"] == 0:
            assert triple(one) == triple(paper), section


@settings(max_examples=300, deadline=None, derandomize=True)
@given(cases(one_gold_per_pred=True))
def test_strict_precision_is_lower_whenever_predictions_over_match(case):
    c = counts(*case)
    for section, paper, one in _sections(c):
        p_paper, p_one = prf(*triple(paper))[0], prf(*triple(one))[0]
        if paper["pred_om"] > 0:
            assert p_one < p_paper, section
        else:
            assert p_one == p_paper, section


@settings(max_examples=300, deadline=None, derandomize=True)
@given(cases(one_pred_per_gold=True))
def test_strict_recall_is_lower_whenever_gold_entities_over_match(case):
    c = counts(*case)
    for section, paper, one in _sections(c):
        r_paper, r_one = prf(*triple(paper))[1], prf(*triple(one))[1]
        if paper["gold_om"] > 0:
            assert r_one < r_paper, section
        else:
            assert r_one == r_paper, section


# ---------------------------------------------------------------- the real perfect prediction, the metrics JSON


@pytest.fixture(scope="module")
def perfect():
    loaded = TASK.load({"gold": str(GOLD), "pred": str(PRED_PERFECT)})
    decisions, _ = TASK.decide(loaded, ExactJudge(), None, None)
    labels: dict[str, dict] = {}
    for d in decisions:
        labels.setdefault(d.doc, {})[(d.kind, d.type, d.left, d.right)] = d.judge
    per_doc = [(TASK.doc_id(x), TASK.counts(TASK.payload(x), labels.get(TASK.doc_id(x), {}))) for x in loaded.docs]
    total: dict = {}
    from scoring.families.base import add_nested

    for _, c in per_doc:
        add_nested(total, c)
    return per_doc, TASK.metrics(total)


def test_both_variants_are_equal_on_the_perfect_prediction(perfect):
    per_doc, m = perfect
    for section in strict.STRICT_SECTIONS:
        for t, v in m[section].items():
            for k in ("precision", "recall", "f1", "tp", "fp", "fn"):
                assert m[strict.STRICT][section][t].get(k) == v.get(k), (section, t, k)
    assert m[strict.STRICT]["entities"]["comb-element"]["tp"] == 168  # chimera.md §1: eval.csv entity counts
    assert m[strict.STRICT]["relations"]["avg"]["f1"] == 1.0
    assert strict.differing_documents(per_doc) == []


def test_strict_rows_come_after_the_paper_rows_and_never_replace_them(perfect):
    _, m = perfect
    rows = TASK.metric_rows(m)
    sections = list(dict.fromkeys(r["section"] for r in rows))
    assert sections == ["classification", "entities", "relations", "entities (strict 1-to-1)",
                        "relations (strict 1-to-1)"]
    paper_only = {k: v for k, v in m.items() if not k.startswith(strict.STRICT)}
    assert rows[:len(TASK.metric_rows(paper_only))] == TASK.metric_rows(paper_only)


def test_counts_stored_before_the_variant_existed_give_no_strict_numbers():
    c = counts(doc(comb("A", "B")), pred(comb("A1", "A2")), {("A1", "A"), ("A2", "A")})
    old = {k: v for k, v in c.items() if k != strict.STRICT}
    m = TASK.metrics(old)
    assert strict.STRICT not in m and "re-score" in m[f"{strict.STRICT}_unavailable"].replace("score the run again",
                                                                                             "re-score")
    assert all("strict" not in r["section"] for r in TASK.metric_rows(m))
    assert strict.STRICT in TASK.metrics(c)


def test_a_review_moves_both_variants():
    d, p = doc(comb("A", "B")), pred(comb("A1", "A2"))
    payload = chimera.doc_to_json(d, p)
    labels = {(chimera.KIND, CE, "A1", "A"): "match", (chimera.KIND, CE, "A2", "A"): "match"}
    before = TASK.counts(payload, labels)
    after = TASK.counts(payload, labels | {(chimera.KIND, CE, "A2", "A"): "no-match"})
    assert both(before, "entities", CE) == ((1, 0, 1), (1, 1, 1))
    assert both(after, "entities", CE) == ((1, 1, 1), (1, 1, 1))


def test_differing_documents_lists_only_documents_whose_score_changes():
    over = counts(doc(comb("A", "B")), pred(comb("A1", "A2")), {("A1", "A"), ("A2", "A")})
    same = counts(doc(comb("A", "B", "C")), pred(comb("A1", "D")), {("A1", "A")})
    out = strict.differing_documents([("over", over), ("same", same), ("old", {"entities": {}})])
    assert [x["doc"] for x in out] == ["over"]
    assert out[0]["entities"]["paper"]["precision"] == 1.0 and out[0]["entities"]["strict"]["precision"] == 0.5
    assert {(t["section"], t["type"], t["paper"], t["strict"], t["pred_om"]) for t in out[0]["types"]} == {
        ("entities", CE, (1, 0, 1), (1, 1, 1), 1), ("relations", "combination", (1, 0, 1), (1, 1, 1), 1)}


def test_explain_names_the_over_matched_spans():
    d, p = doc(comb("A", "B")), pred(comb("A1", "A2"))
    e = strict.explain(d, p, lambda t, pv, gv: (pv, gv) in {("A1", "A"), ("A2", "A")})
    assert e["over_matched_pred"] == [(CE, "A2")] and e["shared_gold"] == [(CE, "A")]
    assert e["first_match"] == [(CE, "A1", "A"), (CE, "A2", "A")] and len(e["strict_pairs"]) == 1
    assert e["over_matching_pred"] == [(CE, "A1"), (CE, "A2")] and e["over_matching_gold"] == [(CE, "A")]
    e = strict.explain(doc(comb("A", "B")), pred(comb("X")), lambda t, pv, gv: pv == "X")
    assert e["over_matched_gold"] == [(CE, "B")] and e["over_matched_pred"] == []
    assert e["over_matching_pred"] == [(CE, "X")] and e["over_matching_gold"] == [(CE, "A"), (CE, "B")]


def test_questions_for_a_decision_are_both_span_orders_of_the_papers_prompt():
    d, p = doc(comb("A", "B")), pred(comb("X"))
    qs = TASK.questions_for(chimera.doc_to_json(d, p), {"type": CE, "left": "X", "right": "A"})
    assert [q.key for q in qs] == [("p1", CE, "X", "A"), ("p1", CE, "A", "X")]
    assert "<span1>\nX\n</span1>" in qs[0].prompt() and "<span1>\nA\n</span1>" in qs[1].prompt()
    assert TASK.label_from_answers({}, ["yes", "yes"]) == "match"
    assert TASK.label_from_answers({}, ["yes", "no"]) == "no-match"
