"""Assigned review at the store: every planned document goes to exactly the reviewers it needs, shares differ by
at most one document, the distribution is a function of its seed, and reviews made through it count as sample
draws in parallel."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from audit.errors import AuditError
from audit.review.assigned_review import (
    DoubleCode,
    clear_review_assignment,
    distribute,
    double_coded_plan,
    set_review_assignment,
    share_of,
)
from audit.review.reviews import add_review
from audit.review.sampling import create_plan, load_plan

REVIEWERS = ["ana@lab.org", "bo@lab.org", "cy@lab.org"]


def _check_invariants(shares: dict, reviewers: list[str], min_reviewers: int, n_double: int) -> None:
    assert sum(double for _, double in shares.values()) == n_double
    for who, double in shares.values():
        assert len(set(who)) == len(who) == (min_reviewers if double else 1)  # distinct, as many as needed
        assert set(who) <= set(reviewers)
    load = Counter(w for who, _ in shares.values() for w in who)
    counts = [load.get(r, 0) for r in reviewers]
    assert max(counts) - min(counts) <= 1


@pytest.mark.parametrize("n_docs, n_reviewers, min_reviewers, n_double, seed", [
    (10, 3, 2, 4, 0), (7, 2, 2, 7, 5), (31, 5, 3, 9, 11), (1, 4, 4, 1, 2), (12, 1, 1, 0, 3), (0, 2, 2, 0, 0),
])
def test_distribution_invariants(n_docs, n_reviewers, min_reviewers, n_double, seed):
    docs = [f"doc{i}" for i in range(n_docs)]
    reviewers = [f"r{i}@lab.org" for i in range(n_reviewers)]
    shares = distribute(docs, reviewers, min_reviewers=min_reviewers, n_double=n_double, seed=seed)
    assert list(shares) == docs
    _check_invariants(shares, reviewers, min_reviewers, n_double)
    again = distribute(docs, list(reversed(reviewers)), min_reviewers=min_reviewers, n_double=n_double, seed=seed)
    assert again == shares  # a function of the seed, not of the order names were typed in


def test_another_seed_gives_another_double_coded_subset():
    docs = [f"doc{i}" for i in range(40)]
    subsets = {frozenset(d for d, (_, dbl) in distribute(docs, REVIEWERS, min_reviewers=2, n_double=8,
                                                            seed=s).items() if dbl) for s in range(5)}
    assert len(subsets) > 1


@pytest.mark.parametrize("min_reviewers", [1, 4])
def test_a_double_coded_document_needs_two_to_all_reviewers(min_reviewers):
    with pytest.raises(AuditError, match="from 2 to 3"):
        distribute(["a", "b"], REVIEWERS, min_reviewers=min_reviewers, n_double=1, seed=0)


def test_double_code_parse_refuses_nonsense():
    for bad in ("1.5", "-0.1", "nan", "lots", "150%"):
        with pytest.raises(AuditError):
            DoubleCode.parse(bad)


def _run_docs(db, run="mixed") -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, doc in db.execute("SELECT d.id, d.doc_id FROM decisions d JOIN runs r ON r.id = d.run_id WHERE r.name = ? "
                             "ORDER BY d.id", [run]):
        out.setdefault(doc, []).append(i)
    return out


def test_stored_assignment_covers_the_plan_prefix(db_with_run):
    db = db_with_run
    create_plan(db, "mixed", seed=3)
    plan = load_plan(db, "mixed")
    served = [b.id for b in sorted(plan.blocks, key=lambda b: (b.stratum not in plan.take_all, b.rank))]
    n = max(2, len(served) - 1)
    summary = set_review_assignment(db, "mixed", [r.upper() for r in REVIEWERS], min_reviewers=2,
                                    double_code=DoubleCode(fraction=0.5), documents=n, seed=7, set_by="olga@lab.org")
    assert summary["reviewers"] == REVIEWERS and summary["planned_documents"] == n
    assert summary["double_coded_documents"] == DoubleCode(fraction=0.5).size(n)
    docs = _run_docs(db)
    planned = set(served[:n])  # a prefix of the serving order: every stratum's random order, cut
    per_decision: Counter[int] = Counter()
    first = {w: share_of(db, "mixed", w) for w in REVIEWERS}
    for who in REVIEWERS:
        share = share_of(db, "mixed", who)
        assert len(share) == len(set(share)) == summary["shares"][who]["decisions"]
        assert {d for d, ids in docs.items() if set(ids) & set(share)} <= planned
        per_decision.update(share)
    double = double_coded_plan(db, "mixed")
    assert double["min_reviewers"] == 2 and double["documents"] == summary["double_coded_documents"]
    for doc in planned:
        for i in docs[doc]:
            assert per_decision[i] == (2 if i in double["decisions"] else 1)  # exactly min-reviewers distinct ones
    loads = [summary["shares"][w]["documents"] for w in REVIEWERS]
    assert max(loads) - min(loads) <= 1
    assert share_of(db, "mixed", "stranger@lab.org") == []
    again = set_review_assignment(db, "mixed", REVIEWERS, min_reviewers=2, double_code=DoubleCode(fraction=0.5),
                                  documents=n, seed=7, set_by="olga@lab.org")
    assert again["shares"] == summary["shares"]
    assert {w: share_of(db, "mixed", w) for w in REVIEWERS} == first  # the same seed: the same shares
    assert clear_review_assignment(db, "mixed") and share_of(db, "mixed", REVIEWERS[0]) is None


def test_without_a_plan_every_document_is_assigned_and_no_sample_size(db_with_run):
    db = db_with_run
    summary = set_review_assignment(db, "mixed", REVIEWERS[:2], double_code=DoubleCode(count=1), set_by="local")
    assert summary["planned_documents"] == len(_run_docs(db))
    assert summary["planned_decisions"] == sum(map(len, _run_docs(db).values()))
    with pytest.raises(AuditError, match="no sampling plan"):
        set_review_assignment(db, "mixed", REVIEWERS, documents=2, set_by="local")
    with pytest.raises(AuditError, match="cannot double-code"):
        set_review_assignment(db, "mixed", REVIEWERS, double_code=DoubleCode(count=10_000), set_by="local")


def test_shares_reviewed_out_of_plan_order_are_sample_draws(db_with_run):
    db = db_with_run
    create_plan(db, "mixed", seed=1)
    plan = load_plan(db, "mixed")
    strata = Counter(b.stratum for b in plan.blocks)
    late = max((b for b in plan.blocks if strata[b.stratum] > 1 and b.stratum not in plan.take_all),
               key=lambda b: b.rank)  # not the first of its stratum: no sample draw without an assignment
    decision = int(late.units[0])
    label = db.execute("SELECT judge_label FROM decisions WHERE id = ?", [decision]).fetchone()[0]
    label = label if label != "invalid" else "match"
    with pytest.raises(AuditError, match="not what the sample queue serves"):
        add_review(db, "mixed", decision, label, REVIEWERS[1], sampled=True)
    set_review_assignment(db, "mixed", REVIEWERS[:2], set_by="local")
    add_review(db, "mixed", decision, label, REVIEWERS[1], sampled=True)
    assert db.execute("SELECT sampled FROM reviews WHERE decision_id = ?", [decision]).fetchall() == [(1,)]


def _label_share(db, who: str, ids: list[int], flip: set[int] = frozenset(), *, sampled: bool = False) -> None:
    for i in ids:
        judge = db.execute("SELECT judge_label FROM decisions WHERE id = ?", [i]).fetchone()[0]
        label = "match" if judge == "invalid" else judge
        add_review(db, "mixed", i, ("no-match" if label == "match" else "match") if i in flip else label, who,
                   sampled=sampled)


def test_agreement_reports_the_planned_overlap_not_the_accidental_one(db_with_run):
    from audit.outputs.agreement import agreement

    db = db_with_run
    ana, bo = REVIEWERS[:2]
    assert agreement(db, "mixed", n_resamples=50)["planned_overlap"] is None
    set_review_assignment(db, "mixed", [ana, bo], min_reviewers=2, double_code=DoubleCode(count=3), seed=4,
                          set_by="local")
    planned = double_coded_plan(db, "mixed")["decisions"]
    assert agreement(db, "mixed", n_resamples=50)["planned_overlap"]["double_coded"] == 0
    ana_share, bo_share = share_of(db, "mixed", ana), share_of(db, "mixed", bo)
    assert set(ana_share) & set(bo_share) == planned
    _label_share(db, ana, ana_share, flip={min(planned)})
    _label_share(db, bo, bo_share)
    accidental = next(i for i in bo_share if i not in planned)
    _label_share(db, ana, [accidental])  # overlap nobody planned
    result = agreement(db, "mixed", n_resamples=50)
    overlap = result["planned_overlap"]
    assert overlap["planned_decisions"] == len(planned) and overlap["planned_documents"] == 3
    assert overlap["double_coded"] == overlap["with_two_or_more"] == len(planned)
    pair = f"{ana} vs {bo}"
    assert overlap["human_vs_human"]["pairs"][pair]["n"] == len(planned)
    assert result["human_vs_human"]["pairs"][pair]["n"] == len(planned) + 1
    assert overlap["human_vs_human"]["pairs"][pair]["raw_agreement"] == pytest.approx(1 - 1 / len(planned))


def test_one_blind_reviewer_does_not_make_the_sighted_double_codes_vanish(db_with_run):
    """ana blind (by assignment), bo sighted, every planned decision labelled by both: agreement reads blind reviews
    only, so the page said "0 of the 12 have their 2 labels so far" and "No decision has been labelled by two
    reviewers yet". Both now say what every review holds."""
    from audit.outputs.agreement import agreement
    from audit.review.assigned_review import planned_overlap_text

    db = db_with_run
    ana, bo = REVIEWERS[:2]
    set_review_assignment(db, "mixed", [ana, bo], min_reviewers=2, double_code=DoubleCode(count=3), seed=4,
                          set_by="local")
    planned = double_coded_plan(db, "mixed")["decisions"]
    for i in sorted(planned):
        judge = db.execute("SELECT judge_label FROM decisions WHERE id = ?", [i]).fetchone()[0]
        label = "match" if judge == "invalid" else judge
        add_review(db, "mixed", i, label, ana, blind=True)
        add_review(db, "mixed", i, label, bo)
    result = agreement(db, "mixed", n_resamples=50)
    overlap = result["planned_overlap"]
    assert result["reviews_used"] == "blind" and overlap["double_coded"] == 0
    assert overlap["double_coded_all_reviews"] == len(planned) == result["two_labels_all_reviews"]
    text = planned_overlap_text(overlap)
    assert text.endswith(f"0 of the {len(planned)} have their 2 labels so far in blind reviews, {len(planned)} "
                         "counting every review (agreement reads only blind reviews while the run has any).")


def test_the_cli_sets_shows_and_clears_an_assignment(db_with_run, db_path, capsys):
    import json

    from audit.cli import main

    def cli(*args: str) -> tuple[int, object]:
        status = main(["assign", "--db", str(db_path), "--run", "mixed", *args])
        out = capsys.readouterr().out
        return status, json.loads(out) if status == 0 else out

    assert cli() == (0, None)
    status, summary = cli("--reviewers", "ana,bo,cy", "--double-code", "25%", "--min-reviewers", "3", "--seed", "9")
    assert status == 0 and summary["reviewers"] == ["ana", "bo", "cy"] and summary["min_reviewers"] == 3
    assert summary["double_coded_documents"] == DoubleCode(fraction=0.25).size(summary["planned_documents"]) > 0
    assert cli()[1] == summary
    assert cli("--reviewers", "ana", "--double-code", "2")[0] != 0  # one reviewer cannot double-code
    assert cli()[1] == summary  # the refused change stored nothing
    assert cli("--clear") == (0, {"cleared": True}) and cli() == (0, None)
    assert main(["assign", "--db", str(db_path), "--run", "nope"]) == 2  # it printed `null` and exited 0
    assert "unknown run 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize("case", range(6))
def test_a_reviewer_who_labels_all_their_queue_serves_finishes_their_share(db_with_run, case):
    """Invariant over random assignments: whatever queue a reviewer keeps to (the dashboard's defaults: "skip
    decisions whose answer is certain" on), labelling everything it serves, interleaved with the others, finishes
    the share `share_progress` counts, and the planned overlap then counts every planned decision double-coded."""
    import random

    from audit.outputs.agreement import agreement
    from audit.review.assigned_review import review_assignment, share_progress, share_queue_ids
    from audit.review.queue import BLIND_QUEUES

    db, rng = db_with_run, random.Random(case)
    plan_when = rng.choice(["none", "before", "after"])
    if plan_when == "before":
        create_plan(db, "mixed", seed=rng.randrange(100))
    reviewers = REVIEWERS[:rng.randint(2, 3)]
    n_docs = len(load_plan(db, "mixed").blocks) if plan_when == "before" else None
    summary = set_review_assignment(
        db, "mixed", reviewers, min_reviewers=rng.randint(2, len(reviewers)),
        double_code=DoubleCode(fraction=rng.choice([0.0, 0.3, 1.0])),
        documents=rng.randint(1, n_docs) if n_docs else None, seed=rng.randrange(1000), set_by="local")
    if plan_when == "after":
        create_plan(db, "mixed", seed=rng.randrange(100))
    modes = {who: rng.choice([m for m in BLIND_QUEUES if m != "sample" or plan_when != "none"]) for who in reviewers}
    shares = {who: share_of(db, "mixed", who) for who in reviewers}
    assert any(_certain_in(db, s) for s in shares.values())  # certain decisions are in some share: the case at stake
    served: dict[str, set[int]] = {who: set() for who in reviewers}
    waiting = list(reviewers)
    while waiting:  # the reviewers take turns, a few labels each, every turn reading their queue afresh
        who = rng.choice(waiting)
        ids = share_queue_ids(db, "mixed", who, modes[who], shares[who], skip_trivial=True)
        if modes[who] == "all":  # the all-queue serves labelled decisions too: a reviewer walks on from them
            ids = [i for i in ids if i not in served[who]]
        if not ids:
            waiting.remove(who)
        take = ids[:rng.randint(1, 12)]
        served[who].update(take)
        _label_share(db, who, take, sampled=modes[who] == "sample")
    for who in reviewers:
        progress = share_progress(db, "mixed", who)
        assert served[who] == set(shares[who])
        assert progress["done"] == progress["of"] == summary["shares"][who]["decisions"] == len(shares[who])
    overlap = agreement(db, "mixed", n_resamples=20)["planned_overlap"]
    assert overlap["double_coded"] == overlap["planned_decisions"] == summary["double_coded_decisions"]
    assert review_assignment(db, "mixed")["shares"] == summary["shares"]


def _certain_in(db, ids: list[int]) -> set[int]:
    from scoring.families.chimera.family import ChimeraTask

    return {i for i in ids if ChimeraTask().trivial(dict(zip(
        ("kind", "type", "left", "right", "judge"),
        db.execute("SELECT kind, type, left, right, judge_label FROM decisions WHERE id = ?", [i]).fetchone(),
        strict=True)))}


def test_the_report_says_the_planned_overlap_as_the_agreement_page_does(db_with_run, db_path, tmp_path):
    import html

    from audit.cli import main
    from audit.outputs.agreement import agreement
    from audit.outputs.report import build_report
    from audit.review.assigned_review import planned_overlap_text
    from audit.views import as_view

    db, (ana, bo) = db_with_run, REVIEWERS[:2]

    def section() -> str:
        found = [s for s in build_report(as_view(db, "mixed")).sections if s.title.startswith("4. Agreement")]
        return html.unescape(" ".join(found[0].body))

    assert "Assigned review" not in section()  # no assignment: nothing planned to say
    set_review_assignment(db, "mixed", [ana, bo], min_reviewers=2, double_code=DoubleCode(count=3), seed=4,
                          set_by="local")
    plan = double_coded_plan(db, "mixed")
    before = section()
    assert (f"{len(plan['decisions'])} decisions (3 documents) are planned to be double-coded, by 2 reviewers each"
            in before and f"0 of the {len(plan['decisions'])} have their 2 labels" in before)  # said before review
    for who in (ana, bo):
        _label_share(db, who, share_of(db, "mixed", who), flip={min(plan["decisions"])} if who == ana else set())
    after = section()
    expected = planned_overlap_text(agreement(db, "mixed")["planned_overlap"])  # the Agreement page's sentence
    assert expected in after
    assert f"{len(plan['decisions'])} of the {len(plan['decisions'])} have their 2 labels" in expected
    assert f"human vs human, planned overlap {ana} vs {bo} {len(plan['decisions'])}" in " ".join(
        re.sub(r"<[^>]+>", " ", after).split())  # the planned pair's row: its n is the planned subset
    out = tmp_path / "r.html"
    assert main(["--db", str(db_path), "report", "--run", "mixed", "--out", str(out)]) == 0
    assert expected in html.unescape(out.read_text())


def test_names_that_differ_only_by_case_folding_are_two_reviewers_and_look_alikes_are_refused(db_with_run):
    """One identity rule (audit.review.identity.reviewer_key) in shares and reviews: `casefold` merged `Straße` and
    `strasse` into one share; a Cyrillic `а` in `аna` beside `ana` was a second, look-alike reviewer."""
    set_review_assignment(db_with_run, "mixed", ["Straße", "strasse"], min_reviewers=1,
                          set_by="owner")
    assert share_of(db_with_run, "mixed", "Straße") and share_of(db_with_run, "mixed", "strasse")
    assert not set(share_of(db_with_run, "mixed", "Straße")) & set(share_of(db_with_run, "mixed", "strasse"))
    assert share_of(db_with_run, "mixed", "STRASSE") == share_of(db_with_run, "mixed", "strasse")  # ASCII: case
    for look_alike in ("\u0430na", "\u212aim", "ａna"):
        with pytest.raises(AuditError, match="look-alike"):
            set_review_assignment(db_with_run, "mixed", ["ana", look_alike], min_reviewers=1,
                                  set_by="owner")
        with pytest.raises(AuditError, match="look-alike"):
            add_review(db_with_run, "mixed", 1, "match", look_alike)
    add_review(db_with_run, "mixed", 1, "match", "анна")  # one script, not a look-alike of anyone: a name


def test_an_adjudication_counts_in_the_adjudicators_share_as_their_queue_does(db_with_run):
    """A reviewer who settles a conflict in their share as adjudicator has labelled it: their queue stops serving it
    and their share's progress counts it (it read their reviewer labels only, so the share never read done)."""
    from audit.review.assigned_review import share_progress, share_queue_ids

    db = db_with_run
    ana = REVIEWERS[0]
    set_review_assignment(db, "mixed", REVIEWERS[:2], min_reviewers=2, double_code=DoubleCode(fraction=0.0), seed=0,
                          set_by="local")
    share = share_of(db, "mixed", ana)
    x = share[0]
    add_review(db, "mixed", x, "match", "x1@lab.org")
    add_review(db, "mixed", x, "no-match", "x2@lab.org")
    assert share_progress(db, "mixed", ana)["done"] == 0 and x in share_queue_ids(db, "mixed", ana, "unreviewed", share)
    add_review(db, "mixed", x, "no-match", ana, role="adjudicator")
    assert x not in share_queue_ids(db, "mixed", ana, "unreviewed", share)
    assert share_progress(db, "mixed", ana)["done"] == 1
