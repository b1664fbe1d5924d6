"""Reviews: append-only, effective-label precedence, stale writes, and audited re-scoring."""

import json
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit.effective import POLICIES, effective_label
from audit.errors import BadLabel, StaleReview, UnknownDecision, UnknownRun
from audit.rescoring import audit_run
from audit.review.reviews import add_review
from audit.views import as_view, decisions, document, load_view
from scoring.families.chimera import scorer as chimera
from tests.store.conftest import review_unless_nothing_to_undo


def R(reviewer, label, role="reviewer"):  # noqa: N802 - a row builder for the table below
    return {"reviewer": reviewer, "label": label, "role": role}


@pytest.mark.parametrize(("judge", "reviews", "label", "source"), [
    ("match", [], "match", "judge"),
    ("match", [R("ana", "no-match")], "no-match", "human"),
    ("match", [R("ana", "no-match"), R("ana", "match")], "match", "human"),  # latest label of a reviewer wins
    ("match", [R("ana", "no-match"), R("ana", None)], "match", "judge"),  # undo
    ("match", [R("ana", "no-match"), R("bo", "no-match")], "no-match", "human"),
    ("match", [R("ana", "no-match"), R("bo", "match")], "match", "conflicted"),
    ("match", [R("ana", "no-match"), R("bo", "match"), R("cy", "no-match", "adjudicator")], "no-match",
     "adjudicated"),
    ("invalid", [R("ana", "match")], "match", "human"),
])
def test_effective_label_precedence(judge, reviews, label, source):
    e = effective_label(judge, reviews)
    assert (e.label, e.source) == (label, source)


def test_reviews_are_append_only_and_rescoring_is_immediate(db_with_run):
    db = db_with_run
    before = audit_run(db, "mixed")
    d = next(x for x in decisions(db, "mixed") if x["judge"] == "match" and x["left"] != x["right"])
    add_review(db, "mixed", d["id"], "no-match", "ana", note="spans differ")
    after = audit_run(db, "mixed")
    assert after.review_counts["overruled"] == 1 and after.review_counts["reviewed"] == 1
    assert after.metrics["entities"]["avg"]["f1"] < before.metrics["entities"]["avg"]["f1"]
    add_review(db, "mixed", d["id"], None, "ana")  # undo is a new row
    rows = list(db.query("SELECT label, note FROM reviews WHERE decision_id = ? ORDER BY id", [d["id"]]))
    assert rows == [{"label": "no-match", "note": "spans differ"}, {"label": None, "note": None}]
    assert audit_run(db, "mixed").metrics == before.metrics


def test_an_undo_by_someone_holding_no_label_stores_nothing(db_with_run, db_path, capsys, three_sharing_runs):
    """An undo withdraws a label its reviewer holds (on this decision, or on the same question in another run);
    with none held it is refused, so no row lists a non-reviewer among the reviewers."""
    from audit.cli import main
    from audit.errors import AuditError

    db = db_with_run
    d, twin = db.execute("SELECT d.id, t.id FROM decisions d JOIN decisions t ON t.qkey = d.qkey AND t.id != d.id "
                         "JOIN runs r ON r.id = d.run_id JOIN runs rt ON rt.id = t.run_id WHERE r.name = 'mixed' AND "
                         "rt.name = 'twin' ORDER BY d.id LIMIT 1").fetchone()
    with pytest.raises(AuditError, match=f"nothing to undo: 'zed' holds no label on decision {d}"):
        add_review(db, "mixed", d, None, "zed")
    assert main(["--db", str(db_path), "review", "--run", "mixed", "--decision", str(d), "--label", "undo",
                 "--reviewer", "zed"]) == 2
    assert "nothing to undo" in capsys.readouterr().err
    add_review(db, "mixed", d, "match", "ana", role="adjudicator")
    with pytest.raises(AuditError, match="'ana' holds no label") as refused:  # an adjudication is not a label
        add_review(db, "mixed", d, None, "ana")
    assert str(refused.value).endswith("they adjudicated it: withdraw an adjudication as the adjudicator "
                                       "(`--role adjudicator`)")  # it said only that she held none
    assert db.execute("SELECT COUNT(*) FROM reviews").fetchone()[0] == 1
    add_review(db, "twin", twin, "no-match", "bo")  # the same question, labelled in the other run
    add_review(db, "mixed", d, None, "bo")  # ... is withdrawn here
    add_review(db, "mixed", d, None, "ana", role="adjudicator")
    assert audit_run(db, "mixed").review_counts["reviewed"] == 0
    with pytest.raises(AuditError, match="holds no adjudication"):
        add_review(db, "mixed", d, None, "ana", role="adjudicator")


def test_the_cli_undo_is_the_cards_undo(db_with_run, db_path, capsys):
    """`review --label undo` gives back the label held before the reviewer's last one, as both cards do
    (`undo_label`); undoing a first label withdraws it; a second undo undoes the first."""
    from audit.cli import main

    d = next(x for x in decisions(db_with_run, "mixed") if x["judge"] != "invalid")["id"]

    def review(label: str) -> None:
        assert main(["--db", str(db_path), "review", "--run", "mixed", "--decision", str(d), "--label", label,
                     "--reviewer", "dan"]) == 0
        capsys.readouterr()

    def held() -> str | None:
        return next(x for x in decisions(db_with_run, "mixed") if x["id"] == d)["human"].get("dan")

    review("match")
    review("no-match")
    review("undo")
    assert held() == "match"  # back to dan's label before the last one (it withdrew dan altogether)
    review("undo")
    assert held() == "no-match"  # the undo undone
    rows = list(db_with_run.query("SELECT label, note FROM reviews WHERE decision_id = ? ORDER BY id", [d]))
    assert [r["label"] for r in rows] == ["match", "no-match", "match", "no-match"]
    assert [r["note"] for r in rows[2:]] == ["undo of the previous review"] * 2
    e = next(x for x in decisions(db_with_run, "mixed") if x["judge"] != "invalid" and x["id"] != d)["id"]
    d = e
    review("match")
    review("undo")
    assert held() is None  # a first label undone: withdrawn


def test_an_adjudicators_undo_never_overwrites_a_later_adjudication_by_someone_else(db_with_run, db_path, capsys):
    """adam adjudicated, then olga; adam's undo stored the adjudication held before his (none) as the newest one,
    and olga's settlement stopped counting, unsaid. Now it is refused on every surface (they share `undo_label`),
    nothing is stored, and adam's own undo still works when nobody adjudicated after him."""
    from audit.cli import main

    d = next(x for x in decisions(db_with_run, "mixed") if x["judge"] != "invalid")["id"]
    add_review(db_with_run, "mixed", d, "match", "adam", role="adjudicator")
    add_review(db_with_run, "mixed", d, "no-match", "olga", role="adjudicator")
    rows_before = db_with_run.execute("SELECT COUNT(*) FROM reviews").fetchone()[0]
    assert main(["--db", str(db_path), "review", "--run", "mixed", "--decision", str(d), "--label", "undo",
                 "--reviewer", "adam", "--role", "adjudicator"]) == 2
    assert "'olga' adjudicated this decision after you" in capsys.readouterr().err
    assert db_with_run.execute("SELECT COUNT(*) FROM reviews").fetchone()[0] == rows_before
    e = as_view(db_with_run, "mixed").effective[d]
    assert (e.label, e.source, e.adjudicator) == ("no-match", "adjudicated", "olga")
    assert main(["--db", str(db_path), "review", "--run", "mixed", "--decision", str(d), "--label", "undo",
                 "--reviewer", "olga", "--role", "adjudicator"]) == 0  # hers is the newest: back to adam's
    e = as_view(db_with_run, "mixed").effective[d]
    assert (e.label, e.source) == ("match", "adjudicated")


def test_confirming_changes_nothing_but_counts(db_with_run):
    original = db_with_run.execute("SELECT original_metrics FROM runs WHERE name = 'mixed'").fetchone()[0]
    d = next(x for x in decisions(db_with_run, "mixed") if x["judge"] != "invalid")
    add_review(db_with_run, "mixed", d["id"], d["judge"], "ana")
    a = audit_run(db_with_run, "mixed")
    assert a.metrics == json.loads(original)
    assert a.review_counts["confirmed"] == 1 and a.review_counts["overruled"] == 0


def test_review_errors(db_with_run):
    with pytest.raises(UnknownDecision, match="decision 999999 is not in run 'mixed'"):
        add_review(db_with_run, "mixed", 999999, "match", "ana")
    with pytest.raises(UnknownRun, match="unknown run 'nope'; runs in this database: mixed"):
        add_review(db_with_run, "nope", 1, "match", "ana")
    with pytest.raises(BadLabel, match="label 'yes' is not allowed for entity_pair decisions"):
        add_review(db_with_run, "mixed", 1, "yes", "ana")
    first = add_review(db_with_run, "mixed", 1, "match", "ana", expect_last_review=0)
    with pytest.raises(StaleReview):
        add_review(db_with_run, "mixed", 1, "no-match", "bo", expect_last_review=0)
    add_review(db_with_run, "mixed", 1, "no-match", "bo", expect_last_review=first["id"])


def test_incremental_audit_equals_full_recompute(db_with_run):
    """Random reviews: the incremental audited metrics equal aggregate() over all effective labels."""
    db = db_with_run
    rng = random.Random(7)
    all_decs = list(decisions(db, "mixed"))
    for d in rng.sample(all_decs, 60):
        add_review(db, "mixed", d["id"], rng.choice(["match", "no-match"]), rng.choice(["ana", "bo"]))
    audited = audit_run(db, "mixed").metrics
    docs, preds, labels = [], {}, {}
    for r in db.query("SELECT doc_id FROM documents WHERE run_id = 1 ORDER BY idx"):
        dd, pp = chimera.doc_from_json(document(db, "mixed", r["doc_id"])["payload"])
        docs.append(dd)
        preds[dd.paper_id] = pp
    for d in decisions(db, "mixed"):
        labels[(d["doc"], d["type"], d["left"], d["right"])] = d["effective"]
    assert audited == chimera.aggregate(docs, preds, labels)


def test_incremental_state_matches_a_rebuild_after_every_step(db_with_run):
    db = db_with_run
    rng = random.Random(11)
    ids = [d["id"] for d in decisions(db, "mixed")]
    for step in range(40):
        d = rng.choice(ids[:30])  # few decisions, so labels are changed, undone and conflicted repeatedly
        label = rng.choice(["match", "no-match", None])
        review_unless_nothing_to_undo(db, "mixed", d, label, rng.choice(["ana", "bo"]),
                                      role="adjudicator" if step == 25 else "reviewer")
        inc = audit_run(db, "mixed")
        if step % 10 == 9:
            full = audit_run(db, "mixed", rebuild=True)
            assert (inc.metrics, inc.counts, inc.changed_docs, inc.review_counts) == \
                (full.metrics, full.counts, full.changed_docs, full.review_counts)


@pytest.mark.parametrize(("reviews", "policy", "label", "source"), [
    ([R("ana", "no-match"), R("bo", "no-match"), R("cy", "match")], "unanimous", "match", "conflicted"),
    ([R("ana", "no-match"), R("bo", "no-match"), R("cy", "match")], "majority", "no-match", "majority"),
    ([R("ana", "no-match"), R("bo", "match")], "majority", "match", "conflicted"),  # a tie keeps the judge's
    ([R("ana", "no-match"), R("bo", "match"), R("cy", "match", "adjudicator")], "majority", "match", "adjudicated"),
])
def test_effective_label_policies(reviews, policy, label, source):
    e = effective_label("match", reviews, policy)
    assert (e.label, e.source) == (label, source)


_ROWS = st.lists(st.builds(R, st.sampled_from(["ana", "bo", "cy"]), st.sampled_from(["match", "no-match", None]),
                           st.sampled_from(["reviewer", "reviewer", "adjudicator"])), max_size=8)


@given(_ROWS, st.sampled_from(sorted(POLICIES)), st.sampled_from(["match", "no-match", "invalid"]))
def test_conflicted_is_reviewed_and_not_settled_for_every_review_history(rows, policy, judge):
    # the board's counts, its queue and the review queue's filter all ask `Effective.conflicted`; a decision is
    # exactly one of unreviewed, settled by humans, or conflicted
    e = effective_label(judge, rows, policy)
    assert e.conflicted == (e.reviewed and not e.settled_by_humans)
    assert sum([not e.reviewed, e.settled_by_humans, e.conflicted]) == 1
    if e.conflicted:
        assert e.label == judge and len(set(e.human_labels.values())) > 1


def test_majority_policy_scores_in_memory_and_is_exported(db_with_run):
    import json as _json

    from audit.outputs.export import export_json

    d = next(x for x in decisions(db_with_run, "mixed") if x["judge"] == "match" and x["left"] != x["right"])
    for who, lab in (("ana", "no-match"), ("bo", "no-match"), ("cy", "match")):
        add_review(db_with_run, "mixed", d["id"], lab, who)
    unanimous, majority = audit_run(db_with_run, "mixed"), audit_run(db_with_run, "mixed", policy="majority")
    assert unanimous.metrics == _json.loads(db_with_run.execute(
        "SELECT original_metrics FROM runs WHERE name = 'mixed'").fetchone()[0])  # conflicted: judge stands
    assert majority.metrics["entities"] != unanimous.metrics["entities"]
    assert export_json(db_with_run, "mixed", policy="majority")["effective_label_policy"]["name"] == "majority"


@pytest.mark.parametrize("policy", list(POLICIES))
def test_every_read_of_a_view_agrees_with_its_decisions(db_with_run, policy):
    """Counts per document and per type, review counts and the audited totals all follow the view's decisions."""
    rng = random.Random(3)
    decs = decisions(db_with_run, "mixed")
    for d in rng.sample(decs, 40):
        for who in rng.sample(["ana", "bo", "cy"], rng.randint(1, 3)):
            add_review(db_with_run, "mixed", d["id"], rng.choice(["match", "no-match"]), who)
    view = load_view(db_with_run, "mixed", policy)
    decs = view.decisions()
    reviewed = [d for d in decs if d["human"]]
    rc = view.audit.review_counts
    assert rc["reviewed"] == len(reviewed) and rc["reviewers"] == ["ana", "bo", "cy"]
    assert rc["overruled"] == sum(d["effective"] != d["judge"] for d in decs)
    assert rc["conflicted"] == sum(d["source"] == "conflicted" for d in decs)
    assert {d["source"] for d in reviewed} <= ({"human", "conflicted", "majority"} if policy == "majority"
                                               else {"human", "conflicted"})
    by_type = {(r["kind"], r["type"]): r for r in view.review_counts_by_type()}
    assert sum(r["conflicted"] for r in by_type.values()) == rc["conflicted"]
    assert sum(r["decisions"] for r in by_type.values()) == len(decs)
    per_doc = {r["doc"]: r["reviewed"] for r in view.documents()}
    assert sum(per_doc.values()) == len(reviewed)
    labels = {(d["doc"], d["type"], d["left"], d["right"]): d["effective"] for d in decs}
    docs, preds = [], {}
    for doc_id in view.document_ids():
        dd, pp = chimera.doc_from_json(view.document(doc_id)["payload"])
        docs.append(dd)
        preds[dd.paper_id] = pp
    assert view.audit.metrics == chimera.aggregate(docs, preds, labels)


def test_per_type_totals_are_read_once_per_run_and_never_for_a_run_that_took_its_id(db_with_run):
    """The judge-side totals of the Scores table (decisions and judge-invalid per kind and type) are fixed when a
    run is scored, so a later view reads no decision for them (#38: the query read the whole decisions table on
    every render); a run deleted and scored again under the same id and name gets its own totals."""
    from audit.runs import delete_run
    from audit.views import judge_side_totals

    first = load_view(db_with_run, "mixed").review_counts_by_type()
    seen: list[str] = []
    db_with_run.conn.set_trace_callback(seen.append)
    again = load_view(db_with_run, "mixed").review_counts_by_type()
    db_with_run.conn.set_trace_callback(None)
    assert again == first
    assert not [q for q in seen if "FROM decisions" in q and "GROUP BY kind, type" in q]
    row = dict(load_view(db_with_run, "mixed").row)
    delete_run(db_with_run, "mixed")
    # a run in the same id, name and creation time would be the same run; one created later is not
    totals = judge_side_totals(db_with_run, row | {"created": row["created"] + "x"})
    assert totals == ()  # its decisions are gone: read afresh, not taken from the deleted run's


def test_an_adjudication_stored_while_an_undo_is_decided_refuses_the_undo(db_with_run, db_path, monkeypatch, capsys):
    """The undo rule read the reviews, then wrote: an adjudication stored in the moment between (olga's, from another
    process) was overwritten by the label adam's undo restored, unsaid. The write now expects the newest review the
    rule read (`newest_seen`): the undo is refused, olga's adjudication holds."""
    import audit.review.reviews as reviews_module
    from audit.cli import main
    from audit.store.database import open_db

    d = next(x for x in decisions(db_with_run, "mixed") if x["judge"] != "invalid")["id"]
    add_review(db_with_run, "mixed", d, "match", "adam", role="adjudicator")
    real = reviews_module.undo_label

    def olga_in_between(*args, **kw):
        label = real(*args, **kw)
        add_review(open_db(db_path), "mixed", d, "no-match", "olga", role="adjudicator")  # another connection
        return label

    monkeypatch.setattr(reviews_module, "undo_label", olga_in_between)
    rows_before = db_with_run.execute("SELECT COUNT(*) FROM reviews").fetchone()[0]
    assert main(["--db", str(db_path), "review", "--run", "mixed", "--decision", str(d), "--label", "undo",
                 "--reviewer", "adam", "--role", "adjudicator"]) == 2
    assert "reviewed by someone else since" in capsys.readouterr().err
    assert db_with_run.execute("SELECT COUNT(*) FROM reviews").fetchone()[0] == rows_before + 1  # olga's alone
    e = as_view(db_with_run, "mixed").effective[d]
    assert (e.label, e.adjudicator) == ("no-match", "olga")
