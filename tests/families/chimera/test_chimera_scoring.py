"""CHIMERA aggregate semantics (chimera.md §4) on hand-made documents, and decide's judge requests."""

import pytest

from scoring.families.chimera import scorer as chimera
from scoring.families.chimera.scorer import ChimeraDoc, ChimeraPrediction, Relation
from scoring.judges.local import ExactJudge

CE = "comb-element"


def doc(*rels: Relation, pid: str = "p1") -> ChimeraDoc:
    return ChimeraDoc(pid, "text", "relevant" if rels else "irrelevant", rels, (), 2)


def pred(*rels: Relation, pid: str = "p1") -> ChimeraPrediction:
    return ChimeraPrediction(pid, rels, 1)


def comb(*spans: str) -> Relation:
    return Relation("combination", tuple((CE, s) for s in spans))


def insp(src: str, tgt: str) -> Relation:
    return Relation("inspiration", (("inspiration-src", src), ("inspiration-target", tgt)))


def counts_with(d: ChimeraDoc, p: ChimeraPrediction, matches: set[tuple[str, str]]) -> dict:
    return chimera.doc_counts(d, p, lambda t, pv, gv: (pv, gv) in matches)


def test_duplicate_predictions_hitting_one_gold_are_over_matching_not_fp():
    # gold {A,B}, pred {A1,A2}, both match only A: tp=1, fp=0, fn=1 (chimera.md §4.4 first example)
    c = counts_with(doc(comb("A", "B")), pred(comb("A1", "A2")), {("A1", "A"), ("A2", "A")})
    rel = c["relations"]["combination"]
    assert (rel["tp"], rel["fp"], rel["fn"], rel["pred_om"]) == (1, 0, 1, 1)
    ent = c["entities"][CE]
    assert (ent["tp"], ent["fp"], ent["fn"], ent["pred_om"]) == (1, 0, 1, 1)


def test_one_prediction_matching_two_gold_gives_full_recall():
    # gold {A,B}, pred {X}, X matches both: tp=1, fp=0, fn=0, gold over-matching 1
    c = counts_with(doc(comb("A", "B")), pred(comb("X")), {("X", "A"), ("X", "B")})
    rel = c["relations"]["combination"]
    assert (rel["tp"], rel["fp"], rel["fn"], rel["gold_om"]) == (1, 0, 0, 1)


def test_partial_relation():
    # gold {A,B,C}, pred {A1,D}: tp=1, fp=1, fn=2
    c = counts_with(doc(comb("A", "B", "C")), pred(comb("A1", "D")), {("A1", "A")})
    rel = c["relations"]["combination"]
    assert (rel["tp"], rel["fp"], rel["fn"]) == (1, 1, 2)


def test_type_mismatch_counts_everything_as_errors_and_asks_nothing_for_relations():
    d, p = doc(comb("A", "B")), pred(insp("A", "B"))
    c = counts_with(d, p, set())
    assert c["relations"]["inspiration"]["fp"] == 2
    assert c["relations"]["combination"]["fn"] == 2
    assert chimera.paper_call_count(d, p) == 0  # no same-type entity pairs at all
    assert chimera.outcome(d, p, c) == "type mismatch"


def test_classification_and_outcomes():
    assert chimera.outcome(doc(), pred(), counts_with(doc(), pred(), set())) == "true negative"
    fa = counts_with(doc(), pred(comb("A", "B")), set())
    assert fa["classification"]["relevant"]["fp"] == 1 and fa["classification"]["irrelevant"]["fn"] == 1
    assert chimera.outcome(doc(), pred(comb("A", "B")), fa) == "false alarm"
    miss = counts_with(doc(comb("A", "B")), pred(), set())
    assert miss["classification"]["relevant"]["fn"] == 1
    assert chimera.outcome(doc(comb("A", "B")), pred(), miss) == "missed recombination"
    ok = counts_with(doc(comb("A", "B")), pred(comb("a", "b")), {("a", "A"), ("b", "B")})
    assert chimera.outcome(doc(comb("A", "B")), pred(comb("a", "b")), ok) == "perfect"


def test_metrics_macro_average_and_zero_rule():
    total = chimera.sum_counts([counts_with(doc(comb("A", "B")), pred(comb("A", "X")), {("A", "A")})])
    m = chimera.metrics_from_counts(total)
    comb_m = m["relations"]["combination"]
    assert comb_m["precision"] == 0.5 and comb_m["recall"] == 0.5
    assert m["relations"]["inspiration"]["f1"] == 0  # no counts: contributes 0 to the mean
    assert m["relations"]["avg"]["f1"] == pytest.approx(0.25)


def test_decide_asks_each_distinct_ordered_pair_once_and_needs_both_orders():
    d = doc(comb("Alpha", "Beta"))
    p = pred(comb("alpha", "alpha", "Gamma"))  # a repeated span collapses into one decision
    decisions, stats = chimera.decide([d], {"p1": p}, ExactJudge())
    assert {(x.left, x.right) for x in decisions} == {("alpha", "Alpha"), ("alpha", "Beta"), ("Gamma", "Alpha"),
                                                      ("Gamma", "Beta")}
    assert stats.distinct_queries == 8
    assert stats.paper_calls == 4 * 3 * 2 + 4 * 3 * 2  # entity pass + relation pass, each 2 orders x 2 passes
    labels = {x.right: x.judge for x in decisions if x.left == "alpha"}
    assert labels == {"Alpha": "match", "Beta": "no-match"}


def test_label_from_answers():
    assert chimera.label_from_answers("yes", "yes") == "match"
    assert chimera.label_from_answers("yes", "no") == "no-match"
    assert chimera.label_from_answers("invalid", "no") == "no-match"
    assert chimera.label_from_answers("yes", "missing") == "invalid"
    assert chimera.label_from_answers("invalid", "yes") == "invalid"


def test_payload_round_trip():
    d = ChimeraDoc("2103.0771", "t <b>", "relevant", (insp("s", "t"),),
                   (chimera.GoldSpan("inspiration-src", "s", 0, 1),), 5)
    p = pred(insp("s", "x"), pid="2103.0771")
    assert chimera.doc_from_json(chimera.doc_to_json(d, p)) == (d, p)
