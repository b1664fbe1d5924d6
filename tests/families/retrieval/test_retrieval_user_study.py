"""The paper's human study (data/retrieval/user_study_results.csv): published mean ranks and annotator agreement."""

import json

import pandas as pd
import pytest

from scoring.errors import InputError
from scoring.families.retrieval.user_study import user_study_summary
from tests.conftest import ROOT

STUDY = ROOT / "data" / "retrieval" / "user_study_results.csv"
# chimera.md §6 and CHIMERA-KB results_analysis.py: mean rank excluding the 9 ill-defined rows
PUBLISHED = {"positive": 2.56, "ours": 2.70, "gpt-4o": 3.03, "mpnet_zero": 3.76, "sciIE": 4.21, "random": 4.74}


def test_mean_ranks_reproduce_the_published_figures():
    s = user_study_summary(STUDY)
    assert (s["rows"], s["examples"], s["ill_defined"]) == (79, 79, 9)
    assert s["annotators"] == {"annotator1": 45, "annotator2": 17, "annotator3": 17}
    assert {k: round(v["mean_rank"], 2) for k, v in s["systems"].items()} == PUBLISHED
    assert list(s["systems"]) == list(PUBLISHED)  # best first
    assert all(v["n"] == 70 for v in s["systems"].values())


def test_kendalls_w_over_the_annotators_system_orders():
    """W = 12 S / (m^2 (k^3 - k)) from each annotator's mean rank per system, computed here with pandas."""
    df = pd.read_csv(STUDY, dtype=str, keep_default_na=False)
    df = df[df["is_ill_defined"] != "checked"]
    long = pd.DataFrame([{"annotator": a, "system": k, "rank": v["rank"]}
                         for a, b in zip(df["annotator"], df["baselines_results"], strict=True)
                         for k, v in json.loads(b).items()])
    order = long.groupby(["annotator", "system"])["rank"].mean().unstack().rank(axis=1)
    m, k = order.shape
    assert (order.to_numpy() == order.to_numpy().round()).all()  # no ties: the untied formula applies
    sums = order.sum(axis=0)
    w = 12 * ((sums - sums.mean()) ** 2).sum() / (m ** 2 * (k ** 3 - k))
    agreement = user_study_summary(STUDY)["agreement"]
    assert agreement["kendalls_w"] == pytest.approx(w)
    assert agreement["examples_with_several_annotators"] == 0 and agreement["item_level"] is None
    assert -1 <= agreement["krippendorff_alpha_ordinal"] <= 1


def _study(tmp_path, orders):
    rows = []
    for i, (annotator, ranks) in enumerate(orders):
        res = {s: {"suggestion": s, "k": "1", "rank": r} for s, r in ranks.items()}
        rows.append({"example_id": f"x{i}", "annotator": annotator, "batch_id": "b", "context": "c", "query": "q",
                     "gold": "g", "baselines_results": json.dumps(res), "is_ill_defined": "", "knowledge_level": 3})
    p = tmp_path / "study.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    return p


def test_identical_orders_agree_perfectly(tmp_path):
    same = {"positive": 1, "a": 2, "b": 3}
    s = user_study_summary(_study(tmp_path, [("u1", same), ("u2", same), ("u3", same)]))
    assert s["agreement"]["kendalls_w"] == pytest.approx(1)
    assert s["agreement"]["krippendorff_alpha_ordinal"] == pytest.approx(1)
    assert s["systems"]["a"]["mean_normalized_rank"] == pytest.approx(2 * 3 / 6)


def test_bad_ranks_are_refused(tmp_path):
    p = _study(tmp_path, [("u1", {"positive": 1, "a": 1})])
    with pytest.raises(InputError, match="permutation"):
        user_study_summary(p)
