"""Counts a page shows carry thousands separators. The overview: the run's total decisions in its label ("Reviewed of
111,969 decisions"), the reviewed ones as its value, so that a large run's "111969 / 111969" is no longer cut off at
a quarter of the page, and the run's caption ("100,000 abstracts · 111,969 decisions"). The Scores page's line of
counts, its nouns in the right number ("1 reviewer", never "reviewer(s)"). The review queue's progress line (both
cards word it through `progress_text`) and a board's coverage line alike."""

from audit.review.queue import progress_text
from audit.review.reviews import add_review, allowed_labels
from audit.views import load_view
from tests.app.conftest import open_page
from ui.leaderboard import coverage_text

DEMO = "demo-chimera-mixed"


def _reviewed_metric(at):  # noqa: ANN001, ANN202 - an AppTest and its metric element
    found = [m for m in at.metric if m.label.startswith("Reviewed of ")]
    assert len(found) == 1, [m.label for m in at.metric]
    return found[0]


def test_the_reviewed_count_shows_the_total_in_its_label_and_follows_a_review(app, conn):
    view = load_view(conn, DEMO)
    total = view.row["n_decisions"]
    at = open_page(app, "overview", reviewer="counter", run=DEMO)
    assert not at.exception
    metric = _reviewed_metric(at)
    assert metric.label == f"Reviewed of {total:,} decisions" and metric.value == "0"
    d = view.decisions()[0]
    add_review(conn, DEMO, d["id"], next(x for x in allowed_labels("chimera", d["kind"]) if x != d["judge"]), "ana")
    at.run()
    assert _reviewed_metric(at).value == "1"
    assert next(m for m in at.metric if m.label == "Overruled").value == "1"


def test_large_counts_carry_thousands_separators(app, conn):
    conn.execute("UPDATE runs SET n_decisions = 111969, n_docs = 100000 WHERE name = ?", [DEMO])
    conn.commit()
    at = open_page(app, "overview", reviewer="counter", run=DEMO)
    assert not at.exception
    assert _reviewed_metric(at).label == "Reviewed of 111,969 decisions"
    caption = at.caption[0].value.replace("\\", "")  # the run's line under the title, as Markdown shows it
    assert " · 100,000 abstracts · 111,969 decisions · " in caption, caption


def test_the_scores_caption_groups_its_counts_and_never_says_reviewer_s(app, conn):
    conn.execute("UPDATE runs SET n_decisions = 111969 WHERE name = ?", [DEMO])
    conn.commit()
    d = load_view(conn, DEMO).decisions()[0]
    add_review(conn, DEMO, d["id"], d["judge"], "ana")
    at = open_page(app, "scores", reviewer="counter", run=DEMO)
    assert not at.exception
    caption = next(c.value for c in at.caption if "decisions reviewed" in c.value)
    assert caption.startswith("1 of 111,969 decisions reviewed · 0 overruled · 1 confirmed · "), caption
    assert caption.endswith(" · 1 review row by 1 reviewer"), caption


def test_the_queue_progress_line_groups_its_counts(app, conn):
    conn.execute("UPDATE runs SET n_decisions = 111969 WHERE name = ?", [DEMO])
    conn.commit()
    at = open_page(app, "queue", reviewer="counter", run=DEMO)
    assert not at.exception
    lines = [p.proto.text for p in at.get("progress")]
    assert any(t.startswith("You have labelled 0 of 111,969 decisions · ") for t in lines), lines
    assert progress_text(1234, 111969, 5000) == "You have labelled 1,234 of 111,969 decisions · 5,000 in this queue"


def test_the_board_coverage_line_groups_its_counts():
    table = {"reviewed": {"decisions": 1200, "of_decisions": 683000, "documents": 3, "of_documents": 10000},
             "shared_questions": 2500, "runs": ["a", "b"], "policy": "unanimous"}
    assert coverage_text(table) == ("1,200 of 683,000 distinct questions reviewed · 3 of 10,000 documents complete · "
                                    "2,500 questions shared by two or more runs (one review settles each in all of "
                                    "them) · effective labels: unanimous policy")


def test_the_overview_names_each_input_by_its_title(app):
    """LitXBench's run line read "gold gold · pred pred_drop_meas30 · text papers" (the input's key, then its
    folder's name); each input is named by its title."""
    at = open_page(app, "overview", run="demo-litxbench-drop-meas30")
    assert not at.exception
    caption = at.caption[0].value.replace("\\", "")
    assert "gold folder gold · prediction folder pred_drop_meas30 · paper texts papers" in caption, caption
