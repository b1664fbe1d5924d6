"""The hostile-text hardening case (devtools/hardening_cases/hostile_text.py) passes: an ideation system name with a
link, a remote image, KaTeX and an RLO is shown on the question, scores and overview pages, never live."""

from devtools.hardening_cases.hostile_text import HOSTILE, cases, live_text


def test_the_check_sees_a_live_image_link_formula_and_rlo():
    assert live_text([HOSTILE]) == [HOSTILE]
    assert live_text(["\\!\\[p\\]\\(http\\:\\/\\/tracker\\.invalid\\) \\$e\\^x\\$ ⟨RLO⟩evil"]) == []


def test_hostile_system_names_render_as_text(tmp_path, demo_template, monkeypatch):
    monkeypatch.setenv("REJUDGE_DB", str(tmp_path / "unused.db"))
    (case,) = cases(tmp_path, demo_template)
    status, err = case.call(tmp_path, demo_template)
    assert (status, err) == (0, "")
