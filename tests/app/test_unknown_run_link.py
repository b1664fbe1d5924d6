"""A link or bookmark naming a run the database does not hold: the pages show another run, and say so until the
reviewer picks one (the warning was drawn once, and gone at the next rerun, whose URL already named the fallback)."""

from __future__ import annotations

from tests.app.conftest import open_page, plain


def _warned(at) -> bool:
    return any("Run 'gone-run' is not in this database; showing" in plain(w.value) for w in at.sidebar.warning)


def test_an_unknown_run_in_the_url_is_said_until_another_run_is_picked(app):
    at = open_page(app, "scores", run="gone-run")
    assert not at.exception and _warned(at)
    assert at.query_params["run"] != ["gone-run"]  # the URL names the run shown
    at.run()
    assert _warned(at)  # still said at the next rerun
    other = next(o for o in at.selectbox(key="sidebar.run").options if o != at.selectbox(key="sidebar.run").value)
    at.selectbox(key="sidebar.run").set_value(other).run()
    assert not _warned(at)
