"""Si et al. (2024) human reviews: parity with the reference numbers of shared/data/ideation/README.md, the
de-duplication of the 41 cross-condition reviews, and the demo files being what make_demo builds."""

import json
import math

import numpy as np
import pytest

from scoring.families.ideation import human
from tests.conftest import ROOT

DATA = ROOT / "data" / "ideation"


@pytest.fixture(scope="module")
def raw():
    return human.load_reviews()


@pytest.fixture(scope="module")
def dedup(raw):
    return human.deduplicate(raw)


def test_table_shape(raw):
    assert len(raw) == 337 and raw["idea_id"].nunique() == 147
    assert raw.groupby("condition")["idea_id"].nunique().to_dict() == {"AI": 49, "AI_Rerank": 49, "Human": 49}
    assert not raw["idea_id"].str.contains(" ").any()  # stray spaces stripped


def test_41_duplicated_reviews_are_removed_and_18_proposals_merged(raw, dedup):
    assert len(raw) - len(dedup) == 41 and len(dedup) == 296
    assert dedup["unit"].nunique() == 147 - 18
    assert not dedup.duplicated("shared_review_group").any()
    # the reviews JSON agrees: 41 rows repeat another row's timestamp and scores exactly
    rev = json.loads((DATA / "si2024_ideation_reviews.json").read_text())
    keys = list(zip(rev["timestamp"], rev["novelty_score"], rev["overall_score"], rev["novelty_rationale"],
                    strict=True))
    assert len(keys) - len(set(keys)) == 41


def test_reference_numbers_of_the_readme(raw):
    """README (computed from the CSV, duplicates kept): novelty Human 4.84, AI 5.64, AI_Rerank 5.81; overall
    4.68 / 4.85 / 5.34; 234 same-idea reviewer pairs; ICC(1) 0.17 / 0.09 / 0.07 / 0.13 / 0.09."""
    nov = human.condition_means(raw, "novelty", n_resamples=0)
    assert [round(nov[c]["mean"], 2) for c in human.CONDITIONS] == [4.84, 5.64, 5.81]
    ovr = human.condition_means(raw, "overall", n_resamples=0)
    assert [round(ovr[c]["mean"], 2) for c in human.CONDITIONS] == [4.68, 4.85, 5.34]
    assert human.reviewer_pairs(raw, "novelty")["n_pairs"] == 234
    iccs = [round(human.icc1(raw, c), 2) for c in human.CRITERIA]
    assert iccs == [0.17, 0.09, 0.07, 0.13, 0.09]
    for c in human.CRITERIA:  # README: exact agreement 15-24 %, Pearson r 0.07-0.18
        p = human.reviewer_pairs(raw, c)
        assert 15 <= round(100 * p["exact_agreement"]) <= 24 and 0.07 <= round(p["pearson_r"], 2) <= 0.18


def test_icc1_on_a_hand_computed_balanced_case():
    import pandas as pd

    # units (1, 3), (2, 4): MSB = 2 * ((2 - 2.5)^2 + (3 - 2.5)^2) / 1 = 1, MSW = (1 + 1 + 1 + 1) / 2 = 2
    # ICC(1) = (1 - 2) / (1 + (2 - 1) * 2) = -1/3
    df = pd.DataFrame({"unit": ["u", "u", "v", "v"], "novelty_score": [1, 3, 2, 4]})
    assert human.icc1(df, "novelty") == pytest.approx(-1 / 3)


def test_alpha_uses_the_krippendorff_package_values(dedup):
    import krippendorff

    groups = [list(v) for _, v in dedup.sort_values("review_idx").groupby("unit")["novelty_score"]]
    width = max(map(len, groups))
    data = np.array([[g[r] if r < len(g) else np.nan for g in groups] for r in range(width)], dtype=float)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    assert human.alpha_ordinal(dedup, "novelty") == pytest.approx(expected)


def test_linear_scale_map():
    assert human.to_five(1) == 1 and human.to_five(10) == 5 and human.to_five(5.5) == 3


def test_human_reference_is_json_and_names_its_scale(raw):
    ref = human.human_reference(n_resamples=200)
    json.dumps(ref)
    assert ref["n_duplicate_reviews"] == 41 and ref["n_units_dedup"] == 129 and "1-10" in ref["scale_note"]
    nov = ref["criteria"]["novelty"]
    assert nov["n_pairs"] == 234 - 28  # 18 merged proposals counted their pairs twice: 5 x 3 + 13 x 1
    for cond, cell in nov["condition_means"].items():
        five = nov["condition_means_1_5"][cond]
        assert five["mean"] == pytest.approx(human.to_five(cell["mean"]))
        assert cell["ci"][0] <= cell["mean"] <= cell["ci"][1]
    assert all(not (isinstance(v, float) and math.isnan(v)) for v in nov.values())


def test_idea_spread(dedup):
    s = human.idea_spread(dedup, "novelty")
    assert len(s) == 129 and (s["n"] >= 2).all() and (s["range"] == s["max"] - s["min"]).all()


def test_demo_files_are_what_make_demo_builds():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_demo", DATA / "make_demo.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    built = mod.build()
    for name, lines in built.items():
        stored = [json.loads(x) for x in (DATA / f"demo_{name}.jsonl").read_text(encoding="utf-8").split("\n") if x]
        assert stored == lines, name
    assert len(built["ideas"]) == 147 and len(built["absolute"]) == 147 * 3 and len(built["pairwise"]) == 49 * 6 * 3
    assert {mod.to_five(s) for s in range(1, 11)} == {1, 2, 3, 4, 5}
    assert all(mod.to_five(s) == round(human.to_five(s)) for s in range(1, 11))
