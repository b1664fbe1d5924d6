"""The Leaderboard page (issue 36 §2): the demo boards, every number as `board_table` gives it, a review of a
shared question moving two systems, no interval when none is valid, a plan's intervals and "N more documents" in
words, and the owner's create / delete form."""

from __future__ import annotations

import html

from audit.board.export import ranked_value_title
from audit.board.store import list_boards
from audit.board.table import board_table
from audit.numbers import EMPTY, format_value
from audit.review.reviews import add_review
from tests.app.conftest import open_page, plain

BOARD = "demo-chimera"
VERBOSE, MIXED, TERSE = (f"demo-chimera-fuzzy-{s}" for s in ("verbose", "mixed", "terse"))
KEY = "entities/avg/f1"


def _systems(at) -> dict[str, dict]:
    """The ranking table's rows by system, with the estimates table's columns when it is shown."""
    out: dict[str, dict] = {}
    for d in at.dataframe:
        if "metric" in d.value.columns:  # every headline metric: a row per system and metric
            continue
        if {"rank set"} <= set(d.value.columns) or {"estimate [95%]"} <= set(d.value.columns):
            for _, r in d.value.iterrows():
                out.setdefault(r["system"], {}).update(dict(r))
    return out


def _shared_question(conn, runs: tuple[str, ...]) -> int:
    """A decision of runs[0] whose question (not two equal spans) the other runs also ask."""
    marks = ",".join("?" * len(runs))
    return conn.execute(
        f"SELECT d.id FROM decisions d JOIN runs r ON r.id = d.run_id WHERE r.name = ? AND d.left != d.right AND "
        f"(SELECT COUNT(DISTINCT d2.run_id) FROM decisions d2 JOIN runs r2 ON r2.id = d2.run_id WHERE d2.qkey = "
        f"d.qkey AND r2.name IN ({marks})) = ? ORDER BY d.id", [runs[0], *runs, len(runs)]).fetchone()[0]


def test_the_demo_has_a_board_per_family_and_the_page_shows_board_tables_numbers(app, conn):
    assert {b["name"] for b in list_boards(conn)} == {"demo-chimera", "demo-litxbench", "demo-retrieval",
                                                      "demo-ideation"}
    at = open_page(app, "leaderboard", board=BOARD)
    assert not at.exception
    assert at.selectbox(key="leaderboard.board").value == BOARD
    table = board_table(conn, BOARD)
    shown = _systems(at)
    assert set(shown) == {VERBOSE, MIXED, TERSE}
    for s in table["systems"]:
        row = shown[s["system"]]
        assert row["judge only"] == format_value(s["judge_only"][KEY])
        assert ranked_value_title(table) == "reviewed so far"  # no plan, not every decision reviewed
        assert row["reviewed so far"] == format_value(s["audited"][KEY])
        assert row["rank: judge → reviewed so far"] == f"{s['rank_judge']} → {s['rank_audited']}"
        assert row["rank set"] == EMPTY and "estimate [95%]" not in row  # no plan, no full review: none is valid
    assert any("No valid interval" in w.value for w in at.warning)
    assert len(at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")) == 1


def test_every_demo_board_renders(app):
    at = open_page(app, "leaderboard")
    for name in ("demo-litxbench", "demo-retrieval", "demo-ideation"):
        at.selectbox(key="leaderboard.board").set_value(name).run()
        assert not at.exception, name
        assert len(_systems(at)) >= 2, name
    assert set(_systems(at)) == {"Human", "AI", "AI_Rerank"}  # ideation: the systems inside the one run


def test_a_review_of_a_shared_question_moves_two_systems(app, conn):
    at = open_page(app, "leaderboard", board=BOARD)
    before = _systems(at)
    d = _shared_question(conn, (VERBOSE, MIXED))
    judge = conn.execute("SELECT judge_label FROM decisions WHERE id = ?", [d]).fetchone()[0]
    add_review(conn, VERBOSE, d, "no-match" if judge == "match" else "match", "ann")
    at.run()
    after = _systems(at)
    moved = {s for s in after if after[s]["reviewed so far"] != before[s]["reviewed so far"]}
    assert {VERBOSE, MIXED} <= moved
    assert all(after[s]["judge only"] == before[s]["judge only"] for s in after)
    table = board_table(conn, BOARD)
    assert {s["system"]: format_value(s["audited"][KEY]) for s in table["systems"]} == \
        {s: r["reviewed so far"] for s, r in after.items()}


def _planned(table: dict) -> dict:
    """The table as a board plan makes it (h-o's joint estimates): intervals, rank sets, N more documents."""
    key = table["metric"]
    out = {**table, "interval": "joint plan", "interval_explained": "the board's sampling plan", "more_documents": 7}
    systems = []
    for i, s in enumerate(table["systems"]):
        v = s["audited"][key]
        systems.append({**s, "estimate": {key: {"value": v, "ci": [v - 0.05, v + 0.05],
                                                "anytime": {"ci": [v - 0.08, v + 0.08]}}},
                        "bias": {key: {"value": 0.01 * i, "ci": [-0.02, 0.03]}}, "rank_set": [1, 2 + i % 2]})
    out["systems"] = systems
    out["pairs"] = [{**p, "ci": [-0.1, 0.2], "ci_simultaneous": [-0.12, 0.22]} for p in table["pairs"]]
    a, b = (s["system"] for s in systems[:2])
    out["settled"] = [f"{a} > {b} holds", f"{b} vs {systems[2]['system']} is not settled"]
    return out


def test_a_plans_intervals_rank_sets_and_more_documents_in_words(app, conn, monkeypatch):
    import audit.board.table as tables

    real = tables.board_table
    monkeypatch.setattr(tables, "board_table", lambda db, name, *, policy: _planned(real(db, name, policy=policy)))
    at = open_page(app, "leaderboard", board=BOARD)
    assert not at.exception
    rows = list(_systems(at).values())
    for s in real(conn, BOARD)["systems"]:
        v = s["audited"][KEY]
        row = _systems(at)[s["system"]]
        assert row["estimate [95%]"] == f"{format_value(v)} [{format_value(v - 0.05)}, {format_value(v + 0.05)}]"
        assert row["anytime [95%]"] == f"[{format_value(v - 0.08)}, {format_value(v + 0.08)}]"
        # the second rank ranks the estimate, and the value beside it is that estimate (not the plug-in audited)
        assert row["estimated"] == format_value(v) and "rank: judge → estimated" in row and "audited" not in row
    assert {r["rank set"] for r in rows} == {"[1, 2]", "[1, 3]"}
    assert {r["judge bias [95%]"] for r in rows} == {"0 [-0.0200, +0.0300]", "+0.0100 [-0.0200, +0.0300]",
                                                    "+0.0200 [-0.0200, +0.0300]"}
    text = plain(" ".join(m.value for m in at.markdown))
    assert "holds" in text and "is not settled: review about 7 more documents" in text
    assert not any("No valid interval" in w.value for w in at.warning)
    points = at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")
    assert "estimated" in str(points[0].proto.datasets) or "estimated" in str(points[0].proto)


def test_create_and_delete_a_board(app, conn):
    at = open_page(app, "leaderboard", board=BOARD)
    at.text_input(key="leaderboard.new_name").set_value("mine")
    at.multiselect(key="leaderboard.new_runs").set_value(["demo-litxbench-drop-meas30", "demo-retrieval-bm25"])
    at.button(key="FormSubmitter:leaderboard.create-Create board").click().run()
    assert any("family" in e.value for e in at.error)  # refused in one line, nothing stored
    assert "mine" not in {b["name"] for b in list_boards(conn)}
    at.multiselect(key="leaderboard.new_runs").set_value(["demo-litxbench-drop-meas30",
                                                           "demo-litxbench-process-perturb"])
    at.button(key="FormSubmitter:leaderboard.create-Create board").click().run()
    assert not at.exception
    assert "mine" in {b["name"] for b in list_boards(conn)}
    assert at.selectbox(key="leaderboard.board").value == "mine"
    # the box offers the board on screen (it offered the first board of the list: one click deleted another one),
    # and nothing is deleted before the deletion is confirmed
    assert at.selectbox(key="leaderboard.delete_name.mine").value == "mine"
    assert at.button(key="leaderboard.delete").disabled  # AppTest refuses a click on it, as a browser does
    at.checkbox(key="leaderboard.delete_sure.mine").check().run()
    assert not at.button(key="leaderboard.delete").disabled
    at.button(key="leaderboard.delete").click().run()
    assert not at.exception
    assert "mine" not in {b["name"] for b in list_boards(conn)}
    assert at.selectbox(key="leaderboard.board").value in {b["name"] for b in list_boards(conn)}


def test_hidden_in_blind_review(app):
    app.session_state["blind_mode"] = True
    at = open_page(app, "leaderboard", reviewer="ann", board=BOARD)
    assert not at.exception
    assert not [d for d in at.dataframe if "rank set" in d.value.columns]
    assert any("hidden while you review blind" in i.value for i in at.info)


def test_a_full_review_shows_exact_values_and_one_rank_rank_sets(app, conn, monkeypatch):
    import audit.board.table as tables

    real = tables.board_table

    def exact(db, name, *, policy):
        t = real(db, name, policy=policy)
        systems = [{**s, "estimate": {KEY: {"value": s["audited"][KEY], "ci": [s["audited"][KEY]] * 2,
                                            "anytime": {"ci": [s["audited"][KEY]] * 2}}},
                    "rank_set": [s["rank_audited"]] * 2} for s in t["systems"]]
        return {**t, "systems": systems, "interval": "exact", "interval_explained": "exact: every decision reviewed"}

    monkeypatch.setattr(tables, "board_table", exact)
    at = open_page(app, "leaderboard", board=BOARD)
    rows = _systems(at)
    assert {r["rank set"] for r in rows.values()} == {"[1, 1]", "[2, 2]", "[3, 3]"}
    assert all(r["estimate [95%]"] == f"{r['audited']} (exact)" and r["anytime [95%]"] == "(exact)"
               for r in rows.values())
    assert not any("No valid interval" in w.value for w in at.warning)


def test_every_headline_metric_of_every_system(app, conn):
    at = open_page(app, "leaderboard", board=BOARD)
    df = next(d.value for d in at.dataframe if "metric" in d.value.columns)
    table = board_table(conn, BOARD)
    assert len(df) == len(table["systems"]) * len(table["metrics"])
    shown = {(r["system"], r["metric"]): (r["judge only"], r["audited"]) for _, r in df.iterrows()}
    for s in table["systems"]:
        for m in table["metrics"]:
            assert shown[s["system"], m["label"]] == (format_value(s["judge_only"][m["key"]]),
                                                      format_value(s["audited"][m["key"]]))


def test_the_page_draws_the_boards_sample_and_serves_a_document_to_review(app, conn):
    """Issue 36 §3 from the page: 'Draw the board's sample' stores the board's one plan (the same as `board plan`),
    and 'Serve the next document' names a document of it with a link to review it in a run that asks about it."""
    from audit.board.joint import board_plan

    at = open_page(app, "leaderboard", board=BOARD)
    assert board_plan(conn, BOARD) is None
    at.button(key="leaderboard.plan").click().run()
    assert not at.exception
    plan = board_plan(conn, BOARD)
    assert plan is not None and sorted(plan["runs"]) == sorted((VERBOSE, MIXED, TERSE))
    at.button(key="leaderboard.next").click().run()
    assert not at.exception
    info = [plain(i.value) for i in at.info if "Next: document" in plain(i.value)]
    assert len(info) == 1 and "more document" in info[0], [plain(i.value) for i in at.info]
    served = conn.execute("SELECT block FROM board_draws WHERE board = ?", [BOARD]).fetchall()
    assert len(served) == 1 and served[0][0] in info[0]  # the queue recorded what the page served
    links = [plain(p.proto.label) for p in at.get("page_link") if "Review it in run" in plain(p.proto.label)]
    assert links and all(any(r in label for r in (VERBOSE, MIXED, TERSE)) for label in links), links


IDEATION = "demo-ideation"


def _texts(at) -> list[str]:
    return [plain(x.value) for kind in ("markdown", "caption", "info", "warning", "success") for x in at.get(kind)]


def test_no_caption_shows_a_key_name_on_any_demo_board(app):
    """The interval caption and every sentence are words: no backticked JSON key (`ci`, `anytime.ci`) reaches a
    researcher on any demo board."""
    at = open_page(app, "leaderboard")
    for name in ("demo-chimera", "demo-litxbench", "demo-retrieval", IDEATION):
        at.selectbox(key="leaderboard.board").set_value(name).run()
        assert not at.exception, name
        shown = " ".join(_texts(at))
        assert "`" not in shown.replace("`python -m audit board create NAME --runs A,B`", ""), (name, shown)
        assert "anytime.ci" not in shown and "`ci`" not in shown
    at.selectbox(key="leaderboard.board").set_value(BOARD).run()
    at.button(key="leaderboard.plan").click().run()  # with the board's plan: the sampled intervals' caption
    shown = " ".join(_texts(at))
    assert "Intervals: the board's sampling plan" in shown and "`" not in shown, shown


def test_an_ideation_board_draws_its_runs_sample_and_serves_from_the_runs_queue(app, conn):
    """A board of one run's systems: 'Draw the run's sample' creates the run's own plan (what the Review queue's
    sample mode serves), 'Serve the next document' names what that queue serves with a link to it, and the page
    then says its intervals come from the run's own plan."""
    from audit.board.store import get_board
    from audit.review.sampling import load_plan, next_sample

    run = get_board(conn, IDEATION)["runs"][0]
    at = open_page(app, "leaderboard", board=IDEATION)
    assert not at.exception and load_plan(conn, run) is None
    warning = " ".join(plain(w.value) for w in at.warning)
    assert "draw the run's sample" in warning and "board" not in warning, warning  # it has no board plan
    assert not [b for b in at.button if b.key == "leaderboard.plan"]  # not the board-wide plan
    at.button(key="leaderboard.run_plan").click().run()
    assert not at.exception and load_plan(conn, run) is not None
    assert any("run's own sampling plan" in t for t in _texts(at))
    at.button(key="leaderboard.next").click().run()
    assert not at.exception
    nxt = next_sample(conn, run)
    info = [t for t in _texts(at) if t.startswith("Next:")]
    assert len(info) == 1 and nxt["doc"] in info[0] and "sample queue" in info[0], info
    links = [plain(p.proto.label) for p in at.get("page_link") if "sample queue" in plain(p.proto.label)]
    assert links == [f"Open run {run}'s sample queue ›"]


def test_the_metrics_table_shows_every_metrics_estimate_a_median_too(app, conn, monkeypatch):
    """With a sample, the 'every headline metric' table carries each metric's estimate and anytime interval (the
    retrieval board's median rank among them), and a metric the sample cannot estimate yet says why."""
    import audit.board.table as tables

    real = tables.board_table
    median = "all/median_rank"

    def planned(db, name, *, policy):
        t = real(db, name, policy=policy)
        est = {s["system"]: {median: {"value": 7.0, "ci": [5.0, 9.0], "anytime": {"ci": [4.0, 11.0]}},
                             "all/mrr": {"value": None, "ci": None, "note": "insufficient reviews: n < 30"},
                             "all/hits@10": {"value": 0.2, "ci": None, "note": "stratum '1-2 above' not reviewed"}}
               for s in t["systems"]}
        return {**t, "interval": "joint plan", "interval_explained": "the board's sampling plan",
                "systems": [{**s, "estimate": est[s["system"]]} for s in t["systems"]]}

    monkeypatch.setattr(tables, "board_table", planned)
    at = open_page(app, "leaderboard", board="demo-retrieval")
    assert not at.exception
    df = next(d.value for d in at.dataframe if "metric" in d.value.columns)
    rows = {(r["system"], r["metric"]): r for _, r in df.iterrows()}
    for s in real(conn, "demo-retrieval")["systems"]:
        r = rows[s["system"], "median rank (all)"]
        assert (r["estimate [95%]"], r["anytime [95%]"]) == ("7 [5, 9]", "[4, 11]"), dict(r)
        assert rows[s["system"], "MRR (all)"]["estimate [95%]"] == "– (no estimate yet)".replace("–", EMPTY)
        assert rows[s["system"], "Hits@10 (all)"]["estimate [95%]"] == "0.2000 (no interval yet)"
    captions = [plain(c.value) for c in at.caption]
    systems = ", ".join(s["system"] for s in real(conn, "demo-retrieval")["systems"])  # each caption names its own
    assert f"No interval yet for {systems}: insufficient reviews: n < 30." in captions, captions
    assert f"No interval yet for {systems}: stratum '1-2 above' not reviewed." in captions
    assert any(e.label == "Every headline metric: judge only, audited and estimated" for e in at.expander)


def test_a_first_visit_opens_the_board_of_the_current_run(app_db):
    """Without `?board=`, a session's first visit opens the newest board holding the run the sidebar has (not the
    newest board of the database, which may be another family's)."""
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT

    for run, board in ((MIXED, BOARD), ("demo-retrieval-bm25", "demo-retrieval"),
                       ("demo-ideation-si2024-humans", "demo-ideation")):
        at = open_page(AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run(), "leaderboard", run=run)
        assert not at.exception
        assert at.selectbox(key="leaderboard.board").value == board, run


def test_drawing_the_sample_keeps_the_labels_given_so_far_and_the_judges_order(app, conn):
    """With a sample drawn but not yet reviewed, the ranked value is the estimate (none yet): the values reviewed so
    far stay in a column of their own (they vanished from the table), and the rows keep the judge's order (they
    came in the order the runs were added)."""
    decision = _shared_question(conn, (VERBOSE, MIXED, TERSE))
    judge = conn.execute("SELECT judge_label FROM decisions WHERE id = ?", [decision]).fetchone()[0]
    add_review(conn, VERBOSE, decision, "no-match" if judge == "match" else "match", "ana")
    at = open_page(app, "leaderboard", board=BOARD)
    at.button(key="leaderboard.plan").click().run()
    assert not at.exception
    table = board_table(conn, BOARD)
    assert table["interval"] != "none" and ranked_value_title(table) == "estimated"
    shown = _systems(at)
    for s in table["systems"]:
        assert shown[s["system"]]["reviewed so far"] == format_value(s["audited"][KEY])
    assert any(s["audited"][KEY] != s["judge_only"][KEY] for s in table["systems"])  # the label moved a value
    order = [r["system"] for d in at.dataframe if "rank set" in d.value.columns for _, r in d.value.iterrows()]
    by_judge = sorted(table["systems"], key=lambda s: s["rank_judge"])
    assert all(s["rank_audited"] is None for s in table["systems"])  # no sampled review yet: no estimate ranks
    assert order == [s["system"] for s in by_judge]


def test_a_reason_names_its_systems_and_a_bias_without_interval_says_so(app, conn, monkeypatch):
    # three "No interval yet: insufficient reviews: stratum …" captions named no system, with different counts; a
    # judge bias of 0 beside "(no interval yet)" read as exact
    import audit.board.table as tables

    real = tables.board_table

    def planned(db, name, *, policy):
        t = real(db, name, policy=policy)
        systems = [s["system"] for s in t["systems"]]
        key = t["metric"]
        est = {s: {key: {"value": 0.5, "ci": None, "note": f"stratum 'x' has no reviewed block (0 of {10 + i})"}}
               for i, s in enumerate(systems)}
        return {**t, "interval": "joint plan", "interval_explained": "the board's sampling plan",
                "systems": [{**s, "estimate": est[s["system"]], "bias": {key: {"value": 0.0, "ci": None}}}
                            for s in t["systems"]]}

    monkeypatch.setattr(tables, "board_table", planned)
    at = open_page(app, "leaderboard", board=BOARD)
    assert not at.exception
    systems = [s["system"] for s in real(conn, BOARD)["systems"]]
    captions = [plain(c.value) for c in at.caption]
    for i, s in enumerate(systems):
        assert f"No interval yet for {s}: stratum 'x' has no reviewed block (0 of {10 + i})." in captions, captions
    est = next(d.value for d in at.dataframe if "judge bias [95%]" in d.value.columns)
    assert set(est["judge bias [95%]"]) == {"0 (no interval yet)"}


def test_a_runs_scores_page_and_report_point_to_its_boards_estimate(app, conn):
    # the Scores page said "create a sampling plan … to get an estimate" and the report "no estimate", beside a
    # board whose drawn sample estimates the run (Leaderboard, the report's board section)
    from audit.board.joint import create_board_plan
    from audit.outputs.report import build_report, report_html
    from audit.views import as_view

    board = next(b for b in list_boards(conn) if b["name"] == BOARD)
    run = board["runs"][0]
    at = open_page(app, "scores", run=run)
    assert not any("board's sample" in plain(i.value) for i in at.info)
    create_board_plan(conn, BOARD, board["runs"], seed=0)
    at = open_page(app, "scores", run=run)
    assert not at.exception
    said = [plain(i.value) for i in at.info if "board's sample" in plain(i.value)]
    assert said == [f"A board's sample holds this run ({BOARD}): its estimate of this run's numbers is on the "
                    "Leaderboard and in the report's board section."], [plain(i.value) for i in at.info]
    links = [plain(p.proto.label) for p in at.get("page_link") if "Leaderboard" in plain(p.proto.label)]
    assert links == [f"Open the Leaderboard of {BOARD} ›"]
    page = html.unescape(report_html(build_report(as_view(conn, run))))
    assert f"no sampling plan, so there is no estimate of a full human review (create one with the command python -m " \
           f"audit plan, then review through the sample queue); but a board's sample holds this run ({BOARD})" in page
