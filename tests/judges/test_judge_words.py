"""The judge statistics in words (ui/judge_summary.py) and ideation's re-ask counts (issue 28)."""

from __future__ import annotations

from ui.judge_summary import judge_requests_text


def test_missing_answers_are_worded_by_judge_kind_and_retries_apart_from_retried_requests():
    stats = {"distinct_queries": 16, "requests": 16, "retries": 96, "retried": 16, "missing": 3, "failed": 3}
    live = judge_requests_text(stats, "openai:m")
    assert "16 requests were retried after a transient error (96 retries in all)" in live
    assert "without an answer from the server" in live and "judge log" not in live
    assert "not in the judge log" in judge_requests_text(stats, "replay:log.jsonl")
    assert "96 retries after transient errors" in judge_requests_text({**stats, "retried": None}, "openai:m")


def test_first_unreadable_replies_and_those_left_after_the_re_ask_are_both_said():
    text = judge_requests_text({"distinct_queries": 10, "requests": 10, "invalid": 2, "invalid_before_reask": 5})
    assert "5 first replies could not be read" in text and "2 still could not be read" in text


def test_live_ideation_counts_each_unreadable_answer_once(monkeypatch, tmp_path):
    from audit.runs import score_run
    from audit.store.database import open_db
    from devtools.judge_server import JudgeServer
    from scoring.families import get_task
    from tests.families.ideation.test_ideation_family import INPUTS

    def script(prompt: str) -> str:  # novelty ratings never readable, not even after the reminder
        if "Rate the idea" in prompt:
            return "no slot here" if "novelty" in prompt.split("Criterion:")[-1][:40] else "Fine.\nSCORE: 3"
        return "A is better.\nWINNER: FIRST"

    with JudgeServer(script) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        row = score_run(open_db(tmp_path / "i.db"), "ideation", {"ideas": INPUTS["ideas"]}, "openai:test", run="r")
    n_novelty = sum(len(d.question.ideas) for d in get_task("ideation").load({"ideas": INPUTS["ideas"]}).docs)
    judge = row["summary"]["judge"]
    assert judge["invalid"] == n_novelty == judge["invalid_before_reask"]  # once each, not twice
