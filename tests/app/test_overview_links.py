"""The run overview's link column (one link per document, built with the session's settings read once): every
link opens its own row's document and carries the run and the reviewer, as `ui.state.link` does."""

from urllib.parse import parse_qs, urlsplit

from tests.app.conftest import open_page, table

DEMO = "demo-chimera-mixed"


def test_every_document_link_carries_its_document_and_the_sessions_settings(app, app_db):
    at = open_page(app, "overview", reviewer="linker", run=DEMO)
    assert not at.exception
    docs = table(at, "open")
    assert len(docs) > 1
    doc_column = docs.columns[0]
    for doc, url in zip(docs[doc_column], docs["open"], strict=True):
        parts = urlsplit(url)
        assert parts.path == "document"
        assert {k: v[0] for k, v in parse_qs(parts.query).items()} == {
            "run": DEMO, "reviewer": "linker", "doc": doc}
