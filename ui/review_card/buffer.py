"""The cards the browser's review card holds: one JSON-ready dict per queue position.

A card that is blind for the reviewer (the blind rule, `ui.blind.is_blind`: per decision, as on the classic card) is
built from the decision without anything derived from the judge or other reviewers (`ui.blind.blind_decision`: the
judge's label and detail, other reviewers' labels, the effective label, its source, moot): the browser cannot show
what it was never sent. A family's view names the detail keys that only describe the question (`BLIND_DETAIL`); no
other detail key reaches a blind card.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

from audit.review.queue import decision_view
from audit.review.sharing import other_runs_asking
from audit.store.database import Database
from audit.views import RunView
from scoring.families.base import LabelScheme
from ui.blind import blind_decision, is_blind
from ui.decisions import card_html, label_buttons, shortcut_hint
from ui.families import doc_noun, family_view, gold_item_of, gold_items
from ui.text import visible

CARD_FIELDS = frozenset({"pos", "id", "num", "head", "html", "context", "buttons", "hint", "mine", "doc", "gold",
                         "gold_item"})
"""Every field of a card, blind or not (a card with the judge's answer says more in its html and buttons).
`html`, `context` are escaped html; `doc` (the document id, for its link), `gold` (the document's gold items the
errata form lists, as [item, shown]) and `gold_item` (the one the decision is about) are plain text the browser
only ever sets as text."""
BUFFER_BEHIND, BUFFER_AHEAD = 5, 20
"""Cards the browser holds behind and ahead of its current position."""


def _keyed(buttons: list[tuple[str, str, str, str | None]]) -> list[tuple[str, str, str, str | None]]:
    """The buttons with a key each: a label the scheme gives no key gets the first free digit."""
    spare = iter([str(n) for n in range(1, 10) if str(n) not in {short for *_, short in buttons}])
    return [(lab, text, key, short or next(spare, None)) for lab, text, key, short in buttons]


def _marked(text: str, ranges: Sequence[tuple[int, int]]) -> str:
    """`text` escaped, its `ranges` (the decision's spans) wrapped in `<mark>`.

    >>> _marked("a <b> c", [(2, 5)])
    'a <mark class="rjrc-span">&lt;b&gt;</mark> c'
    """
    out, at = [], 0
    for s, e in sorted(ranges):
        if s < at:  # overlapping spans: marked once
            continue
        out += [html.escape(visible(text[at:s])), '<mark class="rjrc-span">', html.escape(visible(text[s:e])),
                "</mark>"]
        at = e
    return "".join(out) + html.escape(visible(text[at:]))


def card_item(d: dict, task_name: str, scheme: LabelScheme, *, pos: int, number: int, who: str, role: str,
              blind: bool, context: Sequence[tuple] = (), gold: Sequence[str] = (),
              also_in: Sequence[str] = ()) -> dict:
    """One card: its header, the html `ui.decisions.card_html` draws, the context lines (escaped), the label
    buttons of the kind's scheme with their keys, the reviewer's own current label (`mine`), and for the errata
    form the document's `gold` items and the one the decision is about (read from the card's own, blind-safe,
    decision). `blind`: the reviewer reviews blind; whether this card is blind is the blind rule's
    (`ui.blind.is_blind`)."""
    mine = d["human"].get(who) if role == "reviewer" else None
    hide = is_blind(d, blind=blind, role=role, who=who)
    if hide:
        d = blind_decision(d, family_view(task_name).BLIND_DETAIL)
    buttons = _keyed(label_buttons(d, scheme, hide=hide, role=role, mine=None))
    confirm = scheme.scale == "binary" and not hide and d["judge"] in scheme.labels
    hint = (shortcut_hint(scheme, hide=hide) if confirm else
            " · ".join(f"{short}: {scheme.title(lab)}" for lab, _, _, short in buttons))
    return {
        "pos": pos, "id": d["id"], "num": number,
        "head": f"{doc_noun(task_name).capitalize()} {visible(d['doc'])} · decision #{number} (id {d['id']})",
        "html": card_html(d, task_name, scheme, blind=hide, number=number, also_in=also_in),
        "context": [[html.escape(k), _marked(v, marks[0] if marks else ())] for k, v, *marks in context],
        "buttons": [{"label": lab, "text": text, "key": short or "",
                     "aria": text + (f" (key {short})" if short else "")} for lab, text, _, short in buttons],
        "hint": hint,
        "mine": mine,
        "doc": d["doc"],
        "gold": [[item, visible(item)] for item in gold],
        "gold_item": gold_item_of(task_name, d),
    }


def build_buffer(conn: Database, run_view: RunView, ids: Sequence[int], start: int, stop: int, *, who: str,
                 role: str, blind: bool, payload: Callable[[str], dict] | None = None) -> list[dict]:
    """The cards of queue positions [start, stop) (clipped to the queue), read now through `conn`.

    `blind`: the reviewer reviews blind, so every card they have not labelled is built without the judge's answer
    (the blind rule, `ui.blind.is_blind`). `payload(doc)` gives a document's stored payload for the family's
    `card_context` lines (the ideas of an ideation card); without it, no context lines."""
    task = run_view.task
    start, stop = max(0, start), min(len(ids), stop)
    window = list(ids[start:stop])
    numbers = run_view.on(conn).decision_numbers(window)
    shared = other_runs_asking(conn, window)
    family = family_view(task.name)
    context_of, listed = family.card_context, family.gold_items is not None
    payloads: dict[str, dict] = {}  # neighbouring cards are often one document's

    def payload_of(doc: str) -> dict:
        if doc not in payloads:
            payloads[doc] = payload(doc)  # type: ignore[misc]
        return payloads[doc]

    out = []
    for pos, dec_id in enumerate(window, start):
        d = decision_view(conn, run_view, dec_id)
        seen = (blind_decision(d, family.BLIND_DETAIL) if is_blind(d, blind=blind, role=role, who=who)
                else d)  # the family's context reads only what the card may
        context = context_of(payload_of(d["doc"]), seen) if context_of is not None and payload is not None else ()
        gold = gold_items(task.name, payload_of(d["doc"])) if listed and payload is not None else ()
        out.append(card_item(d, task.name, task.label_schemes[d["kind"]], pos=pos, number=numbers[dec_id],
                             who=who, role=role, blind=blind, context=context, gold=gold,
                             also_in=shared[dec_id]))
    return out
