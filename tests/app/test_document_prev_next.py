"""The Document review page's ‹ previous / next › buttons move the document select and the URL (they raised
Streamlit's "cannot be modified after the widget is instantiated" once the select kept its choice in a plain key)."""

from __future__ import annotations

from tests.app.conftest import open_page


def test_next_and_previous_move_one_document(app):
    at = open_page(app, "document", run="demo-chimera-mixed")
    assert not at.exception
    select = at.selectbox(key="document.doc")
    docs = list(select.options)
    first = select.value
    at.button(key="document.next").click().run()
    assert not at.exception, at.exception
    assert at.selectbox(key="document.doc").value == docs[docs.index(first) + 1]
    assert at.query_params["doc"] in (docs[docs.index(first) + 1], [docs[docs.index(first) + 1]])
    at.button(key="document.next").click().run()
    at.button(key="document.prev").click().run()
    assert not at.exception
    assert at.selectbox(key="document.doc").value == docs[docs.index(first) + 1]
