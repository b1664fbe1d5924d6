"""The toy family's dashboard view (`devtools/toy_family.py`, `view_module`): what `ui/families/__init__.py`
requires of a view, and one optional name."""

from __future__ import annotations

from ui.families import DocumentContext
from ui.text import show_text


def card_lines(d: dict, blind: bool = False) -> list[tuple[str, str]]:
    """Predicted and gold answer, and unless blind whether they are equal character for character."""
    lines = [("predicted", d["left"]), ("gold", d["right"])]
    if not blind:
        lines.append(("identical", "yes" if d.get("detail", {}).get("exact") else "no"))
    return lines


def render_document(ctx: DocumentContext) -> None:
    payload = ctx.doc["payload"]
    show_text(payload["question"])
    show_text(f"gold: {payload['gold']}", "caption")
