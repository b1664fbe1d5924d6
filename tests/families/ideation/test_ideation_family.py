"""The ideation family: decisions and labels, and the invariant that re-scoring from per-question counts under any
set of reviews equals the pure scores computed with the reviewed answers substituted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.errors import JudgeSpecError
from scoring.families.base import sum_nested
from scoring.families.ideation import decide as dec
from scoring.families.ideation.family import IdeationTask
from scoring.families.ideation.judge import questions, records_from_answers
from scoring.families.ideation.model import Rating, Verdict, pools_of
from scoring.families.ideation.scores import ideation_scores
from scoring.judges.prompts import Parsed
from tests.conftest import FIXTURES

FIX = FIXTURES / "ideation"
INPUTS = {"ideas": str(FIX / "ideas.jsonl"), "absolute": str(FIX / "absolute.jsonl"),
          "pairwise": str(FIX / "pairwise.jsonl")}
TASK = IdeationTask()


@pytest.fixture(scope="module")
def run():
    loaded = TASK.load(INPUTS)
    decisions, stats = TASK.decide(loaded, TASK.make_judge("file"), None, None)
    payloads = [TASK.payload(d) for d in loaded.docs]
    return loaded, decisions, stats, payloads


def by_key(decisions):
    return {(d.doc, d.kind, d.type, d.left, d.right): d for d in decisions}


def test_one_decision_per_rating_and_per_unordered_pair(run):
    loaded, decisions, stats, _ = run
    ratings = [d for d in decisions if d.kind == "rating"]
    comps = [d for d in decisions if d.kind == "comparison"]
    # 9 ideas x 2 criteria; pairs: q1 3 + q2 3 + q3 1 (+ q4 none) = 7 per criterion x 2 criteria
    assert len(ratings) == 18 and len(comps) == 14
    assert all(d.left < d.right for d in comps)
    # 28 ordered calls expected, 17 in the file (novelty 6 + 5 + 2, feasibility 2 + 2): 11 missing
    assert stats.distinct_queries == 18 + 28 and stats.missing == 1 + 11 and stats.invalid == 1 + 1
    assert any("1 rating (question x idea x criterion) is not" in w for w in loaded.warnings) and any(
        "11 pairwise calls (question x criterion x ordered pair) are not" in w for w in loaded.warnings)


def test_judge_labels(run):
    k = by_key(run[1])
    assert k[("q1", "rating", "novelty", "ours", "")].judge == "5"
    assert k[("q1", "rating", "novelty", "other", "")].judge == "invalid"
    assert k[("q2", "rating", "feasibility", "other", "")].detail["status"] == "missing"
    comp = {(d.doc, d.type, d.left, d.right): d.judge for d in run[1] if d.kind == "comparison"}
    assert comp[("q1", "novelty", "base", "ours")] == "b"  # ours won in both orders
    assert comp[("q1", "novelty", "other", "ours")] == "split"  # first slot won twice
    assert comp[("q1", "novelty", "base", "other")] == "split"  # a tie and a decisive call
    assert comp[("q2", "novelty", "base", "ours")] == "invalid"  # one call unreadable
    assert comp[("q2", "novelty", "base", "other")] == "invalid"  # one call not asked
    assert comp[("q2", "novelty", "other", "ours")] == "tie"
    assert comp[("q3", "novelty", "base", "ours")] == "a"
    assert comp[("q2", "feasibility", "base", "ours")] == "invalid"  # never asked


def test_comparison_detail_keeps_both_ordered_calls_as_which_idea_won(run):
    d = by_key(run[1])[("q1", "comparison", "novelty", "other", "ours")]
    calls = d.detail["calls"]
    assert [(c["first"], c["second"], c["verdict"], c["winner"]) for c in calls] == [
        ("other", "ours", "first", "a"), ("ours", "other", "first", "b")]
    assert calls[0]["rationale"] == "other vs ours: first" and calls[0]["raw"].endswith("WINNER: FIRST")


def test_unreviewed_counts_reproduce_the_pure_scores_exactly(run):
    loaded, decisions, _, payloads = run
    labels = _judge_labels(decisions)
    counts = [TASK.counts(p, labels.get(p["question_id"], {})) for p in payloads]
    for bounds in ("fixed", "valid"):
        got = TASK.metrics(sum_nested(counts), counts, {"bounds": bounds})
        assert got == _pure(loaded, {}, bounds)


def test_fixture_scores_by_hand(run):
    loaded, decisions, _, payloads = run
    labels = _judge_labels(decisions)
    counts = [TASK.counts(p, labels.get(p["question_id"], {})) for p in payloads]
    m = TASK.metrics(sum_nested(counts), counts)
    # ours novelty ratings 5, 4, 3, 4 -> 4.0; other: one invalid (q1), 3 (q2)
    assert m["absolute"]["ours"]["novelty"]["mean"] == 4.0
    assert m["absolute"]["other"]["novelty"] == {**m["absolute"]["other"]["novelty"], "mean": 3.0, "n_valid": 1,
                                                  "n_invalid": 1}
    assert m["absolute"]["other"]["feasibility"]["n_invalid"] == 1  # absent line
    # pairwise novelty, fixed bounds: q1 ours S = +2 (base) +0 (flip) = 2 -> 3 + 2/2 = 4; q2 ours: +1 (base, one
    # valid call) + 0 (two ties) -> 3.5; q3 ours lost twice to base, N = 2 -> 1. Mean 8.5 / 3
    assert m["pairwise"]["ours"]["novelty"]["score"] == pytest.approx(8.5 / 3, abs=1e-15)
    assert m["pairwise"]["ours"]["novelty"]["n_questions"] == 3  # q4 has a single idea
    b = m["position_bias"]["novelty"]
    # novelty pairs: consistent q1 base-ours, q2 other-ours (tie-tie), q3 base-ours; flip q1 other-ours; partial
    # q1 base-other; lost q2 base-ours, q2 base-other
    assert (b["pairs_compared"], b["consistent"], b["flips"], b["partial"], b["pairs_lost_invalid"]) == (5, 3, 1, 1, 2)
    assert m["notes"] and "single idea" in m["notes"][0]
    assert m["summary"]["absolute"]["novelty"] == 4.0  # ours is the first system of the first question


def test_metrics_without_per_doc_counts_give_the_same_means_and_no_intervals(run):
    loaded, decisions, _, payloads = run
    labels = _judge_labels(decisions)
    counts = [TASK.counts(p, labels.get(p["question_id"], {})) for p in payloads]
    full, bare = TASK.metrics(sum_nested(counts), counts), TASK.metrics(sum_nested(counts), None)
    for system, row in full["pairwise"].items():
        for c, cell in row.items():
            assert bare["pairwise"][system][c]["score"] == pytest.approx(cell["score"], abs=1e-12)
            assert bare["pairwise"][system][c]["ci"] is None
    assert bare["absolute"]["ours"]["novelty"]["mean"] == 4.0 and bare["absolute"]["ours"]["novelty"]["ci"] is None


def test_outcomes(run):
    loaded, decisions, _, payloads = run
    labels = _judge_labels(decisions)
    outcomes = {p["question_id"]: TASK.outcome(p, TASK.counts(p, labels.get(p["question_id"], {})))
                for p in payloads}
    assert outcomes == {"q1": "invalid", "q2": "invalid", "q3": "split", "q4": "clean"}


def test_a_review_sets_both_calls(run):
    loaded, decisions, _, payloads = run
    labels = _judge_labels(decisions)
    q1 = next(p for p in payloads if p["question_id"] == "q1")
    reviewed = {**labels["q1"], ("comparison", "novelty", "other", "ours"): "b"}
    before, after = TASK.counts(q1, labels["q1"]), TASK.counts(q1, reviewed)
    # the flip (0 for both) becomes ours winning twice: ours S 2 -> 4, other S -> -2 lower
    assert before["pairwise"]["ours"]["novelty"]["S"] == 2 and after["pairwise"]["ours"]["novelty"]["S"] == 4
    assert after["position_bias"]["novelty"]["flips"] == 0


def test_bad_bounds_option_is_an_input_error(run):
    with pytest.raises(ValueError, match="bounds must be one of"):
        TASK.metrics({}, [], {"bounds": "loose"})


def test_judge_specs(monkeypatch):
    assert TASK.make_judge("file").spec == "file"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert TASK.make_judge("openai:m").spec == "openai:m"
    with pytest.raises(JudgeSpecError, match="openai:MODEL"):
        TASK.make_judge("exact")


def test_live_judge_asks_every_rating_and_both_orders_and_reasks_unreadable_once(monkeypatch, tmp_path):
    """Through a scripted OpenAI-compatible server: Q x N x 3 ratings + Q x C(N,2) x 2 x 3 calls; a reply without
    the SCORE slot is asked again once with the format reminder; a re-run asks nothing (cache)."""
    from audit.runs import score_run
    from audit.store.database import open_db
    from devtools.judge_server import JudgeServer

    def script(prompt: str) -> str:
        if "Rate the idea" in prompt:
            if "Reply again" in prompt:
                return "Sorry.\nSCORE: 4"
            return "no slot here" if "novelty" in prompt.split("Criterion:")[-1][:40] else "Fine.\nSCORE: 3"
        return "A is better.\nWINNER: FIRST"

    with JudgeServer(script) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        db = open_db(tmp_path / "i.db")
        row = score_run(db, "ideation", {"ideas": INPUTS["ideas"]}, "openai:test", run="live")
        loaded = TASK.load({"ideas": INPUTS["ideas"]})
        n_ratings = sum(len(d.question.ideas) for d in loaded.docs) * 3
        n_calls = sum(len(d.question.ideas) * (len(d.question.ideas) - 1) for d in loaded.docs) * 3
        n_novelty = n_ratings // 3
        assert srv.answered == n_ratings + n_calls + n_novelty  # one re-ask per unreadable novelty rating
        assert row["summary"]["judge"]["invalid"] == 0
        m = row["original_metrics"]
        system = next(iter(m["absolute"]))
        assert m["absolute"][system]["novelty"]["mean"] == 4 and m["absolute"][system]["feasibility"]["mean"] == 3
        # every call says FIRST: each pair's two orders disagree on the winner, so both orders cancel to 3
        assert all(v["novelty"]["score"] == pytest.approx(3) for v in m["pairwise"].values())
        before = srv.answered
        score_run(db, "ideation", {"ideas": INPUTS["ideas"]}, "openai:test", run="again")
        assert srv.answered == before


def test_judge_log_replays_to_the_same_decisions(run, tmp_path):
    loaded, decisions, _, _ = run
    lines = TASK.judge_log(decisions)
    assert len(lines) == 17 + 17  # every rating line and call line that was in the inputs
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(x) + "\n" for x in lines))
    again = TASK.load({"ideas": INPUTS["ideas"]})
    replayed, _ = TASK.decide(again, TASK.make_judge(f"replay:{log}"), None, None)
    assert [(d.key, d.judge) for d in replayed] == [(d.key, d.judge) for d in decisions]
    rows = [{"doc_id": d.doc, "kind": d.kind, "type": d.type, "left": d.left, "right": d.right,
             "detail": json.dumps(d.detail)} for d in decisions]
    assert TASK.judge_log(rows) == lines


def test_live_judge_questions_and_records(run):
    loaded, *_ = run
    qs = [d.question for d in loaded.docs]
    built = questions(qs, ["novelty"], ["novelty"])
    # ratings: 9 ideas; calls: ordered pairs 6 + 6 + 2 + 0
    assert sum(k[0] == "rating" for k, *_ in built) == 9 and sum(k[0] == "comparison" for k, *_ in built) == 14
    key, template, fields, parser = next(b for b in built if b[0][0] == "comparison")
    text = template.render(**fields)
    assert fields["IDEA_FIRST"] in text and parser("...\nWINNER: SECOND").value == "second"
    ratings, verdicts = records_from_answers({("rating", "q1", "ours", "novelty"): (Parsed("4", None, "ok"), "r"),
                                              key: (Parsed("invalid", "no slot"), "x")})
    assert ratings == [Rating("q1", "ours", "novelty", 4, "ok", "r")]
    assert verdicts[0].verdict == "invalid" and "no slot" in verdicts[0].rationale


# ------------------------------------------------------------------------- the invariant under random reviews

def _judge_labels(decisions) -> dict:
    out: dict = {}
    for d in decisions:
        out.setdefault(d.doc, {})[(d.kind, d.type, d.left, d.right)] = d.judge
    return out


def _pure(loaded, reviews: dict, bounds: str) -> dict:
    """ideation_scores over the input records with each reviewed decision's answer substituted."""
    qs = [d.question for d in loaded.docs]
    ratings: dict = {}
    calls: dict = {}
    for d in loaded.docs:
        for (s, c), r in d.ratings.items():
            ratings[(d.question.question_id, s, c)] = r
        for (c, f, s), v in d.calls.items():
            calls[(d.question.question_id, c, f, s)] = v
    for (doc, kind, typ, left, right), label in reviews.items():
        if kind == "rating":
            ratings[(doc, left, typ)] = Rating(doc, left, typ, int(label))
        else:
            v_ab, v_ba = dec.slot_verdicts(label)
            calls[(doc, typ, left, right)] = Verdict(doc, typ, left, right, v_ab)
            calls[(doc, typ, right, left)] = Verdict(doc, typ, right, left, v_ba)
    d0 = loaded.docs[0]
    return ideation_scores(pools_of(qs), list(ratings.values()), list(calls.values()),
                           absolute_criteria=d0.absolute_criteria, pairwise_criteria=d0.pairwise_criteria,
                           bounds=bounds)


def _random_run(tmp: Path, draw) -> dict:
    """A random run: 1-6 questions, pools of 1-4 of 5 systems, 1-2 criteria, random (also invalid) answers and
    some lines left out."""
    systems = ["s1", "s2", "s3", "s4", "s5"]
    crits = draw(st.lists(st.sampled_from(["novelty", "feasibility"]), min_size=1, max_size=2, unique=True))
    ideas, ratings, calls = [], [], []
    for q in range(draw(st.integers(1, 6))):
        pool = draw(st.lists(st.sampled_from(systems), min_size=1, max_size=4, unique=True))
        for s in pool:
            ideas.append({"question_id": f"q{q}", "question": "Q?", "system": s, "idea": f"idea {s}"})
            for c in crits:
                if draw(st.integers(0, 9)):
                    ratings.append({"question_id": f"q{q}", "system": s, "criterion": c,
                                    "score": draw(st.sampled_from([1, 2, 3, 4, 5, None]))})
        for c in crits:
            for a in pool:
                for b in pool:
                    if a != b and draw(st.integers(0, 9)):
                        calls.append({"question_id": f"q{q}", "criterion": c, "first": a, "second": b,
                                      "verdict": draw(st.sampled_from(["first", "second", "tie", "invalid"]))})
    files = {}
    for name, rows in (("ideas", ideas), ("absolute", ratings), ("pairwise", calls)):
        if not rows:  # an empty ratings file is refused: a run without ratings leaves the input out
            continue
        p = tmp / f"{name}.jsonl"
        p.write_text("".join(json.dumps(r) + "\n" for r in rows))
        files[name] = str(p)
    return files


@settings(max_examples=40, derandomize=True, deadline=None)
@given(st.data())
def test_audited_metrics_equal_pure_scores_with_reviewed_answers(tmp_path_factory, data):
    tmp = tmp_path_factory.mktemp("run")
    loaded = TASK.load(_random_run(tmp, data.draw))
    decisions, _ = TASK.decide(loaded, TASK.make_judge("file"), None, None)
    reviewed = data.draw(st.lists(st.sampled_from(decisions), unique_by=lambda d: d.key)) if decisions else []
    reviews = {}
    for d in reviewed:
        scheme = TASK.label_schemes[d.kind]
        reviews[d.key] = data.draw(st.sampled_from(scheme.labels))
    labels = _judge_labels(decisions)
    for (doc, *rest), label in reviews.items():
        labels[doc][tuple(rest)] = label
    counts = [TASK.counts(TASK.payload(d), labels.get(d.question.question_id, {})) for d in loaded.docs]
    bounds = data.draw(st.sampled_from(["fixed", "valid"]))
    assert TASK.metrics(sum_nested(counts), counts, {"bounds": bounds}) == _pure(loaded, reviews, bounds)


def test_reviews_through_the_store_give_the_pure_scores_with_reviewed_answers(tmp_path):
    from audit.rescoring import audit_run
    from audit.review.reviews import add_review
    from audit.runs import score_run
    from audit.store.database import open_db
    from audit.views import decisions as stored_decisions

    db = open_db(tmp_path / "r.db")
    score_run(db, "ideation", INPUTS, "file", run="fix", options={"bounds": "valid"})
    rows = {(d["doc"], d["kind"], d["type"], d["left"], d["right"]): d for d in stored_decisions(db, "fix")}
    reviews = {("q1", "comparison", "novelty", "other", "ours"): "b", ("q2", "rating", "feasibility", "other", ""): "2",
               ("q2", "comparison", "novelty", "base", "ours"): "tie"}
    for key, label in reviews.items():
        add_review(db, "fix", rows[key]["id"], label, "ann")
    loaded = TASK.load(INPUTS)
    expected = _pure(loaded, reviews, "valid")
    assert audit_run(db, "fix").metrics == expected
    assert audit_run(db, "fix", rebuild=True).metrics == expected


def test_human_verdict_meets_each_judge_call(tmp_path):
    """Agreement for comparisons: a human verdict is compared with each valid call (both orders), not once."""
    from audit.outputs.agreement import agreement
    from audit.review.reviews import add_review
    from audit.runs import score_run
    from audit.store.database import open_db
    from audit.views import decisions

    db = open_db(tmp_path / "a.db")
    score_run(db, "ideation", INPUTS, "file", run="r")
    comps = [d for d in decisions(db, "r") if d["kind"] == "comparison"]
    for d in comps:
        add_review(db, "r", d["id"], "a", "ana")
    votes = [TASK.judge_votes(d) for d in comps]
    a = agreement(db, "r", n_resamples=0)["human_vs_judge"]
    assert a["comparison"]["n"] == sum(len([v for v in vs if v != "invalid"]) for vs in votes) > len(comps)
