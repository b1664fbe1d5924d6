"""Issue 25: the current run, the reviewer name and blind mode survive any sequence of page switches and reruns,
and the URL carries them; the fast twin of the browser test tests/e2e/test_auth_sidebar_race.py.

A browser that clicks a sidebar link before it has registered the sidebar's widgets reruns with no widget state,
then draws each widget from what the server sends with it: the value when the server sends one, else the
widget's default (an empty name, blind off, the first run of the list). So the invariant is checked on what a
browser that holds no widget state would draw, not only on the server's session state.
"""

from __future__ import annotations

import random

import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetStates
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

RUN = "demo-ideation-si2024-humans"  # neither the first demo run nor the newest: a reset would show
PAGES = ("overview", "queue", "scores", "agreement", "export", "document", "runs")


def drawn_by_a_new_browser(widget) -> object:  # noqa: ANN001 - an AppTest widget
    """What a browser without state for `widget` shows: the value sent with the element, else its default."""
    proto = widget.proto
    kind = type(widget).__name__
    if kind == "TextInput":
        return proto.value if proto.set_value else proto.default
    if kind == "Toggle":
        return proto.value if proto.set_value else proto.default
    if kind == "Selectbox":
        return proto.raw_value if proto.set_value else proto.options[proto.default]
    raise AssertionError(kind)


def url(at: AppTest, name: str) -> str | None:
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else value


def assert_sidebar_keeps(at: AppTest, name: str, blind: bool, run: str, step: str) -> None:
    assert not at.exception, step
    box, toggle, picker = at.text_input(key="reviewer"), at.toggle(key="blind"), at.selectbox(key="sidebar.run")
    assert (box.value, toggle.value, picker.value) == (name, blind, run), step
    assert (drawn_by_a_new_browser(box), drawn_by_a_new_browser(toggle), drawn_by_a_new_browser(picker)) == \
        (name, blind, run), step
    assert (url(at, "reviewer"), url(at, "blind"), url(at, "run")) == (name or None, "1" if blind else None, run), step


def follow_link(at: AppTest, page: str, with_widget_state: bool) -> None:
    """A sidebar link: it carries no query parameters; clicked during a rerun, it may carry no widget state."""
    at.switch_page(f"pages/{page}.py")
    at.query_params.clear()
    if with_widget_state:
        at.run()
    else:
        at._run(widget_state=WidgetStates())  # noqa: SLF001 - the rerun a too-early click sends


@pytest.mark.parametrize("seed", [1, 2])
def test_run_reviewer_and_blind_survive_any_page_switches_and_reruns(app_db, seed):
    rng = random.Random(seed)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params.update({"run": RUN, "reviewer": "racer", "blind": "1"})
    at.switch_page("pages/overview.py")
    at.run()
    name, blind = "racer", True
    assert_sidebar_keeps(at, name, blind, RUN, "first run")
    for i in range(7):
        action = rng.choice(["early link", "early link", "link", "rerun", "rename", "blind"])
        if action in ("early link", "link"):
            page = rng.choice(PAGES)
            follow_link(at, page, with_widget_state=action == "link")
            step = f"{i}: {action} to {page}"
        elif action == "rerun":
            at.run()
            step = f"{i}: rerun"
        elif action == "rename":  # the reviewer's own change is what survives from then on
            name = rng.choice(["bo", "ana", "racer"])
            at.text_input(key="reviewer").set_value(name).run()
            step = f"{i}: renamed to {name}"
        else:
            blind = not blind
            at.toggle(key="blind").set_value(blind).run()
            step = f"{i}: blind {blind}"
        assert_sidebar_keeps(at, name, blind, RUN, step)


@pytest.mark.parametrize("run", ["demo-chimera-smollm2-few-shot", "demo-chimera-mixed"])
def test_a_long_run_name_is_written_out_under_the_picker(app, run):
    # the sidebar's box cut "demo-chimera-smollm2-few-shot" to "demo-chimera-smollm2-few-shc"
    from tests.app.conftest import open_page, plain
    from ui.state import PICKER_FITS

    at = open_page(app, "overview", run=run)
    assert not at.exception
    shown = [plain(c.value) for c in at.sidebar.caption if plain(c.value) == run]
    assert shown == ([run] if len(run) > PICKER_FITS else [])
