"""The review card in the browser: a custom component (Streamlit components v2, inline HTML/CSS/JS) that holds the
next decisions of the queue, answers the review keys at once and sends each label back with a client id.

- `buffer.py` builds the cards the browser holds (blind review: built without any judge-derived field).
- `store.py` stores the labels the browser sends (a client id already stored is not stored again).
- `route.py` the save route the card posts its labels to (`st.App` routes, `app.py`): stored and answered without a
  rerun of the page (issue 38), through `store.store_events`; `grants.py` the tokens the queue page issues for it.
- `component.py` registers the component and mounts it on the queue page.
- `static/` the component's HTML, CSS and JavaScript (no build step, nothing fetched from elsewhere).

Besides the labels, the card has the classic card's note box (sent with the card's label, stored by
`audit.review.reviews.review_note`), its errata form (a flag is an outbox event too, stored once by
`audit.review.errata`) and
its "open the whole document" link (followed in the same session through a trigger and `st.switch_page`).
"""
