"""A long CLI job says how far it is when stderr goes to a file (issue #40 point 9: a live LLM run printed nothing
for 10 minutes): plain lines at an interval and a last one at the end; on a terminal, a live bar."""

from __future__ import annotations

import io
import re

from audit.cli import main
from audit.cli_progress import Progress
from tests.conftest import GOLD, JUDGE_LOG, PRED_MIXED


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_file_gets_a_line_at_each_interval_and_one_at_the_end():
    out, clock = io.StringIO(), Clock()
    bar = Progress("judging", "questions", stream=out, every_s=30, clock=clock)
    for t, done in ((1, 10), (12, 40), (31, 90), (45, 120), (62, 150), (70, 170)):
        clock.now = t
        bar.update(done, 200, failed=0)
    clock.now = 75
    bar.close()
    lines = out.getvalue().splitlines()
    assert lines == ["judging: 90 of 200 questions (45 %), failed 0, 31 s",
                     "judging: 150 of 200 questions (75 %), failed 0, 62 s",
                     "judging: 170 of 200 questions (85 %), failed 0, 75 s"]


def test_the_end_is_said_when_the_job_succeeds_and_a_failure_keeps_its_one_error_line():
    for final, want in ((True, ["judging: 200 of 200 questions (100 %), 5 s"]), (False, [])):
        out, clock = io.StringIO(), Clock()
        bar = Progress("judging", "questions", stream=out, every_s=30, clock=clock)
        clock.now = 5
        bar.update(200, 200)
        bar.close(final=final)
        assert out.getvalue().splitlines() == want


def test_cli_score_with_stderr_in_a_file_reports_progress(tmp_path, capsys):
    """capsys's stderr is no terminal, as `2> log` is not."""
    assert main(["--db", str(tmp_path / "p.db"), "score", "chimera", "--gold", str(GOLD), "--pred",
                 str(PRED_MIXED), "--judge", f"replay:{JUDGE_LOG}", "--run", "p"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"^judging: (\d+) of \1 questions \(100 %\), cached \d+, failed 0, invalid \d+, \d+ s$", err,
                     re.M), err


def test_unreadable_replay_answers_are_counted_on_the_last_line_and_the_warning_names_their_lines(tmp_path, capsys):
    """A replay judge answers before its answers are counted: the last line said `invalid 0` beside a warning that
    one answer could not be read, and the warning named neither the log nor the line."""
    lines = JUDGE_LOG.read_text(encoding="utf-8").splitlines()
    bad = {0: "perhaps", 5: "yes!", 10: "nope"}
    for i, word in bad.items():
        lines[i] = re.sub(r'"answer": "\w+"', f'"answer": "{word}"', lines[i])
    log = tmp_path / "judge.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["--db", str(tmp_path / "p.db"), "score", "chimera", "--gold", str(GOLD), "--pred",
                 str(PRED_MIXED), "--judge", f"replay:{log}", "--run", "p"]) == 0
    err = capsys.readouterr().err
    counted = re.findall(r"^judging: .*, invalid (\d+), \d+ s$", err, re.M)
    warned = re.search(r"^warning: (\d+) judge answers could not be read \((.*?)\)", err, re.M)
    assert counted and warned, err
    assert counted[-1] == warned[1] == "3"
    assert warned[2] == f"{log.name} lines 1, 6, 11"


def test_the_last_line_is_printed_again_when_only_a_count_changed():
    out, clock = io.StringIO(), Clock()
    bar = Progress("judging", "questions", stream=out, every_s=30, clock=clock)
    clock.now = 31
    bar.update(200, 200, invalid=0)
    bar.update(200, 200, invalid=2)
    bar.close()
    assert out.getvalue().splitlines()[-1] == "judging: 200 of 200 questions (100 %), invalid 2, 31 s"
