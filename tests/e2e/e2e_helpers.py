"""Small Playwright helpers for Streamlit pages: waiting for reruns, widgets, navigation, screenshots."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

from playwright.sync_api import Locator, Page, expect

from tests.e2e.e2e_config import DOCS_SHOTS, README_SHOTS, VIEWPORT

RERUN_TIMEOUT = 30_000
MAX_SHOT_HEIGHT = 9_000

_IDLE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.getAttribute('data-test-script-state') === 'notRunning'
    && app.getAttribute('data-test-connection-state') === 'CONNECTED'
    && !document.querySelector('[data-stale="true"]');
}"""
# Lazily loaded elements (tables, charts) show a skeleton first; Vega charts draw after they mount.
_DRAWN_JS = """() => !document.querySelector('[data-testid="stSkeleton"]')
  && [...document.querySelectorAll('[data-testid="stVegaLiteChart"], [data-testid="stArrowVegaLiteChart"]')]
       .every((c) => c.querySelector('canvas, svg'))"""


def wait_idle(page: Page, timeout: float = RERUN_TIMEOUT) -> None:
    """Wait until the script is not running, the socket is connected and no element is stale (faded).

    Call it after an `expect` on something the rerun shows: right after a click the rerun may not have started.
    """
    page.wait_for_function(_IDLE_JS, timeout=timeout)


def assert_no_exception(page: Page) -> None:
    """No Streamlit exception box on the page; a failure quotes the boxes' text (CI logs keep nothing else)."""
    boxes = page.get_by_test_id("stException")
    try:
        expect(boxes).to_have_count(0)
    except AssertionError as failure:
        texts = "\n---\n".join(boxes.all_inner_texts())
        raise AssertionError(f"Streamlit exception on {page.url}:\n{texts}") from failure


def assert_above_the_fold(page: Page, elements: tuple[Locator, ...], height: int, what: object,
                          settle: float = 15) -> None:
    """Every element ends inside a viewport `height` px high once the page has settled: under CI's load a status line
    above the card can still be on screen when the card first shows (a note box was once 61 px lower for a moment)."""
    deadline = time.time() + settle
    while True:
        low = [(el, box) for el in elements if not (box := el.bounding_box()) or box["y"] + box["height"] > height]
        if not low or time.time() > deadline:
            break
        page.wait_for_timeout(300)
    assert not low, (what, low)


def heading(page: Page, title: str | re.Pattern) -> Locator:
    return page.get_by_role("heading", name=title, exact=True).first


def open_url(page: Page, url: str, title: str | re.Pattern) -> None:
    """Open a URL in this page (a new Streamlit session) and wait for the page with this title."""
    page.goto(url)
    expect(heading(page, title)).to_be_visible(timeout=60_000)
    wait_idle(page)
    assert_no_exception(page)


def navigate(page: Page, link: str, title: str) -> None:
    """Follow a sidebar navigation link (the session, and so the reviewer name, is kept)."""
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=link, exact=True).click()
    expect(heading(page, title)).to_be_visible(timeout=RERUN_TIMEOUT)
    wait_idle(page)
    assert_no_exception(page)


def set_reviewer(page: Page, name: str) -> None:
    box = page.get_by_test_id("stSidebar").get_by_role("textbox", name="Reviewer name")
    box.fill(name)
    box.press("Enter")
    expect(box).to_have_value(name)
    wait_idle(page)


def set_toggle(page: Page, label: str, on: bool = True) -> None:
    """Streamlit toggles are checkbox inputs with role "switch" (checkboxes have role "checkbox")."""
    box = page.get_by_role("switch", name=label).or_(page.get_by_role("checkbox", name=label)).first
    if box.is_checked() != on:
        page.get_by_test_id("stSidebar").get_by_text(label, exact=True).click()
    expect(box).to_be_checked(checked=on)
    wait_idle(page)


def widget(page: Page, key: str) -> Locator:
    """The element container of the widget with this Streamlit key (dots become dashes in the class)."""
    return page.locator(f".st-key-{re.sub(r'[^A-Za-z0-9_-]', '-', key)}")


def enter_text(page: Page, key: str, text: str, role: str = "textbox") -> None:
    """Type `text` into the text or number input with this key and apply it with Enter, as a user does before a button.

    A value typed and left in the box is applied only when the box loses focus: a click on a button then sends the
    value and the click together, and on a loaded machine the click was seen lost (no rerun ran the button).
    """
    box = widget(page, key).get_by_role(role)
    box.fill(text)
    box.press("Enter")
    expect(widget(page, key).get_by_text(re.compile("Press Enter"))).to_have_count(0)
    expect(box).to_have_value(text)
    wait_idle(page)


def select(page: Page, key: str, option: str) -> None:
    """Pick `option` in the select box with this key (a combobox with a listbox popup)."""
    box = widget(page, key).get_by_role("combobox")
    expect(box).to_be_visible(timeout=30_000)
    wait_idle(page)
    choice = page.get_by_role("option", name=option, exact=True)
    for _ in range(3):  # a rerun that lands while the list is open closes it: open it again
        box.click()
        try:
            choice.click(timeout=10_000)
            break
        except Exception:  # noqa: BLE001 - retried, then the expectation below reports it
            wait_idle(page)
    expect(box).to_have_value(option)
    wait_idle(page)


def cell(page: Page, text: str) -> Locator:
    """Cells of st.dataframe tables holding exactly `text`.

    The grid is drawn on a canvas; glide-data-grid keeps an accessible table inside it, hidden from view.
    """
    return page.get_by_role("gridcell", name=text, exact=True, include_hidden=True)


def metric(page: Page, label: str) -> Locator:
    return page.get_by_test_id("stMetric").filter(has_text=label).first


def shoot(page: Page, folder: Path, name: str, max_height: int = MAX_SHOT_HEIGHT, *, idle: bool = True) -> Path:
    """Save the page, cropped to its content (and to `max_height`), as `folder/name.png`. `idle=False`: as it is
    now, for a state shown while the script runs (the first start's progress: on a loaded machine the script runs
    longer than any wait for it to finish).

    README pages (README_SHOTS) are also copied to docs/screenshots/ when UPDATE_SCREENSHOTS=1.

    The viewport grows when the content is taller than it, since Streamlit scrolls inside its own container.
    """
    page.mouse.move(VIEWPORT["width"] - 5, 600)  # no hover effects (sidebar collapse arrow, tooltips)
    if idle:
        wait_idle(page)
        page.wait_for_function(_DRAWN_JS, timeout=RERUN_TIMEOUT)
    height = page.evaluate("""() => {
      const bottom = (id) => {
        const el = document.querySelector(`[data-testid="${id}"]`);
        return el ? el.getBoundingClientRect().top + el.scrollHeight : 0;
      };
      return Math.ceil(Math.max(bottom("stMainBlockContainer"), bottom("stSidebarUserContent")));
    }""")
    height = min(max(int(height) + 40, 900), max_height)
    grown = height > VIEWPORT["height"]
    if grown:
        page.set_viewport_size({"width": VIEWPORT["width"], "height": height})
        page.wait_for_timeout(500)  # canvas tables and charts redraw after a resize
        wait_idle(page)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), clip={"x": 0, "y": 0, "width": VIEWPORT["width"], "height": height},
                    animations="disabled", caret="hide")
    if grown:
        page.set_viewport_size(VIEWPORT)
    if os.environ.get("UPDATE_SCREENSHOTS") == "1" and name in README_SHOTS:
        DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, DOCS_SHOTS / path.name)
    return path
