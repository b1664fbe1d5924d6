"""The browser card's note box shows only a draft not sent yet: a note sent with a label is gone from the box when
the reviewer comes back to that card, also from the end of the queue (the box was hidden there and kept the sent
text, which a second label then did not carry). card.js is mounted alone in a blank page with a stand-in
component (no server), so the test drives only the card's own logic."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser

STATIC = Path(__file__).resolve().parents[2] / "ui" / "review_card" / "static"


def _item(pos: int) -> dict:
    return {"pos": pos, "id": 100 + pos, "num": pos + 1, "head": f"Abstract d{pos}", "html": f"<p>card {pos}</p>",
            "context": [], "buttons": [{"label": "yes", "text": "Yes", "key": "y", "aria": "Yes (key y)"},
                                       {"label": "no", "text": "No", "key": "x", "aria": "No (key x)"}],
            "hint": "y: yes · x: no", "mine": None, "doc": f"d{pos}", "gold": [], "gold_item": None}


def _mount(browser: Browser):
    page = browser.new_page()
    page.set_content(f"<style>{(STATIC / 'card.css').read_text()}</style><div id='host'>"
                     f"{(STATIC / 'card.html').read_text()}</div>")
    js = (STATIC / "card.js").read_text().replace("export default function", "window.__mountCard = function")
    page.add_script_tag(content=js)
    data = {"queue": "q1", "run": "r", "who": "ana", "blind": False, "total": 2, "cursor": 1, "progress": "",
            "can_review": True, "items": [_item(0), _item(1)], "acks": {}, "doc_link": "document?run=r",
            "doc_noun": "abstract", "problems": [["wrong item", "the gold item is wrong"]], "max_note": 5000,
            "max_item": 2000}
    page.evaluate("""(data) => { window.__sent = [];
        window.__mountCard({data, parentElement: document.getElementById('host'),
          setStateValue: (k, v) => window.__sent.push(JSON.parse(JSON.stringify(v))),
          setTriggerValue: () => {}}); }""", data)
    return page


@pytest.fixture
def page(browser: Browser):
    mounted = _mount(browser)
    yield mounted
    mounted.close()


def _label_events(page) -> list[dict]:
    return [ev for ev in page.evaluate("window.__rjReviewCard.state.outbox") if ev["type"] == "label"]


def test_a_sent_note_is_not_shown_again_when_back_from_the_end_of_the_queue(page):
    page.fill("#rjrc-note", "gold span cut short")
    page.click("[data-act=label][data-i='0']")
    assert [ev.get("note") for ev in _label_events(page)] == ["gold span cut short"]
    assert page.locator(".rjrc-end").count() == 1  # the last card was labelled: the queue's end
    page.click("[data-act=back]")
    assert page.locator(".rjrc-card[data-decision='101']").count() == 1
    assert page.input_value("#rjrc-note") == ""  # sent with the label: no longer a draft
    page.click("[data-act=label][data-i='1']")
    assert [ev.get("note") for ev in _label_events(page)] == ["gold span cut short", None]


def test_an_unsent_draft_stays_with_its_card(page):
    page.fill("#rjrc-note", "draft")
    page.click("[data-act=back]")
    assert page.input_value("#rjrc-note") == ""  # card 0 has no draft
    page.click("[data-act=next]")
    assert page.input_value("#rjrc-note") == "draft"


def _refuse_first_label(page) -> None:
    """The server's answer: the card's first label was refused (as store_events answers a refused write)."""
    page.evaluate("""() => { const s = window.__rjReviewCard.state;
        const cid = s.outbox.find((e) => e.type === "label").cid;
        const data = {queue: s.queue, run: s.run, who: s.who, blind: false, total: s.total, cursor: s.cursor,
          progress: "", can_review: true, items: [], acks: {[cid]: {ok: false, error: "not stored: refused"}},
          doc_link: "document?run=r", doc_noun: "abstract", problems: [], max_note: 5000, max_item: 2000};
        window.__mountCard({data, parentElement: document.getElementById('host'),
          setStateValue: () => {}, setTriggerValue: () => {}}); }""")


def test_a_refused_label_gives_its_note_back_as_the_draft(page):
    page.click("[data-act=back]")
    page.fill("#rjrc-note", "span too long")
    page.click("[data-act=label][data-i='0']")  # card 0 labelled: card 1 shown
    _refuse_first_label(page)
    page.click("[data-act=back]")
    assert page.input_value("#rjrc-note") == "span too long"  # not stored: still the reviewer's draft
    page.click("[data-act=label][data-i='1']")
    assert _label_events(page)[-1].get("note") == "span too long"


def test_a_refused_label_of_the_card_shown_fills_its_empty_note_box(page):
    page.fill("#rjrc-note", "check the gold")
    page.click("[data-act=label][data-i='0']")  # the last card: the queue's end
    page.click("[data-act=back]")
    assert page.input_value("#rjrc-note") == ""
    _refuse_first_label(page)
    assert page.input_value("#rjrc-note") == "check the gold"


def test_a_flag_is_not_counted_as_a_label_in_the_status_line(page):
    """"N saved · M pending" counts labels and undos; a gold flag waiting in the outbox has its own status line
    under the flag form and is not a pending label."""
    page.click(".rjrc-flag-open")
    page.fill("#rjrc-flag input[name=typed]", "the gold span")
    page.click("#rjrc-flag button[type=submit]")
    kinds = [ev["type"] for ev in page.evaluate("window.__rjReviewCard.state.outbox")]
    assert kinds == ["erratum"]
    assert "pending" not in page.inner_text(".rjrc-status")
    page.click("[data-act=label][data-i='0']")
    assert "1 pending" in page.inner_text(".rjrc-status")
