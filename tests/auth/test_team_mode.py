"""Team mode under AppTest: who is the reviewer, who is refused and why, and the role check of every mutating
path in the dashboard (each path is tried by a role below the one it needs, and by the one it needs)."""

from __future__ import annotations

from contextlib import closing

import pytest

from audit.review.blind_assignments import EVERYONE, set_blind_assignment
from audit.review.roles import ACTIONS, refusal
from audit.store.database import open_db
from tests.app.conftest import plain
from tests.auth.conftest import team_app

DEMO = "demo-chimera-mixed"
DOC = "2105.13065"
REVIEWER, ADJUDICATOR, OWNER, STRANGER = "rita@lab.org", "adam@lab.org", "olga@lab.org", "eve@evil.org"


def texts(at) -> str:
    return " ".join(plain(e.value) for kind in ("error", "warning", "info", "caption", "markdown", "text", "success")
                    for e in getattr(at, kind))


def rows(db_path, sql: str, args=()) -> list[tuple]:
    with closing(open_db(db_path).conn) as conn:
        return conn.execute(sql, args).fetchall()


def first_decision(db_path) -> int:
    return rows(db_path, "SELECT MIN(d.id) FROM decisions d JOIN runs r ON r.id = d.run_id WHERE r.name = ? "
                "AND d.doc_id = ?", [DEMO, DOC])[0][0]


def test_local_mode_says_names_are_not_verified(app_db):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert "local mode: reviewer names are not verified" in [c.value for c in at.sidebar.caption]
    assert at.text_input(key="reviewer") is not None


def test_signed_out_visitor_gets_the_sign_in_page_and_nothing_else(app_db, roles_file, discovery_url):
    at = team_app(discovery_url, None, run=DEMO).run()
    assert not at.exception
    assert at.title[0].value == "Rejudge — sign in"
    assert [b.key for b in at.button] == ["auth.sign_in"]
    assert not at.dataframe and not at.text_input  # no run, no reviewer box


def test_unreachable_provider_is_a_clear_page(app_db, roles_file):
    import socket
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    at = team_app(f"http://127.0.0.1:{port}/.well-known/openid-configuration", None).run()
    assert not at.exception
    assert "cannot be reached" in at.error[0].value and "did not answer" in texts(at)
    assert "auth.sign_in" not in [b.key for b in at.button]


def test_a_person_not_in_the_roles_file_is_refused(app_db, roles_file, discovery_url):
    at = team_app(discovery_url, STRANGER).run()
    assert not at.exception
    assert at.title[0].value == "Rejudge — no access"
    assert STRANGER in plain(at.error[0].value) and "roles file" in at.error[0].value
    assert [b.key for b in at.button] == ["auth.sign_out_refused"] and not at.dataframe


@pytest.mark.parametrize("claim", [False, "false", "False", 0, 1, "0", "yes", None, ""])
def test_an_address_the_provider_did_not_verify_gets_no_role(app_db, roles_file, discovery_url, claim):
    at = team_app(discovery_url, OWNER)
    at.user["email_verified"] = claim
    at.run()
    assert not at.exception
    assert at.title[0].value == "Rejudge — no access"
    assert "did not verify your e-mail address" in texts(at) and repr(claim) in texts(at)


@pytest.mark.parametrize("claim", [True, "true", "TRUE"])
def test_a_verified_address_is_given_its_role(app_db, roles_file, discovery_url, claim):
    at = team_app(discovery_url, OWNER)
    at.user["email_verified"] = claim
    at.run()
    assert not at.exception
    assert "Signed in as" in " ".join(m.value for m in at.sidebar.markdown)


@pytest.mark.parametrize("text", ["not toml [", "[roles]\nowners = 'olga@lab.org'\n", "[roles]\nbosses = []\n"])
def test_a_broken_roles_file_refuses_everyone_and_says_why(app_db, roles_file, discovery_url, text):
    roles_file.write_text(text)
    at = team_app(discovery_url, OWNER).run()
    assert not at.exception
    assert at.title[0].value == "Rejudge — no access" and str(roles_file) in texts(at)


def test_the_signed_in_identity_is_the_reviewer_whatever_the_url_says(app_db, roles_file, discovery_url):
    at = team_app(discovery_url, REVIEWER, reviewer="olga@lab.org", adj="1", run=DEMO).run()
    assert not at.exception
    assert not at.sidebar.text_input  # no name box
    assert "adjudicator" not in [t.key for t in at.toggle]
    assert "reviewer" not in at.query_params and "adj" not in at.query_params
    at.session_state["adjudicator_mode"] = True  # a forged session value grants nothing either
    at.switch_page("pages/document.py")
    at.query_params.update({"run": DEMO, "doc": DOC})
    at.run()
    first = first_decision(app_db)
    at.button(key=f"review.overrule.{first}").click().run()
    assert not at.exception and not at.error
    assert rows(app_db, "SELECT reviewer, role, auth_subject, auth_email, auth_mode FROM reviews "
                "WHERE decision_id = ?", [first]) == [(REVIEWER, "reviewer", f"sub-{REVIEWER}", REVIEWER, "oidc")]


def test_an_adjudicator_settles_conflicts_under_their_identity(app_db, roles_file, discovery_url):
    at = team_app(discovery_url, ADJUDICATOR, run=DEMO).run()
    at.toggle(key="adjudicator").set_value(True).run()
    at.switch_page("pages/document.py")
    at.query_params.update({"run": DEMO, "doc": DOC})
    at.run()
    first = first_decision(app_db)
    at.button(key=f"review.overrule.{first}").click().run()
    assert not at.error
    assert rows(app_db, "SELECT reviewer, role, auth_mode FROM reviews WHERE decision_id = ?", [first]) == [
        (ADJUDICATOR, "adjudicator", "oidc")]


def test_a_flagged_erratum_stores_the_identity(app_db, roles_file, discovery_url):
    at = team_app(discovery_url, REVIEWER, run=DEMO, doc=DOC)
    at.run()
    at.switch_page("pages/document.py")
    at.query_params.update({"run": DEMO, "doc": DOC})
    at.run()
    at.text_input(key="document.errata.typed").set_value("a missing span")
    at.selectbox(key="document.errata.item").set_value("(an item not in the list / missing from the gold)")
    form = next(b for b in at.button if b.proto.label == "Flag gold item")
    form.click().run()
    assert not at.exception
    assert rows(app_db, "SELECT reviewer, auth_email, auth_mode FROM errata") == [(REVIEWER, REVIEWER, "oidc")]


# Every mutating path: (action, how to reach it and try it, what must not have changed). A control drawn disabled
# for the person cannot be clicked (tests/auth/test_owner_controls_disabled.py checks it says why).
def click(at, key: str) -> None:
    button = at.button(key=key)
    if not button.disabled:
        button.click().run()


def _load_demo(at, db_path):
    from audit.runs import delete_run
    with closing(open_db(db_path).conn) as conn:
        from sqlite_utils import Database
        delete_run(Database(conn), "demo-ideation-si2024-humans", force=True)
    at.run()
    click(at, "runs.load_demo")
    return rows(db_path, "SELECT COUNT(*) FROM runs WHERE name = 'demo-ideation-si2024-humans'")[0][0]


def _score(at, db_path):
    at.run()
    at.selectbox(key="newrun.chimera.pred.choice").set_value("chimera/pred_perfect.jsonl")
    at.selectbox(key="newrun.chimera.judge").set_value("exact — case/whitespace-insensitive equality")
    at.text_input(key="newrun.name").set_value("perfect-exact")
    click(at, "newrun.score")
    return rows(db_path, "SELECT COUNT(*) FROM runs WHERE name = 'perfect-exact'")[0][0]


def _plan(at, db_path):
    at.run()
    at.switch_page("pages/queue.py")
    at.query_params["run"] = DEMO
    at.run()
    at.selectbox(key="queue.mode").set_value("sample").run()
    click(at, "queue.create_plan")
    return rows(db_path, "SELECT COUNT(*) FROM sampling_plans")[0][0]


def _assign_blind(at, db_path):
    at.run()
    if not [b for b in at.button if b.proto.label == "Save assignment"]:
        return 0
    next(b for b in at.button if b.proto.label == "Save assignment").click().run()
    return rows(db_path, "SELECT COUNT(*) FROM blind_assignments")[0][0]


def _export_reviews(at, _db_path):
    at.run()
    at.switch_page("pages/export.py")
    at.query_params["run"] = DEMO
    at.run()
    return int(any(b.proto.label == "This run's reviews (JSON lines)" for b in at.get("download_button")))


def _import_reviews(at, db_path):
    import json
    doc, kind, typ, left, right = rows(db_path, "SELECT doc_id, kind, type, left, right FROM decisions WHERE id = ?",
                                       [first_decision(db_path)])[0]
    line = {"uid": "f" * 32, "doc": doc, "kind": kind, "type": typ, "left": left, "right": right,
            "reviewer": "x@lab.org", "label": "match", "role": "reviewer", "note": None, "blind": False,
            "created": "2026-01-01T00:00:00+00:00"}
    at.run()
    at.switch_page("pages/export.py")
    at.query_params["run"] = DEMO
    at.run()
    up = at.get("file_uploader")
    if not up or up[0].proto.disabled:
        return 0
    up[0].set_value(("r.jsonl", (json.dumps(line) + "\n").encode(), "application/json")).run()
    click(at, "export.import_go")
    return rows(db_path, "SELECT COUNT(*) FROM reviews WHERE uid = ?", ["f" * 32])[0][0]


def _board(at, db_path):
    """Create a board through the Leaderboard's form (its submit is drawn disabled for a role below owner)."""
    at.run()
    at.switch_page("pages/leaderboard.py")
    at.run()
    at.text_input(key="leaderboard.new_name").set_value("team-board")
    at.multiselect(key="leaderboard.new_runs").set_value(["demo-litxbench-drop-meas30",
                                                           "demo-litxbench-process-perturb"])
    click(at, "FormSubmitter:leaderboard.create-Create board")
    return rows(db_path, "SELECT COUNT(*) FROM boards WHERE name = 'team-board'")[0][0]


PATHS = {"edit_boards": _board, "load_runs": _load_demo, "score_run": _score,
         "edit_assignments": _plan, "export_reviews": _export_reviews, "import_reviews": _import_reviews}


@pytest.mark.parametrize("action", sorted(PATHS))
def test_a_reviewer_is_refused_every_owner_path(app_db, roles_file, discovery_url, action):
    assert ACTIONS[action][0] == "owner"
    at = team_app(discovery_url, ADJUDICATOR, run=DEMO)  # the role just below owner
    assert PATHS[action](at, app_db) == 0
    assert not at.exception
    assert refusal("adjudicator", action) in [plain(e.value) for e in at.error] + [plain(c.value) for c in at.caption]


@pytest.mark.parametrize("action", sorted(PATHS))
def test_the_owner_may_take_every_owner_path(app_db, roles_file, discovery_url, action):
    at = team_app(discovery_url, OWNER, run=DEMO)
    assert PATHS[action](at, app_db) == 1
    assert not at.exception


def test_blind_assignment_editor_is_the_owners(app_db, roles_file, discovery_url):
    at = team_app(discovery_url, ADJUDICATOR, run=DEMO)
    assert _assign_blind(at, app_db) == 0
    assert refusal("adjudicator", "edit_assignments") in texts(at)
    at = team_app(discovery_url, OWNER, run=DEMO)
    assert _assign_blind(at, app_db) == 1
    assert rows(app_db, "SELECT reviewer, blind, set_by FROM blind_assignments") == [(EVERYONE, 1, OWNER)]


@pytest.mark.parametrize("who", [REVIEWER, ADJUDICATOR])
def test_a_blind_assignment_cannot_be_switched_off(app_db, roles_file, discovery_url, who):
    with closing(open_db(app_db).conn) as conn:
        from sqlite_utils import Database
        set_blind_assignment(Database(conn), DEMO, EVERYONE, True, set_by=OWNER)
    at = team_app(discovery_url, who, run=DEMO, blind="0").run()
    blind = at.toggle(key="blind")
    assert blind.value is True and blind.proto.disabled
    assert "adjudicator" not in [t.key for t in at.toggle]  # no adjudicating a run you are blind on
    at.session_state["blind_mode"] = False  # forged session values do not lift it
    at.session_state["blind"] = False
    at.session_state["adjudicator_mode"] = True
    at.switch_page("pages/scores.py")
    at.query_params["run"] = DEMO
    at.run()
    assert any("hidden while you review blind" in i.value for i in at.info)
    assert not at.metric


def test_a_blind_assignment_holds_on_every_run_that_asks_the_same_questions(app_db, roles_file, discovery_url):
    """A label settles its question in every run that asks it: adam, assigned blind on one run, opened a twin run
    (same gold and predictions, another judge), switched Adjudicator on there and settled the blind run's decision,
    sighted. The assignment now reaches the twin; a run of other questions stays free."""
    twin, other = "demo-chimera-fuzzy-mixed", "demo-ideation-si2024-humans"
    with closing(open_db(app_db).conn) as conn:
        from sqlite_utils import Database

        from audit.review.blind_assignments import blind_assigned
        set_blind_assignment(Database(conn), DEMO, ADJUDICATOR, True, set_by=OWNER)
        assert blind_assigned(Database(conn), twin, ADJUDICATOR) and not blind_assigned(Database(conn), other,
                                                                                        ADJUDICATOR)
        assert not blind_assigned(Database(conn), twin, REVIEWER)
    at = team_app(discovery_url, ADJUDICATOR, run=twin, adj="1").run()
    blind = at.toggle(key="blind")
    assert blind.value is True and blind.proto.disabled
    assert "adjudicator" not in [t.key for t in at.toggle]
    at.switch_page("pages/document.py")
    at.query_params.update({"run": twin, "doc": DOC})
    at.run()
    d = rows(app_db, "SELECT MIN(d.id) FROM decisions d JOIN runs r ON r.id = d.run_id WHERE r.name = ? "
             "AND d.doc_id = ?", [twin, DOC])[0][0]
    labels = [b.key for b in at.button if b.key and b.key.startswith("review.") and b.key.endswith(f".{d}")]
    assert labels and not any(".overrule." in k for k in labels)  # blind: no judge answer to overrule
    at.button(key=labels[0]).click().run()
    assert rows(app_db, "SELECT role, blind FROM reviews WHERE reviewer = ?", [ADJUDICATOR]) == [("reviewer", 1)]
    at = team_app(discovery_url, ADJUDICATOR, run=other).run()
    assert not at.toggle(key="blind").proto.disabled and "adjudicator" in [t.key for t in at.toggle]


def test_an_adjudication_is_refused_at_the_write_once_the_owner_made_the_run_blind(app_db, roles_file, discovery_url):
    """A card drawn before the assignment kept adjudicating, sighted (the browser card's route re-checks the role,
    not the assignment): `add_review` refuses it, on the run and on a twin run, whoever calls it."""
    from sqlite_utils import Database

    from audit.errors import AuditError
    from audit.review.reviews import add_review
    with closing(open_db(app_db).conn) as conn:
        db = Database(conn)
        d = first_decision(app_db)
        add_review(db, DEMO, d, "match", ADJUDICATOR, role="adjudicator", auth_subject="s", auth_email=ADJUDICATOR)
        set_blind_assignment(db, DEMO, ADJUDICATOR, True, set_by=OWNER)
        twin = rows(app_db, "SELECT MIN(d.id) FROM decisions d JOIN runs r ON r.id = d.run_id WHERE r.name = ? "
                    "AND d.doc_id = ?", ["demo-chimera-fuzzy-mixed", DOC])[0][0]
        for run, dec in ((DEMO, d), ("demo-chimera-fuzzy-mixed", twin)):
            with pytest.raises(AuditError, match="is blind on run .* cannot adjudicate it: nothing was stored"):
                add_review(db, run, dec, "no-match", ADJUDICATOR, role="adjudicator", auth_subject="s",
                           auth_email=ADJUDICATOR)
        add_review(db, DEMO, d, "no-match", ADJUDICATOR, blind=True, auth_subject="s", auth_email=ADJUDICATOR)
        add_review(db, DEMO, d, "no-match", OWNER, role="adjudicator", auth_subject="o", auth_email=OWNER)
    assert rows(app_db, "SELECT reviewer, role, label FROM reviews WHERE decision_id IN (?, ?) ORDER BY id",
                [d, twin]) == [
        (ADJUDICATOR, "adjudicator", "match"), (ADJUDICATOR, "reviewer", "no-match"),
        (OWNER, "adjudicator", "no-match")]


def test_the_runs_table_hides_the_scores_of_every_run_the_reviewer_is_blind_on(app_db, roles_file, discovery_url):
    """Blind on one run, looking at another: the Runs table listed the blind run's judge-derived F1 (and its twin's)."""
    with closing(open_db(app_db).conn) as conn:
        from sqlite_utils import Database
        set_blind_assignment(Database(conn), DEMO, REVIEWER, True, set_by=OWNER)
    at = team_app(discovery_url, REVIEWER, run="demo-verdicts-inspect").run()
    assert not at.exception
    table = at.dataframe[0].value.set_index("run")["scores (original)"]
    assert table[DEMO] == table["demo-chimera-fuzzy-mixed"] == "hidden (blind)"
    assert "hidden (blind)" not in (table["demo-verdicts-inspect"], table["demo-ideation-si2024-humans"])


def test_a_per_reviewer_assignment_overrides_the_run(app_db, roles_file, discovery_url):
    with closing(open_db(app_db).conn) as conn:
        from sqlite_utils import Database
        set_blind_assignment(Database(conn), DEMO, EVERYONE, True, set_by=OWNER)
        set_blind_assignment(Database(conn), DEMO, REVIEWER, False, set_by=OWNER)
    at = team_app(discovery_url, REVIEWER, run=DEMO).run()
    assert not at.toggle(key="blind").proto.disabled
    at = team_app(discovery_url, "other@lab.org", run=DEMO).run()
    assert at.toggle(key="blind").proto.disabled


def test_an_adjudication_is_checked_when_the_key_is_pressed_not_when_the_card_was_drawn(app_db, roles_file,
                                                                                        discovery_url):
    """The queue's label buttons were drawn for an adjudicator; demoted (the roles file edited) before pressing
    one, the same person stores nothing as adjudicator: the role is checked in the callback, on the server."""
    import os

    at = team_app(discovery_url, ADJUDICATOR, run=DEMO).run()
    at.toggle(key="adjudicator").set_value(True).run()
    at.switch_page("pages/queue.py")
    at.query_params["run"] = DEMO
    at.session_state["queue.mode"] = "all"
    at.session_state["queue.in_browser"] = False  # the classic card: its label buttons are AppTest's to click
    at.run()
    assert not at.exception and [b for b in at.button if b.key == "queue.label.0"]
    stamp = roles_file.stat().st_mtime
    roles_file.write_text(roles_file.read_text().replace('adjudicators = ["adam@lab.org"]', "adjudicators = []"))
    os.utime(roles_file, (stamp + 10, stamp + 10))  # a newer file, whatever the clock's granularity
    at.button(key="queue.label.0").click().run()
    assert not at.exception
    assert refusal("reviewer", "adjudicate") in texts(at)
    assert rows(app_db, "SELECT COUNT(*) FROM reviews WHERE role = 'adjudicator'") == [(0,)]


@pytest.mark.parametrize("who", [REVIEWER, ADJUDICATOR])
def test_first_start_in_team_mode_loads_the_demo_only_for_an_owner(tmp_path, monkeypatch, roles_file, discovery_url,
                                                                  who):
    """Loading runs is the owner's; the first start's automatic demo load is one such path (it ran for any role)."""
    from tests.conftest import ROOT
    path = tmp_path / "new.db"
    monkeypatch.setenv("REJUDGE_DB", str(path))
    monkeypatch.chdir(ROOT)
    at = team_app(discovery_url, who)
    at.run()
    assert not at.exception
    assert "loading the demo runs is the owner's" in " ".join(plain(i.value) for i in at.info)
    with closing(open_db(path).conn) as conn:
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    owner = team_app(discovery_url, OWNER)
    owner.run(timeout=300)
    assert not owner.exception
    with closing(open_db(path).conn) as conn:
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] > 0


def test_compare_judges_never_offers_a_run_the_reviewer_is_blind_on(app_db, roles_file, discovery_url):
    """Blind on run B (the owner's assignment): Compare judges neither offers B nor shows its judge's answers; an
    owner still compares them. Run A asks B's questions, so the reviewer is blind on A too and the page says it is
    hidden (`blind_assigned`)."""
    from sqlite_utils import Database

    from audit.runs import score_run
    from tests.conftest import GOLD, PRED_MIXED
    with closing(open_db(app_db).conn) as conn:
        score_run(Database(conn), "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, "exact",
                  run="mixed-exact")
        set_blind_assignment(Database(conn), "mixed-exact", REVIEWER, True, set_by=OWNER)
    for who, offered in ((REVIEWER, False), (OWNER, True)):
        at = team_app(discovery_url, who, run=DEMO)
        at.switch_page("pages/compare.py")
        at.query_params["run"] = DEMO
        at.run()
        assert not at.exception
        if not offered:
            assert any("hidden while you review blind" in i.value for i in at.info)
            assert not [s for s in at.selectbox if s.key in ("compare.a", "compare.b")]
            continue
        runs = at.selectbox(key="compare.a").options + at.selectbox(key="compare.b").options
        assert "mixed-exact" in runs, (who, runs)


@pytest.mark.parametrize("who", [REVIEWER, ADJUDICATOR, OWNER])
def test_the_decisions_csv_with_every_reviewer_s_label_is_the_owners_like_the_reviews_file(app_db, roles_file,
                                                                                           discovery_url, who):
    """"Decisions with every label" has a column per reviewer and their notes: the reviews file's data, refused by
    the same rule to everyone but an owner (the other files stay)."""
    at = team_app(discovery_url, who, run=DEMO)
    at.run()
    at.switch_page("pages/export.py")
    at.query_params["run"] = DEMO
    at.run()
    assert not at.exception
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Audited scores (JSON)" in labels
    owner = who == OWNER
    assert ("Decisions with every label (CSV)" in labels) is owner
    assert ("This run's reviews (JSON lines)" in labels) is owner
    if not owner:
        role = "reviewer" if who == REVIEWER else "adjudicator"
        assert any(refusal(role, "export_reviews") in plain(c.value) for c in at.caption)
