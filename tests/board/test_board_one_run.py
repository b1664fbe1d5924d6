"""A board of one run's systems (ideation) audited from a sample: the run's own plan gives every system's estimate,
every pairwise difference and the rank sets (`audit.board.one_run`), and two ideation runs of the same ideas share
their reviews (issue 36 §1, §5)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from audit.board.cli import cmd_board
from audit.board.one_run import next_one_run_document, one_run_estimates
from audit.board.store import create_board
from audit.board.table import board_table
from audit.demo import DATA
from audit.effective import DEFAULT_POLICY
from audit.errors import AuditError
from audit.rescoring import audit_run
from audit.review.reviews import add_review
from audit.review.sampling import create_plan, estimate, next_sample
from audit.runs import score_run
from audit.store.database import db_file, open_db, seal_all
from audit.views import decisions, load_view
from scoring.families import TASKS
from tests.conftest import copy_of, shared_template
from tests.store.test_shared_questions import _random_reviews, check_invariant

RUN = "ideas"
PRIMARY = "absolute/novelty/mean"


def review_served(db, blocks: int, seed: int = 0) -> int:
    """Review `blocks` documents the run's sample queue serves, each decision with a random label; how many."""
    rng = random.Random(seed)
    view = load_view(db, RUN)
    done = 0
    while done < blocks and (pick := next_sample(db, RUN)) is not None:
        for dec_id in pick["decisions"]:
            d = view.decision(dec_id)
            add_review(db, RUN, dec_id, rng.choice(view.task.label_schemes[d["kind"]].labels), "ana", sampled=True)
        done += 1
    return done


def _sampled_board(board_template: Path, path: Path) -> None:
    shutil.copyfile(board_template, path)
    db = open_db(path)
    create_board(db, "i", [RUN])
    create_plan(db, RUN, seed=4)
    review_served(db, 30)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()


@pytest.fixture(scope="session")
def sampled_template(board_template, tmp_path_factory) -> Path:
    """Board `i` of the ideation run, its plan, 30 documents reviewed from its queue: built once per test run
    (7 s), copied by each test."""
    return shared_template(tmp_path_factory, "boards-sampled", lambda p: _sampled_board(board_template, p))


@pytest.fixture
def sampled(sampled_template, tmp_path):
    db = open_db(copy_of(sampled_template, tmp_path / "sampled.db"))
    yield db
    db.conn.close()


def test_without_the_runs_plan_there_is_no_interval(bdb):
    create_board(bdb, "i", [RUN])
    assert one_run_estimates(bdb, "i", RUN, ["Human", "AI", "AI_Rerank"]) is None
    assert board_table(bdb, "i")["interval"] == "none"
    from audit.board.export import board_latex

    caption = " ".join(board_latex(board_table(bdb, "i")).split())  # the systems' sample is the run's
    assert "since the run has no sampling plan" in caption and "the board has no" not in caption
    create_plan(bdb, RUN, seed=4)  # a plan, nothing reviewed: the sentence says what the sample still needs
    table = board_table(bdb, "i")
    assert table["interval"] == "run plan"
    assert table["settled"] == ["no estimate yet for Human, AI, AI_Rerank, so nothing can be said about the ranking "
                                f"({table['systems'][0]['estimate'][PRIMARY]['note']})"]
    assert "insufficient reviews" in table["settled"][0]


def test_each_systems_estimate_is_the_single_run_estimators(sampled):
    """Where a board number and the run's own estimate coincide (the first system's mean rating and pairwise score
    per criterion are the run's headline), they are equal: value, both intervals and the bias."""
    table = board_table(sampled, "i")
    assert table["interval"] == "run plan"
    assert "run's own sampling plan" in table["interval_explained"]
    own = estimate(sampled, RUN)
    first = table["systems"][0]
    assert first["system"] == "Human"
    for section, metric in (("absolute", "mean"), ("pairwise", "score")):
        for crit in ("novelty",):  # the headline has the first criterion only
            single = own[f"summary/{section}/{crit}"]
            board = first["estimate"][f"{section}/{crit}/{metric}"]
            assert single["estimate"] is not None and single["ci"] is not None, single["note"]
            assert board["value"] == single["estimate"]
            assert board["ci"] == single["ci"]
            assert board["anytime"]["ci"] == single["anytime"]["ci"]
            assert first["bias"][f"{section}/{crit}/{metric}"] == {"value": single["bias"], "ci": single["bias_ci"]}


def test_a_sample_whose_reviews_all_confirm_the_judge_has_the_run_estimators_intervals(bdb):
    """Every served document reviewed with the judge's own labels (a split comparison: a tie): no sampled count of
    a rating moved. The board left out the variance of the counts the sample never saw move and showed zero-width
    intervals ("exact", and rank sets and "A > B holds" from them) where the run's own estimate has an interval."""
    create_board(bdb, "i", [RUN])
    create_plan(bdb, RUN, seed=4)
    view = load_view(bdb, RUN)
    for _ in range(32):
        pick = next_sample(bdb, RUN)
        for dec_id in pick["decisions"]:
            d = view.decision(dec_id)
            labels = view.task.label_schemes[d["kind"]].labels
            add_review(bdb, RUN, dec_id, d["judge"] if d["judge"] in labels else labels[-1], "ana", sampled=True)
    table = board_table(bdb, "i")
    own = estimate(bdb, RUN)
    single = own["summary/absolute/novelty"]
    first = table["systems"][0]["estimate"]["absolute/novelty/mean"]
    assert single["ci"] is not None and single["ci"][1] - single["ci"][0] > 0.01, single
    assert (first["value"], first["ci"], first["anytime"]["ci"]) == (single["estimate"], single["ci"],
                                                                     single["anytime"]["ci"])
    for s in table["systems"]:
        lo, hi = s["estimate"][PRIMARY]["ci"]
        assert hi > lo, (s["system"], lo, hi)
    assert all(p["ci"][1] > p["ci"][0] for p in table["pairs"])


def test_differences_and_rank_sets_come_from_the_same_sample(sampled):
    table = board_table(sampled, "i")
    value = {s["system"]: s["estimate"][PRIMARY]["value"] for s in table["systems"]}
    assert len(table["pairs"]) == 3
    for p in table["pairs"]:
        assert p["difference"] == pytest.approx(value[p["a"]] - value[p["b"]], abs=1e-12)
        lo, hi = p["ci"]
        slo, shi = p["ci_simultaneous"]
        assert slo <= lo < p["difference"] < hi <= shi  # simultaneous (Bonferroni) is the wider
    for s in table["systems"]:  # a rank set holds the audited rank and reads the simultaneous intervals
        best, worst = s["rank_set"]
        assert best <= s["rank_audited"] <= worst
        surely_above = sum(1 for p in table["pairs"] if s["system"] in (p["a"], p["b"]) and
                           ((p["b"] == s["system"] and p["ci_simultaneous"][0] > 0) or
                            (p["a"] == s["system"] and p["ci_simultaneous"][1] < 0)))
        assert best == 1 + surely_above
    assert isinstance(table["more_documents"], int) and table["settled"]
    assert not any("nothing can be said" in s for s in table["settled"])


def test_a_pair_interval_uses_the_pairing(sampled):
    """The pair's interval is narrower than treating the two systems' estimates as independent would make it
    whenever their errors correlate; here it just must differ from that (the covariance is used at all)."""
    est = one_run_estimates(sampled, "i", RUN, ["Human", "AI", "AI_Rerank"])
    assert est is not None
    by = {(p["a"], p["b"]): p for p in est["pairs"]}
    se = {s: est["systems"][s][PRIMARY]["se"] for s in ("Human", "AI")}
    independent = (se["Human"] ** 2 + se["AI"] ** 2) ** 0.5
    assert by[("Human", "AI")]["se"] != pytest.approx(independent, rel=1e-6)


def test_a_full_review_through_the_sample_queue_is_exact(sampled):
    """Every planned document reviewed: zero-width intervals, rank sets [r, r] (board table and the run-plan
    estimates alike), and the estimates equal the audited values."""
    review_served(sampled, 10_000, seed=1)
    est = one_run_estimates(sampled, "i", RUN, ["Human", "AI", "AI_Rerank"])
    audited = audit_run(sampled, RUN).metrics
    task = TASKS["ideation"]
    for s, mine in est["systems"].items():
        assert mine[PRIMARY]["ci"][0] == mine[PRIMARY]["ci"][1]
        assert mine[PRIMARY]["anytime"]["ci"][0] == mine[PRIMARY]["anytime"]["ci"][1]
        assert mine[PRIMARY]["value"] == pytest.approx(task.system_metrics(audited, s)["absolute"]["novelty"]["mean"])
    for p in est["pairs"]:
        assert p["ci"][0] == p["ci"][1] == pytest.approx(p["difference"])
    values = [est["systems"][s][PRIMARY]["value"] for s in est["systems"]]
    if len(set(values)) == len(values):  # no tie: one rank each
        assert all(lo == hi for lo, hi in est["rank_sets"].values())
    table = board_table(sampled, "i")
    assert table["interval"] == "exact"
    assert all(s["rank_set"][0] == s["rank_set"][1] for s in table["systems"]) or len(set(values)) < len(values)
    assert est["more_documents"] == 0


def test_the_cli_plans_and_serves_a_one_run_board(bdb, capsys):
    """`board plan` on a one-run board creates the run's own plan (once); `board queue --next` serves what the
    run's sample queue serves, and `board show` carries the run plan's estimates."""
    import argparse

    create_board(bdb, "i", [RUN])
    path = db_file(bdb)

    def run(action: str, focus: str | None = None) -> dict:
        try:  # the command's body, as `main` runs it: the databases it opened are closed after it
            cmd_board(argparse.Namespace(db=path, action=action, name="i", seed=0, next=True, focus=focus,
                                         policy=DEFAULT_POLICY))
        finally:
            seal_all(succeeded=False)
        return json.loads(capsys.readouterr().out)

    made = run("plan")
    assert made["run"] == RUN and made["blocks"] > 0
    with pytest.raises(AuditError, match="already has a sampling plan; the board reads that plan"):
        run("plan")
    served = run("queue")
    assert served["doc"] == next_sample(bdb, RUN)["doc"] and served["review_in"][0]["sample_queue"]
    assert "sample queue" in served["how"]
    with pytest.raises(AuditError, match="--focus"):
        run("queue", focus="AI")
    shown = run("show")
    assert shown["interval"] == "run plan"
    assert next_one_run_document(bdb, "i", RUN, ["Human", "AI", "AI_Rerank"])["doc"] == served["doc"]


# ---------------------------------------------------------------- two ideation runs of the same ideas


def _second_judge(tmp_path):
    """The demo's ideas under another 'judge': every rating mirrored on the 1-5 scale, every verdict swapped."""
    demo = TASKS["ideation"].demo_runs(DATA)[0]
    absolute, pairwise = tmp_path / "absolute2.jsonl", tmp_path / "pairwise2.jsonl"
    rows = [json.loads(line) for line in open(demo.inputs["absolute"], encoding="utf-8") if line.strip()]
    absolute.write_text("".join(json.dumps({**r, "score": 6 - r["score"]}) + "\n" for r in rows), encoding="utf-8")
    swap = {"first": "second", "second": "first"}
    rows = [json.loads(line) for line in open(demo.inputs["pairwise"], encoding="utf-8") if line.strip()]
    pairwise.write_text("".join(json.dumps({**r, "verdict": swap.get(r["verdict"], r["verdict"])}) + "\n"
                                for r in rows), encoding="utf-8")
    return {**demo.inputs, "absolute": str(absolute), "pairwise": str(pairwise)}, demo.judge


@pytest.mark.parametrize("seed", [1, 2])
def test_two_ideation_runs_of_the_same_ideas_share_reviews(bdb, tmp_path, seed):
    """A second judge of the same ideas asks the same questions: a review made in either run counts in both, and
    both runs' audited metrics equal the family's scorer under the shared effective labels."""
    inputs, judge = _second_judge(tmp_path)
    score_run(bdb, "ideation", inputs, judge, run="ideas-judge2")
    runs = [RUN, "ideas-judge2"]
    shared = bdb.execute("SELECT COUNT(*) FROM (SELECT qkey FROM decisions WHERE run_id IN (SELECT id FROM runs "
                         "WHERE name IN (?, ?)) GROUP BY qkey HAVING COUNT(DISTINCT run_id) = 2)", runs).fetchone()[0]
    assert shared == len(decisions(bdb, RUN))  # every question is asked by both
    before = audit_run(bdb, "ideas-judge2").metrics
    _random_reviews(bdb, runs, random.Random(seed), 60)
    check_invariant(bdb, runs)
    assert audit_run(bdb, "ideas-judge2").metrics != before


def test_a_review_in_one_ideation_run_settles_the_question_in_the_other(bdb, tmp_path):
    inputs, judge = _second_judge(tmp_path)
    score_run(bdb, "ideation", inputs, judge, run="ideas-judge2")
    d = next(d for d in decisions(bdb, RUN) if d["kind"] == "rating" and d["judge"] != "1")
    add_review(bdb, RUN, d["id"], "1", "ana")
    twin = next(x for x in decisions(bdb, "ideas-judge2")
                if (x["doc"], x["kind"], x["type"], x["left"]) == (d["doc"], d["kind"], d["type"], d["left"]))
    assert twin["effective"] == "1" and twin["human"] == {"ana": "1"}
    create_board(bdb, "j2", ["ideas-judge2"])  # the second run's board counts the review made in the first
    assert board_table(bdb, "j2")["reviewed"]["decisions"] == 1


def test_the_run_plans_estimates_reach_json_csv_and_latex(sampled):
    """The one row rule carries the estimate, both intervals, the bias and the rank set to every format: JSON and
    CSV parse back to the rows, and each LaTeX row parses back to the rows' numbers as printed."""
    from audit.board.export import board_rows, export_board
    from audit.outputs.cells import tex_metric_number
    from scoring.families.base import MetricCell
    from tests.board.test_board_export import _same_numbers

    rows = _same_numbers(sampled, "i")
    table = board_table(sampled, "i")
    assert rows == board_rows(table)
    for r, s in zip(rows, table["systems"], strict=True):
        est = s["estimate"][PRIMARY]
        assert r["value_is"] == "estimate" and r["value"] == est["value"]
        assert [r["lo"], r["hi"]] == est["ci"] and [r["anytime_lo"], r["anytime_hi"]] == est["anytime"]["ci"]
        assert [r["bias"], [r["bias_lo"], r["bias_hi"]]] == [s["bias"][PRIMARY]["value"], s["bias"][PRIMARY]["ci"]]
        assert [r["rank_best"], r["rank_worst"]] == s["rank_set"]
    tex = export_board(sampled, "i", "latex")
    assert "run's own sampling plan" in tex and "95\\% anytime" in tex
    cell = MetricCell(tuple(PRIMARY.split("/")), "novelty, absolute mean")
    body = tex.split("\\midrule\n")[1].split("\\bottomrule")[0].strip().splitlines()
    assert len(body) == len(rows)
    for line, r in zip(body, rows, strict=True):
        cells = [c.strip() for c in line.removesuffix("\\\\").split("&")]
        n = lambda v: tex_metric_number(cell, v)  # noqa: E731
        sign = "$-$" if r["bias"] < 0 else "$+$"
        rank = str(r["rank_best"]) if r["rank_best"] == r["rank_worst"] else f"{r['rank_best']}--{r['rank_worst']}"
        assert cells == [r["system"].replace("_", "\\_"), n(r["judge_only"]), n(r["value"]),
                         f"[{n(r['lo'])}, {n(r['hi'])}]", f"[{n(r['anytime_lo'])}, {n(r['anytime_hi'])}]",
                         sign + n(abs(r["bias"])), f"[{n(r['bias_lo'])}, {n(r['bias_hi'])}]", str(r["rank_judge"]),
                         str(r["rank_audited"]), rank]
        assert float(cells[2]) == pytest.approx(r["value"], abs=0.006)  # the printed number is the row's
