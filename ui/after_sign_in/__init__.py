"""A deep link survives sign-in (team mode, issue 40 point 8).

Streamlit's `st.login` ends at the app's root in a new session, so the page and settings a signed-out visitor
opened (`/queue?run=…`) are kept in the browser tab's sessionStorage by the sign-in page and handed back by the
first signed-in render at the root, which follows them once (the browser forgets them as it hands them back).
Only a page of this app is ever followed, by `st.switch_page` with the link's query parameters: the stored text
never becomes a URL the browser is sent to, so a planted `//evil.org` or `https://…` goes nowhere
(`target.return_target` refuses it). The page followed runs its own role checks as on any visit.
"""
