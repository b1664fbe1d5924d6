"""Assigned review in the dashboard (team mode, AppTest): only the owner sets it, checked when the form is sent
(not by hiding it); a reviewer's queue serves their share, says how far they are, and stops when it is done."""

from __future__ import annotations

import os
import re
from contextlib import closing

from sqlite_utils import Database

from audit.review.assigned_review import DoubleCode, review_assignment, set_review_assignment, share_of
from audit.review.roles import refusal
from audit.review.sampling import create_plan
from audit.store.database import open_db
from tests.app.conftest import plain
from tests.auth.conftest import team_app
from tests.auth.test_team_mode import ADJUDICATOR, DEMO, OWNER, REVIEWER, rows, texts

ROSA = "rosa@lab.org"


def _runs_page(at):
    at.run()
    at.switch_page("pages/runs.py")
    at.query_params["run"] = DEMO
    return at.run()


def _save(at):
    return next(b for b in at.button if b.proto.label == "Save review assignment")


def test_a_non_owner_gets_no_form_and_the_reason(app_db, roles_file, discovery_url):
    at = _runs_page(team_app(discovery_url, ADJUDICATOR, run=DEMO))
    assert not at.exception
    assert refusal("adjudicator", "edit_assignments") in texts(at)
    assert not [b for b in at.button if b.proto.label == "Save review assignment"]
    assert rows(app_db, "SELECT COUNT(*) FROM review_assignments") == [(0,)]


def test_the_owner_sets_the_assignment_from_the_form(app_db, roles_file, discovery_url):
    at = _runs_page(team_app(discovery_url, OWNER, run=DEMO))
    at.text_area(key="assigned.reviewers").set_value(f"{REVIEWER}\n{ROSA}, {ADJUDICATOR}")
    at.text_input(key="assigned.double").set_value("3")
    _save(at).click().run()
    assert not at.exception and not at.error
    with closing(open_db(app_db).conn) as conn:
        stored = review_assignment(Database(conn), DEMO)
    assert stored["reviewers"] == [REVIEWER, ROSA, ADJUDICATOR] and stored["set_by"] == OWNER
    assert stored["double_coded_documents"] == 3 and stored["min_reviewers"] == 2
    table = next(d.value for d in at.dataframe if list(d.value.columns) == ["reviewer", "documents", "decisions"])
    assert table["reviewer"].tolist() == [REVIEWER, ROSA, ADJUDICATOR]
    assert max(table["documents"]) - min(table["documents"]) <= 1
    at.text_input(key="assigned.double").set_value("lots")
    _save(at).click().run()
    assert "double-coded subset must be" in texts(at)  # refused with the reason; the stored one stands


def test_a_reviewer_the_roles_file_keeps_out_is_named_beside_their_share(app_db, roles_file, discovery_url):
    """zed@evil.org got half the documents and could never sign in to review them, unsaid."""
    at = _runs_page(team_app(discovery_url, OWNER, run=DEMO))
    at.text_area(key="assigned.reviewers").set_value(f"{REVIEWER}\nzed@evil.org")
    _save(at).click().run()
    assert not at.exception
    said = " ".join(plain(w.value) for w in at.warning).replace("\u2060", "")
    assert "cannot sign in to review their share: zed@evil.org" in said and REVIEWER not in said


def test_the_role_is_checked_when_the_form_is_sent(app_db, roles_file, discovery_url):
    at = _runs_page(team_app(discovery_url, OWNER, run=DEMO))
    at.text_area(key="assigned.reviewers").set_value(REVIEWER)
    at.text_input(key="assigned.double").set_value("0")
    stamp = roles_file.stat().st_mtime
    roles_file.write_text(roles_file.read_text().replace('owners = ["olga@lab.org"]', 'owners = ["other@lab.org"]'))
    os.utime(roles_file, (stamp + 10, stamp + 10))  # a newer file, whatever the clock's granularity
    _save(at).click().run()  # the form was drawn for an owner; olga is a reviewer by the time it is sent
    assert refusal("reviewer", "edit_assignments") in texts(at)
    assert rows(app_db, "SELECT COUNT(*) FROM review_assignments") == [(0,)]


def _assign(app_db) -> dict[str, list[int]]:
    with closing(open_db(app_db).conn) as conn:
        db = Database(conn)
        create_plan(db, DEMO, seed=2)
        set_review_assignment(db, DEMO, [REVIEWER, ROSA], min_reviewers=2, double_code=DoubleCode(count=1),
                              documents=3, seed=5, set_by=OWNER)
        return {who: share_of(db, DEMO, who) for who in (REVIEWER, ROSA)}


def _queue(at, mode: str = "sample"):
    at.run()
    at.switch_page("pages/queue.py")
    at.query_params["run"] = DEMO
    at.session_state["queue.mode"] = mode
    at.session_state["queue.in_browser"] = False  # the classic card: its label buttons are AppTest's to click
    return at.run()


def _head(at) -> int:
    return int(re.search(r"decision #\d+ \(id (\d+)\)", " ".join(m.value for m in at.markdown))[1])


def test_a_reviewers_queue_serves_their_share_and_stops(app_db, roles_file, discovery_url):
    shares = _assign(app_db)
    mine = shares[REVIEWER]
    assert mine and set(mine) != set(shares[ROSA])
    at = _queue(team_app(discovery_url, REVIEWER, run=DEMO))
    assert not at.exception
    assert set(at.session_state["queue.ids"]) == set(mine)
    assert f"Your share: 0 of {len(mine)} decisions" in texts(at)
    assert "Sample queue: your share of the plan's documents" in texts(at) and "Suggested next" not in texts(at)
    served = []
    for _ in mine:
        served.append(_head(at))
        at.button(key="queue.label.0").click().run()
        assert not at.exception and not at.error
    assert sorted(served) == sorted(mine)
    assert f"Your share: {len(mine)} of {len(mine)} decisions" in texts(at)
    assert any("Your share is done" in s.value for s in at.success)
    assert not [b for b in at.button if b.key.startswith("queue.label.")]  # nothing more to label here
    labelled = {r[0] for r in rows(app_db, "SELECT decision_id FROM reviews WHERE reviewer = ?", [REVIEWER])}
    assert labelled == set(mine)
    # served by the sample queue out of the plan's strict order (the other share runs in parallel): sample draws
    assert rows(app_db, "SELECT DISTINCT sampled FROM reviews WHERE reviewer = ?", [REVIEWER]) == [(1,)]


def test_someone_the_assignment_does_not_name_gets_no_share(app_db, roles_file, discovery_url):
    _assign(app_db)
    at = _queue(team_app(discovery_url, "tom@lab.org", run=DEMO))
    assert not at.exception
    assert at.session_state["queue.ids"] == []
    assert "gives you no share" in texts(at)


def test_an_adjudicators_conflict_queue_is_not_cut_to_a_share(app_db, roles_file, discovery_url):
    shares = _assign(app_db)
    at = team_app(discovery_url, ADJUDICATOR, run=DEMO).run()
    at.toggle(key="adjudicator").set_value(True).run()
    at = _queue(at, "all")
    assert not at.exception
    assert not set(at.session_state["queue.ids"]) <= set(shares[REVIEWER]) | set(shares[ROSA])


def test_the_agreement_page_reports_the_planned_overlap(app_db, roles_file, discovery_url):
    from audit.review.reviews import add_review

    shares = _assign(app_db)
    planned = set(shares[REVIEWER]) & set(shares[ROSA])
    with closing(open_db(app_db).conn) as conn:
        db = Database(conn)
        for who in (REVIEWER, ROSA):
            for i in shares[who]:
                add_review(db, DEMO, i, "match", who)
    at = team_app(discovery_url, OWNER, run=DEMO).run()
    at.switch_page("pages/agreement.py")
    at.query_params["run"] = DEMO
    at.run()
    assert not at.exception
    assert "Planned overlap (assigned review)" in [h.value for h in at.subheader]
    assert f"{len(planned)} of the {len(planned)} have their 2 labels so far" in texts(at)


def _certain(app_db, ids: list[int]) -> set[int]:
    from scoring.families.chimera.family import ChimeraTask

    found = rows(app_db, f"SELECT id, kind, type, left, right, judge_label FROM decisions WHERE id IN "
                 f"({','.join('?' * len(ids))})", ids)
    return {i for i, kind, typ, left, right, judge in found
            if ChimeraTask().trivial({"kind": kind, "type": typ, "left": left, "right": right, "judge": judge})}


def test_the_unreviewed_queue_serves_the_certain_decisions_of_a_share_too(app_db, roles_file, discovery_url):
    mine = _assign(app_db)[REVIEWER]
    assert _certain(app_db, mine)  # the share holds identical-string pairs, or this test proves nothing
    at = _queue(team_app(discovery_url, REVIEWER, run=DEMO), "unreviewed")
    assert not at.exception
    assert set(at.session_state["queue.ids"]) == set(mine)
    assert not [t for t in at.toggle if t.key == "queue.skip_trivial"]  # no skipping inside a share
    for _ in mine:
        at.button(key="queue.label.0").click().run()
        assert not at.exception and not at.error
    assert any("Your share is done" in s.value for s in at.success)
