"""The pieces behind the review loop and the abstract page: queue ids, the change strip, gold errata, which judge
humans side with, span highlighting, over-matching. Small hand-made cases and invariants against the slow path."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.effective import POLICIES
from audit.errors import AuditError
from audit.outputs.compare_humans import humans_vs_judges
from audit.outputs.errata_export import export_errata_csv
from audit.review.errata import add_erratum, current_errata, history, withdraw_erratum
from audit.review.queue import QUEUES, decision_view, describe_change, labelled_count, queue_ids
from audit.review.reviews import add_review, reviewer_labels
from audit.views import decisions, load_view
from devtools.queue_oracle import queue
from scoring.families import get_task
from tests.conftest import GOLD, PRED_MIXED
from ui.families.chimera import doc_count_rows, over_matching
from ui.highlight import highlight_html, trim

RUN = "mixed"


@pytest.fixture
def reviewed_run(db_with_run):
    db = db_with_run
    decs = list(decisions(db, RUN))
    for d in decs[:30]:
        add_review(db, RUN, d["id"], "match", "ana")
    for d in decs[10:20]:
        add_review(db, RUN, d["id"], "no-match", "bo")
    for d in decs[10:14]:
        add_review(db, RUN, d["id"], "no-match", "dee")  # 2-1 splits: settled by the majority, not unanimously
    add_review(db, RUN, decs[0]["id"], None, "ana")  # ana withdraws her first label
    for d in decs[14:16]:  # cy adjudicates two 1-1 splits: labels of cy's own
        add_review(db, RUN, d["id"], "match", "cy", role="adjudicator")
    return db


@pytest.mark.parametrize("policy", list(POLICIES))
@pytest.mark.parametrize("mode", [q for q in QUEUES if q != "sample"])  # the sample follows the stored plan
@pytest.mark.parametrize("who", ["ana", "bo", "cy", "eve"])
def test_queue_ids_equal_the_queue_over_every_decision(reviewed_run, mode, who, policy):
    view = load_view(reviewed_run, RUN, policy)
    decs = view.decisions()
    assert queue_ids(reviewed_run, view, who, mode) == [d["id"] for d in queue(decs, who, mode)]
    types = sorted({d["type"] for d in decs})[:1]
    assert queue_ids(reviewed_run, view, who, mode, types=types, judge_labels=["match"], doc="21") == [
        d["id"] for d in queue(decs, who, mode, types=types, judge_labels=["match"], doc="21")]
    if policy == "unanimous":  # a name reads the default policy
        assert queue_ids(reviewed_run, RUN, who, mode) == queue_ids(reviewed_run, view, who, mode)


def test_the_conflicted_queue_follows_the_policy(reviewed_run):
    unanimous, majority = (set(queue_ids(reviewed_run, load_view(reviewed_run, RUN, p), "ana", "conflicted"))
                           for p in ("unanimous", "majority"))
    assert len(unanimous) == 8 and len(majority) == 4 and majority < unanimous  # 2 of the 10 splits adjudicated


def test_sample_queue_serves_the_plan_in_order_and_skips_what_you_labelled(reviewed_run):
    from audit.review.sampling import create_plan, load_plan

    assert queue_ids(reviewed_run, RUN, "ana", "sample") == []  # no plan yet
    create_plan(reviewed_run, RUN, seed=4)
    plan = load_plan(reviewed_run, RUN)
    settled = {d["id"] for d in decisions(reviewed_run, RUN) if d["source"] in ("human", "majority", "adjudicated")}
    blocks = sorted(plan.blocks, key=lambda b: (b.stratum not in plan.take_all, b.rank))
    open_blocks = [b for b in blocks if not {int(u) for u in b.units} <= settled]  # settled whole: nothing to draw
    order = [int(u) for b in open_blocks for u in b.units]
    mine = {d["id"] for d in decisions(reviewed_run, RUN) if "ana" in d["human"]}
    assert len(open_blocks) < len(blocks)  # the case at stake: some documents are settled already
    assert queue_ids(reviewed_run, RUN, "ana", "sample") == [i for i in order if i not in mine]


@pytest.mark.parametrize("policy", list(POLICIES))
def test_decision_view_matches_the_run_listing(reviewed_run, policy):
    view = load_view(reviewed_run, RUN, policy)
    for d in view.decisions()[:25]:
        assert decision_view(reviewed_run, view, d["id"]) == d
    assert labelled_count(reviewed_run, RUN, "ana") == 29 and labelled_count(reviewed_run, RUN, "bo") == 10
    assert [len(reviewer_labels(reviewed_run, RUN, who)) for who in ("ana", "bo")] == [29, 10]


def test_describe_change_names_counts_and_scores():
    task = get_task("chimera")
    from scoring.families.chimera.scorer import empty_counts
    before = empty_counts()
    before["entities"]["comb-element"].update(tp=70, fp=30, fn=30)
    after = {s: {t: dict(c) for t, c in v.items()} for s, v in before.items()}
    after["entities"]["comb-element"].update(tp=71, fp=29, fn=29)
    b, a = task.metrics(before), task.metrics(after)
    text = describe_change(task, 7, "no match", b, a)
    assert text.startswith("#7 → no match · entities comb-element tp 70→71 · entities comb-element fp 30→29")
    delta = a["entities"]["avg"]["f1"] - b["entities"]["avg"]["f1"]  # 0.71/3 - 0.70/3 (one of three types)
    assert abs(delta - 0.01 / 3) < 1e-12
    assert f"entity F1 (macro avg) {delta:+.4f}" in text
    assert describe_change(task, 3, None, b, b) == "#3 → label withdrawn · no score changed"


def test_errata_are_append_only_superseded_and_withdrawn(db_with_run):
    db = db_with_run
    doc = decisions(db, RUN)[0]["doc"]
    add_erratum(db, RUN, doc, "comb-element: x", "wrong item", "ana", correction="y", note="n1")
    add_erratum(db, RUN, doc, "comb-element: x", "wrong type", "ana", correction="z")  # supersedes ana's flag
    add_erratum(db, RUN, doc, "comb-element: x", "wrong item", "bo")
    add_erratum(db, RUN, doc, "", "missing item", "bo", correction="comb-element: w")
    cur = current_errata(db, RUN)
    assert [(f["reviewer"], f["problem"], f["correction"]) for f in cur] == [
        ("ana", "wrong type", "z"), ("bo", "wrong item", None), ("bo", "missing item", "comb-element: w")]
    with pytest.raises(AuditError, match="only they can withdraw"):
        withdraw_erratum(db, RUN, cur[0]["id"], "bo")
    withdraw_erratum(db, RUN, cur[0]["id"], "ana")
    assert [f["reviewer"] for f in current_errata(db, RUN)] == ["bo", "bo"]
    assert len(history(db, RUN)) == 5  # nothing was deleted or rewritten
    for bad in (dict(problem="nonsense"), dict(doc_id="nope"), dict(item="", correction=None)):
        args = {"doc_id": doc, "item": "a", "problem": "other", "reviewer": "ana", **bad}
        with pytest.raises(AuditError):
            add_erratum(db, RUN, args.pop("doc_id"), args.pop("item"), args.pop("problem"), args.pop("reviewer"),
                        **args)
    csv_text = export_errata_csv(db, RUN)
    assert csv_text.splitlines()[0] == "benchmark,gold_file,document,gold_item,problem,correction,note,reviewer," \
                                       "created,decision"
    assert len(csv_text.splitlines()) == 3


def test_humans_vs_judges_hand_counted(db_with_run):
    from audit.runs import score_run
    db = db_with_run
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, "exact", run="exact")
    a = {(d["doc"], d["type"], d["left"], d["right"]): d for d in decisions(db, RUN)}
    b = {(d["doc"], d["type"], d["left"], d["right"]): d for d in decisions(db, "exact")}
    differ = [k for k in a if k in b and a[k]["judge"] != b[k]["judge"] and "invalid" not in
              (a[k]["judge"], b[k]["judge"])][:3]
    assert len(differ) == 3
    # ana sides with judge A on two decisions (in run A), bo with judge B on one (labelled in run B)
    add_review(db, RUN, a[differ[0]]["id"], a[differ[0]]["judge"], "ana")
    add_review(db, RUN, a[differ[1]]["id"], a[differ[1]]["judge"], "ana")
    add_review(db, "exact", b[differ[2]]["id"], b[differ[2]]["judge"], "bo")
    rows = humans_vs_judges(db, RUN, "exact")
    total = rows[-1]
    assert (total["kind"], total["decisions"], total["labels"], total["agree_a"], total["agree_b"]) == \
           ("all", 3, 3, 2, 1)
    assert total["closer"] == "A" and abs(total["diff"] - 1 / 3) < 1e-12


def test_highlight_never_swallows_surrounding_spaces():
    text = "we use  back translation , then"
    html = highlight_html(text, [(6, 25, "comb-element")], [])
    assert 'we use  <span class="rj-gold"' in html  # offsets 6..25 include two spaces before, one after
    assert '">back translation</span> , then' in html
    assert trim(text, 6, 25) == (8, 24)


@settings(derandomize=True, max_examples=200)
@given(st.text(alphabet="ab <>&\n", max_size=30), st.integers(-3, 33), st.integers(-3, 33))
def test_trim_stays_inside_and_drops_only_whitespace(text, s, e):
    a, b = trim(text, s, e)
    lo, hi = max(0, min(s, len(text))), max(0, min(e, len(text)))
    assert lo <= a <= b <= max(lo, hi)
    assert text[lo:hi].strip() == text[a:b] if lo <= hi else a == b
    if a < b:
        assert not text[a].isspace() and not text[b - 1].isspace()


def test_over_matching_is_flagged_where_it_happens():
    matched = [("comb-element", "p1", "g"), ("comb-element", "p2", "g"), ("comb-element", "p3", "h")]
    lines = over_matching(matched)
    assert len(lines) == 1 and "gold comb-element “g” is matched by 2 predicted spans (p1; p2)" in lines[0]


def test_doc_count_rows_show_original_to_audited():
    from scoring.families.chimera.scorer import empty_counts
    o = empty_counts()
    o["entities"]["comb-element"].update(tp=1, fn=1)
    a = {s: {t: dict(c) for t, c in v.items()} for s, v in o.items()}
    a["entities"]["comb-element"].update(tp=2, fn=0)
    rows = doc_count_rows(o, a)
    assert rows == [{"section": "entities", "type": "comb-element", "tp": "1 → 2", "fp": "0", "fn": "1 → 0",
                     "pred over-match": "0", "gold over-match": "0"}]
