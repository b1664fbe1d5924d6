"""The retrieval family in the shell's terms: decisions, per-query counts and the audited-metrics invariant."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.errors import InputError, JudgeSpecError
from scoring.families import TASKS
from scoring.families.base import sum_nested
from scoring.families.retrieval.family import RetrievalTask, metrics_with_policy
from scoring.families.retrieval.metrics import full_report, ranking_metrics
from scoring.families.retrieval.model import TIE_POLICIES
from tests.conftest import ROOT, write_jsonl
from tests.families.retrieval.rankings import line

TASK = RetrievalTask()


def _run(tmp_path, rows, judge="gold-only"):
    p = write_jsonl(tmp_path / "r.jsonl", rows)
    loaded = TASK.load({"pred": str(p)})
    decisions, stats = TASK.decide(loaded, TASK.make_judge(judge), None, None)
    return loaded, decisions, stats


def _labels(decisions, doc, accepted=()):
    return {(d.kind, d.type, d.left, d.right): "acceptable" if d.left in accepted else d.judge
            for d in decisions if d.doc == doc}


def _audited(loaded, decisions, accepted):
    per_doc = [TASK.counts(TASK.payload(q), _labels(decisions, q.id, accepted.get(q.id, ()))) for q in loaded.docs]
    return TASK.metrics(sum_nested(per_doc), per_doc), per_doc


def test_registered_and_shaped_for_the_shell():
    assert isinstance(TASKS["retrieval"], RetrievalTask)
    assert TASK.judge_specs == ("gold-only",) and [i.name for i in TASK.inputs] == ["pred"]
    scheme = TASK.label_schemes["candidate"]
    assert scheme.scale == "binary" and scheme.labels == ("acceptable", "not-acceptable")
    assert scheme.positive == "acceptable"
    assert [c.path for c in TASK.headline] == [("all", "mrr"), ("all", "hits@10"), ("all", "median_rank")]
    assert TASK.headline[2].higher_is_better is False and TASK.needs_doc_counts


def test_one_not_acceptable_decision_per_candidate_above_or_tied_with_the_gold(tmp_path):
    loaded, decisions, stats = _run(tmp_path, [line([0.9, 0.8, 0.8, 0.8, 0.5], 2, qid="q1"),
                                               line([0.7, 0.1], 0, qid="q2", relation="inspiration")])
    assert [(d.doc, d.kind, d.type, d.left, d.right, d.judge) for d in decisions] == [
        ("q1", "candidate", "combination", c, "c2", "not-acceptable") for c in ("c0", "c1", "c3")]
    assert [d.detail["rank"] for d in decisions] == [1, 2, 4]
    assert [d.detail["tied_with_gold"] for d in decisions] == [False, True, True]
    assert decisions[0].detail["score"] == 0.9 and decisions[0].detail["text"] == "text 0"
    assert len({d.key for d in decisions}) == len(decisions)
    assert stats.distinct_queries == 3 and stats.invalid == stats.missing == 0


def test_original_metrics_equal_the_pure_metrics(tmp_path):
    rows = [line([0.9, 0.8, 0.8, 0.8, 0.5], 2, qid="q1", cross=True), line([0.7, 0.1], 1, qid="q2", cross=False)]
    loaded, decisions, _ = _run(tmp_path, rows)
    m, per_doc = _audited(loaded, decisions, {})
    assert m == full_report(loaded.docs)
    assert m["all"]["mr"] == 2.5 and m["cross_domain"]["n"] == 1  # mean ranks 3 and 2
    for policy in TIE_POLICIES:
        assert metrics_with_policy(per_doc, policy) == ranking_metrics(loaded.docs, policy)


def test_accepting_a_candidate_moves_the_gold_up(tmp_path):
    loaded, decisions, _ = _run(tmp_path, [line([0.9, 0.8, 0.8, 0.8, 0.5], 2, qid="q1")])
    m, per_doc = _audited(loaded, decisions, {"q1": {"c0", "c3"}})
    assert per_doc[0]["all"]["mean"]["rank"] == 1.5  # block 1-2 after removing c0 (above) and c3 (tied)
    assert m["all"]["mrr"] == pytest.approx((1 + 1 / 2) / 2) and m["tie_policies"]["optimistic"]["all"]["mr"] == 1
    assert TASK.outcome(TASK.payload(loaded.docs[0]), per_doc[0]) == "top 10"


def test_metrics_from_sums_alone_lack_only_the_median(tmp_path):
    loaded, decisions, _ = _run(tmp_path, [line([0.9, 0.8, 0.8, 0.8, 0.5], 2, qid="q1"), line([0.7, 0.1], 0)])
    _, per_doc = _audited(loaded, decisions, {})
    m = TASK.metrics(sum_nested(per_doc))
    ref = full_report(loaded.docs)
    assert m["all"]["median_rank"] is None
    assert m["all"]["mr"] == pytest.approx(ref["all"]["mr"]) and m["all"]["mrr"] == pytest.approx(ref["all"]["mrr"])


def test_replay_judge_and_judge_log_round_trip(tmp_path):
    rows = [line([0.9, 0.8, 0.8, 0.8, 0.5], 2, qid="q1")]
    log = write_jsonl(tmp_path / "log.jsonl", [{"query_id": "q1", "candidate_id": "c0", "answer": "acceptable"},
                                               {"query_id": "q1", "candidate_id": "c1", "answer": "maybe"}])
    loaded, decisions, stats = _run(tmp_path, rows, f"replay:{log}")
    assert [d.judge for d in decisions] == ["acceptable", "invalid", "invalid"]  # c3 is not in the log: missing
    assert stats.invalid == 1 and stats.missing == 1
    assert TASK.judge_log(decisions) == [{"query_id": "q1", "candidate_id": "c0", "answer": "acceptable"}]
    m, _ = _audited(loaded, decisions, {})
    assert m["all"]["mr"] == 2  # c0 accepted by the log: block 1-3, mean rank 2


def test_judge_specs_and_inputs_are_checked(tmp_path):
    with pytest.raises(JudgeSpecError):
        TASK.make_judge("exact")
    with pytest.raises(InputError, match="only --pred"):
        TASK.load({"pred": "x", "gold": "y"})
    bad = write_jsonl(tmp_path / "log.jsonl", ['{"query_id": "q", "candidate_id": "c", "answer": 1}'])
    with pytest.raises(InputError, match="'answer' must be a string"):
        TASK.make_judge(f"replay:{bad}")


def test_payload_round_trips_through_json(tmp_path):
    loaded, _, _ = _run(tmp_path, [line([0.9, 0.3, 0.2], 2, qid="q", positive_index=7, n_candidates=9,
                                        gold_block=[8, 8])])
    q = loaded.docs[0]
    again = json.loads(json.dumps(TASK.payload(q)))
    assert TASK.counts(again, {}) == TASK.counts(TASK.payload(q), {})
    assert TASK.doc_id(q) == "q"


def test_demo_run_is_offered_from_the_bundled_data(tmp_path):
    runs = TASK.demo_runs(ROOT / "data")
    assert [r.judge for r in runs] == ["gold-only", "gold-only"] and {r.board for r in runs} == {"demo-retrieval"}
    assert runs[0].inputs["pred"].endswith("data/retrieval/demo_rankings.jsonl")
    assert runs[1].inputs["pred"].endswith("data/retrieval/demo_rankings_bm25.jsonl")
    assert TASK.demo_runs(tmp_path) == []


# ---------------------------------------------------------------- invariant on random rankings and reviews


@st.composite
def ranking_lines(draw, qid):
    n = draw(st.integers(1, 30))
    scores = sorted(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), reverse=True)
    gold = draw(st.integers(0, n - 1))
    relation = draw(st.sampled_from(["combination", "inspiration"]))
    cross = draw(st.sampled_from([None, True, False]))
    return line([float(s) for s in scores], gold, qid=qid, relation=relation, cross=cross)


@st.composite
def runs(draw):
    rows = [draw(ranking_lines(f"q{i}")) for i in range(draw(st.integers(1, 6)))]
    return rows, draw(st.randoms(use_true_random=False))


def _oracle_rank(rec, accepted, policy):
    """The gold's rank counted afresh after deleting the accepted candidates from the ranking."""
    gold = rec["positive_id"]
    s = dict(zip(rec["candidates"], rec["scores"], strict=True))
    rest = [c for c in rec["candidates"] if c not in accepted and c != gold]
    above = sum(s[c] > s[gold] for c in rest)
    tied = sum(s[c] == s[gold] for c in rest)
    return {"optimistic": above + 1, "pessimistic": above + tied + 1, "mean": above + 1 + tied / 2}[policy]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(runs())
def test_audited_metrics_equal_pure_metrics_with_accepted_candidates_removed(tmp_path_factory, run):
    rows, rnd = run
    tmp = tmp_path_factory.mktemp("inv")
    loaded, decisions, _ = _run(tmp, rows)
    accepted = {q.id: {d.left for d in decisions if d.doc == q.id and rnd.random() < 0.4} for q in loaded.docs}
    m, per_doc = _audited(loaded, decisions, accepted)
    assert m == full_report(loaded.docs, accepted)
    for rec, counts in zip(rows, per_doc, strict=True):
        for policy in TIE_POLICIES:
            assert counts["all"][policy]["rank"] == _oracle_rank(rec, accepted[rec["id"]], policy)


def test_ties_option_picks_the_top_level_policy(tmp_path):
    loaded, decisions, _ = _run(tmp_path, [line([0.9, 0.8, 0.8, 0.8, 0.5], 2, qid="q1")])
    per_doc = [TASK.counts(TASK.payload(q), _labels(decisions, q.id)) for q in loaded.docs]
    assert [o.name for o in TASK.options] == ["ties"] and TASK.options[0].choices[0] == "mean"
    for policy, mr in (("mean", 3), ("optimistic", 2), ("pessimistic", 4)):
        m = TASK.metrics(sum_nested(per_doc), per_doc, {"ties": policy})
        assert m["all"]["mr"] == mr and m["tie_policy"] == policy
        assert m["tie_policies"]["mean"]["all"]["mr"] == 3
    with pytest.raises(InputError, match="tie policy"):
        TASK.metrics(sum_nested(per_doc), per_doc, {"ties": "random"})


def test_equal_answers_share_one_detail_dict_and_keep_their_fields():
    """A gold-only judge gives every candidate the same answer: one dict for all of them (a dict each held 150 MB
    of a 10,000-query run, #38), with the fields `answer_dict` gives."""
    loaded = TASK.load({"pred": str(ROOT / "data" / "retrieval" / "demo_rankings.jsonl")})
    decisions, _ = TASK.decide(loaded, TASK.make_judge("gold-only"), None, None)
    assert len(decisions) > 10_000
    assert len({id(d.detail["answer"]) for d in decisions}) == 1
    assert decisions[0].detail["answer"] == {"value": "no",
                                             "rationale": "only the gold answer counts (benchmark assumption)"}
