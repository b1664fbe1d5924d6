"""One rule for agreement figures (`audit.outputs.agreement_rule`): an undefined κ is said in words (null plus a
reason in
JSON), never printed or drawn as 0; the family's label scheme picks the statistic on every surface; α is ordinal per
ordinal criterion."""

import json
import re

import pytest

from audit.outputs.agreement import agreement
from audit.outputs.agreement_rule import MIN_DECISIONS, kappa_statistic
from audit.outputs.export import export_json, export_latex
from audit.outputs.report import agreement_points, build_report, report_html
from audit.review.reviews import add_review
from audit.store.database import open_db
from audit.views import decisions
from scoring.stats.agreement import multi_rater_stats, pair_stats
from tests.conftest import copy_of

LITX = "demo-litxbench-drop-meas30"
IDEATION = "demo-ideation-si2024-humans"


@pytest.fixture
def demo_db(demo_template, tmp_path):
    return open_db(copy_of(demo_template, tmp_path / "demo.db"))


@pytest.mark.parametrize("labels", [("match", "match", "no-match"), ("match", "match", "match")])
def test_one_label_judge_gives_no_kappa_anywhere(demo_db, labels):
    """The judge said match on all three reviewed decisions: κ is 0 (or 0/0) by construction."""
    picked = [d for d in decisions(demo_db, LITX) if d["kind"] == "material_pair" and d["judge"] == "match"][:3]
    for d, lab in zip(picked, labels, strict=True):
        add_review(demo_db, LITX, d["id"], lab, "ana")
    raw = pair_stats(list(labels), ["match"] * 3, n_resamples=0)
    assert raw["kappa"] in (0.0, None)  # what the statistic alone gives: a 0 that means nothing
    agr = agreement(demo_db, LITX, n_resamples=200)
    for group, stats in agr["human_vs_judge"].items():
        assert stats["kappa"] is None and stats["weighted_kappa"] is None, group
        assert "judge said only “match”" in stats["kappa_undefined"]
        assert stats["headline"]["value"] is None and stats["headline"]["undefined"]
    assert json.loads(json.dumps(export_json(demo_db, LITX)))["agreement"]["human_vs_judge"]["all"]["kappa"] is None
    caption = re.search(r"\\caption\{(.*)\}", export_latex(demo_db, LITX)).group(1)
    assert "undefined" in caption and "judge said only" in caption
    assert not re.search(r"kappa\$ = ", caption)
    assert agreement_points(demo_db_view(demo_db), agr) == []  # nothing drawn
    html = report_html(build_report(demo_db_view(demo_db)))
    assert "undefined: the " in html and "judge said only" in html


def demo_db_view(db):
    from audit.views import as_view

    return as_view(db, LITX)


def test_few_reviews_warn_and_say_where_the_minimum_comes_from(demo_db):
    decs = [d for d in decisions(demo_db, LITX) if d["kind"] == "material_pair"]
    picked = [d for d in decs if d["judge"] == "match"][:3] + [d for d in decs if d["judge"] == "no-match"][:3]
    for d in picked:
        add_review(demo_db, LITX, d["id"], d["judge"], "ana")
    agr = agreement(demo_db, LITX, n_resamples=200)
    head = agr["human_vs_judge"]["all"]["headline"]
    assert head["value"] == 1.0 and head["warning"].startswith("few reviews: 6 decisions")
    assert agr["minimums"]["decisions"] == MIN_DECISIONS and "simulations" in agr["minimums"]["why"]
    assert "few reviews" in re.search(r"\\caption\{(.*)\}", export_latex(demo_db, LITX)).group(1)


def test_ordinal_ratings_use_weighted_kappa_on_every_surface(demo_db):
    agr = agreement(demo_db, IDEATION, n_resamples=300)
    rating = agr["human_vs_judge"]["rating"]
    assert rating["headline"]["key"] == "weighted_kappa"
    assert rating["headline"]["value"] == rating["weighted_kappa"] != rating["kappa"]
    for group, stats in agr["human_vs_judge"].items():
        if group.startswith("rating"):
            assert stats["headline"]["name"] == "quadratic-weighted κ", group
    caption = re.search(r"\\caption\{(.*)\}", export_latex(demo_db, IDEATION)).group(1)
    assert "quadratic-weighted $\\kappa$" in caption
    assert f"{rating['weighted_kappa']:.2f}" in caption
    from audit.views import as_view

    labels = [p["label"] for p in agreement_points(as_view(demo_db, IDEATION), agr)]
    assert labels and all("Cohen" not in lab for lab in labels if lab.startswith("rating"))


def test_alpha_is_ordinal_per_criterion_and_says_its_level(demo_db):
    agr = agreement(demo_db, IDEATION, n_resamples=0)
    by_group = agr["human_vs_human"]["alpha_by_group"]
    assert set(by_group) == {"rating/novelty", "rating/feasibility", "rating/effectiveness"}
    ratings = {}
    for d in decisions(demo_db, IDEATION):
        if d["kind"] == "rating" and d["type"] == "novelty" and len(d["human"]) >= 1:
            ratings[str(d["id"])] = d["human"]
    expected = multi_rater_stats(ratings, level="ordinal", labels=["1", "2", "3", "4", "5"])
    assert by_group["rating/novelty"]["level"] == "ordinal"
    assert by_group["rating/novelty"]["alpha"] == pytest.approx(expected["alpha"])
    assert by_group["rating/novelty"]["alpha"] != pytest.approx(multi_rater_stats(ratings)["alpha"])  # not nominal
    assert agr["human_vs_human"]["alpha"]["alpha"] is None  # criteria are not pooled into one number


@pytest.mark.parametrize("seed", range(30))
def test_rule_invariant_defined_iff_both_sides_use_two_labels(seed):
    import random

    rng = random.Random(seed)
    n = rng.randint(1, 12)
    human = [rng.choice(["match", "no-match"]) for _ in range(n)]
    judge = [rng.choice(["match"] if seed % 3 == 0 else ["match", "no-match"]) for _ in range(n)]
    stats = pair_stats(human, judge, clusters=[i // 2 for i in range(n)], n_resamples=50)
    stat = kappa_statistic(stats, ordinal=False)
    assert stat.defined == (len(set(human)) > 1 and len(set(judge)) > 1)
    if not stat.defined:
        assert stat.text().startswith("undefined") and "0.000" not in stat.text()
    else:
        assert stat.value == stats["kappa"]


def test_the_latex_caption_gives_the_non_trivial_kappa_where_trivial_decisions_are_apart(demo_db):
    """The caption printed κ over every reviewed decision, trivial ones included (identical strings, always a
    match), which raise it (0.35, n = 13) while the Agreement page gives the non-trivial figure (0.31, n = 12) apart:
    the paper got the inflated one."""
    run = "demo-chimera-mixed"
    from audit.views import as_view

    task = as_view(demo_db, run).task
    view_decisions = decisions(demo_db, run)
    trivial = [d for d in view_decisions if task.trivial(d)][:3]
    other = [d for d in view_decisions if not task.trivial(d)][:12]
    assert len(trivial) == 3 and len(other) == 12
    for n, d in enumerate(trivial + other):
        add_review(demo_db, run, d["id"], d["judge"] if n % 3 else ("no-match" if d["judge"] == "match" else "match"),
                   "ana")
    hvj = agreement(demo_db, run, n_resamples=200)["human_vs_judge"]
    assert hvj["non-trivial"]["n"] == 12 and hvj["all"]["n"] == 15
    caption = re.search(r"\\caption\{(.*)\}", export_latex(demo_db, run)).group(1)
    assert "(non-trivial decisions)" in caption and "(n = 12," in caption and "(n = 15," not in caption


def test_with_only_trivial_decisions_reviewed_the_caption_gives_the_whole_figure(demo_db):
    """A non-trivial group of n = 0 was still chosen: "κ (non-trivial decisions) undefined: no decisions reviewed
    yet (n = 0)" after 5 reviews."""
    from audit.views import as_view

    run = "demo-chimera-mixed"
    task = as_view(demo_db, run).task
    for d in [d for d in decisions(demo_db, run) if task.trivial(d)][:5]:
        add_review(demo_db, run, d["id"], d["judge"], "ana")
    caption = re.search(r"\\caption\{(.*)\}", export_latex(demo_db, run)).group(1)
    assert "non-trivial" not in caption and "(n = 5" in caption
