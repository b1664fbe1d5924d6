"""The Document page says labels and fields in words: an idea's data fields without their key spelling or empty
values, LitXBench's and retrieval's labels in their schemes' words (their views' tests)."""

from __future__ import annotations

from tests.app.conftest import open_page, plain


def test_an_ideas_fields_are_named_in_words_and_empty_ones_left_out(app):
    at = open_page(app, "document", run="demo-ideation-si2024-humans")
    assert not at.exception
    captions = [plain(c.value) for c in at.caption]
    assert any(c.startswith("idea id: ") for c in captions), captions
    assert not any(c.startswith(("idea_id:", "title_source:")) or c.endswith(": none") for c in captions), captions
