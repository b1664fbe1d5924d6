"""Hand-computed small cases of the official rules (litxbench.md §2-§7, §10)."""

from __future__ import annotations

import pytest

from scoring.families.litxbench.load import parse_paper
from scoring.families.litxbench.match import (
    QUALIFIER_COMPAT,
    assign,
    kind_score,
    measurement_score,
    values_match,
)
from scoring.families.litxbench.model import Measurement, ProcessEvent, ProcessKind, Quantity, ValueQualifier
from scoring.families.litxbench.process import align, normalise_events
from scoring.families.litxbench.score import Solver, level_metrics, paper_counts
from scoring.families.litxbench.units import parse_unit

C, K, MPA = parse_unit("degree_Celsius"), parse_unit("kelvin"), parse_unit("megapascal")


def meas(kind: str, value: object, unit: object = MPA, temp: Quantity | None = None, enum: bool = True) -> Measurement:
    return Measurement(kind, enum, value, unit, temperature=temp)


def test_qualifier_table_is_symmetric_with_the_documented_values():
    q = ValueQualifier
    assert QUALIFIER_COMPAT[(q.EXACT, q.APPROXIMATE)] == 0.75
    assert QUALIFIER_COMPAT[(q.EXACT, q.MUCH_ABOVE)] == 0.25
    assert QUALIFIER_COMPAT[(q.ABOVE, q.BELOW)] == 0
    assert all(QUALIFIER_COMPAT[(a, b)] == QUALIFIER_COMPAT[(b, a)] for a in q for b in q)


def test_kind_words_split_on_underscore_and_camel_case_only():
    assert kind_score("yield_strength_tension", "yield strength tension", True, False) == 0.0
    assert kind_score("yield_strength_tension", "yieldStrength", True, False) == 0.7
    assert kind_score("grain_size", "size", True, False) == 0.5  # one shared word, Jaccard 1/2
    assert kind_score("density", "youngs_modulus", True, True) == 0.0


def test_room_temperature_approx_vs_exact_scores_three_quarters():
    g = meas("yield_strength_tension", 500, temp=Quantity("~23", C))
    p = meas("yield_strength_tension", 500, temp=Quantity(23, C))
    # qualifier 1 (weight 1) and temperature 0.75 (weight 2): (1 + 1.5) / 3
    assert measurement_score(g, p) == pytest.approx(2.5 / 3)
    missing = meas("yield_strength_tension", 500)
    assert measurement_score(g, missing) == pytest.approx((1 + 2 * 0.85) / 3)


def test_absolute_tolerance_quirks():
    assert not values_match(25, C, 298, K)  # 298.15 K rounded: fails by 0.15 absolute
    assert values_match(25, C, 298, K, relative=True)
    a_cm2 = parse_unit("ampere / centimeter ** 2")
    assert values_match(5.89e-5, a_cm2, 5.85e-5, a_cm2)  # tiny values always match
    assert not values_match(5.89e-5, a_cm2, 5.85e-5, a_cm2, relative=True)
    assert values_match(1000, MPA, 1, parse_unit("GPa"))
    assert values_match(980.7, MPA, 100, parse_unit("HV"))


def test_backtrace_is_not_maximal_for_swapped_steps():
    ev = [ProcessEvent(ProcessKind.Annealing), ProcessEvent(ProcessKind.WaterQuenching)]
    al = align(normalise_events(ev), normalise_events(ev[::-1]))
    assert al.distance == 2 and al.matched == [(0, 0)]  # only the implicit Mixing


def test_cut_dropped_and_mixing_prepended():
    kinds = [e.kind for e in normalise_events([ProcessEvent(ProcessKind.Cut), ProcessEvent(ProcessKind.Annealing)])]
    assert kinds == [ProcessKind.Mixing, ProcessKind.Annealing]


def test_threshold_after_assignment_and_padding():
    import numpy as np
    cost = np.array([[1.0, 60.0], [2.0, 70.0]])
    a = assign(cost, 50.0, lambda c: c < 50.0)
    # the solver minimises 60 + 2 over 1 + 70, then drops the 60: gold 0 loses its cost-1 partner (§10.2)
    assert a.kept == [(1, 0)] and a.dropped == [(0, 1)] and a.unmatched_rows == [0]
    forced = assign(cost, 50.0, lambda c: c < 50.0, forced=[(0, 0)])
    assert forced.kept == [(0, 0)] and forced.dropped == [(1, 1)]
    forbidden = assign(cost, 50.0, lambda c: c < 50.0, forbidden=[(1, 0)])
    assert forbidden.kept == [(0, 0)]


def _paper(materials: list) -> object:
    return parse_paper([{"raw_materials": {"el": {"kind": "Ingot"}},
                         "synthesis_groups": {"make": [{"kind": "ArcMelting"}, {"kind": "AsCast"}]},
                         "output_materials": materials}], "p")


def test_small_paper_levels_by_hand():
    comp = {"_type": "composition", "composition": {"Fe": 1, "Ni": 1}}
    hv = {"_type": "measurement", "kind": "vickers_hardness", "value": 300, "unit": "HV"}
    gold = _paper([{"process": "el->make", "measurements": [comp, hv]}])
    pred = _paper([{"process": "el->make", "measurements": [comp, {**hv, "value": 301}]}])
    c = paper_counts(Solver(gold, pred).solve())
    # items: composition matched (1.0), hardness unmatched on both sides
    assert c["measurement"] == {"tp": 1.0, "target": 2, "extracted": 2}
    # values: composition 2 elements + hardness 1 each side; process Mixing/ArcMelting/AsCast all aligned
    assert c["value"] == {"tp": 5.0, "target": 6, "extracted": 6}
    assert c["process"] == {"tp": 3, "target": 3, "extracted": 3}
    assert c["total_cost"] == 1.0  # item mismatch max(2, 2) - 1
    m = level_metrics(c)
    assert m["config"]["f1"] == 0.0  # inactive level: reported 0, left out of the overall
    value_f1 = 5 / 6
    assert m["overall"]["f1"] == pytest.approx((0.5 * value_f1 + 0.2 * 1 + 0.15 * 1) / 0.85)


def test_a_match_forced_across_item_types_is_not_kept_and_counts_without_error():
    """A review can call a pair of items of two types a match (the assignment pairs them at score 0 and the threshold
    drops them: the demo's process-perturb run, once a material pair is forced, has a gold volume fraction beside a
    predicted composition). Such a pair is not one the scorer can count: it is not forced, where before it was kept
    and its values compared as if the composition were a measurement (AttributeError in the review)."""
    from scoring.families.litxbench.match import Constraints, Item, match_items
    from scoring.families.litxbench.score import _pair_values

    gold = [Item("measurement", meas("volume_fraction", 25, parse_unit("percent")), None, "g[0]"),
            Item("measurement", meas("density", 2.6, parse_unit("gram / centimeter ** 3")), None, "g[1]")]
    pred = [Item("composition", object(), None, "p[0]"),
            Item("measurement", meas("density", 2.6, parse_unit("gram / centimeter ** 3")), None, "p[1]")]
    free = match_items(gold, pred)
    across = match_items(gold, pred, Constraints(forced=frozenset({("g[0]", "p[0]")})))
    assert across.pairs == free.pairs and all(gold[i].type == pred[j].type for i, j, _ in across.pairs)
    assert (1, 1) in {(i, j) for i, j, _ in across.pairs}
    for i, j, s in across.pairs:
        _pair_values(gold[i], pred[j], s, False)
    with pytest.raises(AttributeError):  # what counting a kept cross-type pair did
        _pair_values(gold[0], pred[0], 0.0, False)
    same = match_items(gold, pred, Constraints(forced=frozenset({("g[0]", "p[1]")})))
    assert (0, 1) in {(i, j) for i, j, _ in same.pairs}  # a pair of one type is still forced
