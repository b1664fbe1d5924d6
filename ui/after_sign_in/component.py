"""The browser's side: the sign-in page remembers the tab's location, the first signed-in render at the root
takes it back (once) and opens that page of the app."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from streamlit import config
from streamlit.navigation.page import StreamlitPage

from ui.after_sign_in.target import return_target

KEY = "auth.after_sign_in"
# A v2 component runs in the app's own document (no iframe): `location` and `sessionStorage` are the tab's. The
# stored text is only ever handed to Python, which maps it to a page of this app; it is never navigated to.
_JS = """
const STORE = "rejudge.after_sign_in";
export default function (component) {
  const { data, setTriggerValue } = component;
  try {
    if (data.mode === "remember") {
      sessionStorage.setItem(STORE, JSON.stringify({path: location.pathname + location.search, at: Date.now()}));
    } else if (data.mode === "follow") {
      const raw = sessionStorage.getItem(STORE);
      if (raw === null) return;
      sessionStorage.removeItem(STORE);
      let kept = null;
      try { kept = JSON.parse(raw); } catch (e) { kept = null; }
      if (!kept || typeof kept.path !== "string") return;
      setTriggerValue("target", {path: kept.path, age_ms: Date.now() - Number(kept.at)});
    }
  } catch (e) { /* storage disabled: sign-in lands on the Runs page, as without this */ }
}
"""
_COMPONENT = st.components.v2.component("rejudge.after_sign_in", html="", js=_JS)


def remember_location() -> None:
    """On the sign-in page: the browser tab keeps the page and settings it opened, for after the sign-in."""
    _COMPONENT(key=KEY, data={"mode": "remember"})


def remembered_page(pages: Sequence[StreamlitPage]) -> tuple[StreamlitPage, dict[str, str | list[str]]] | None:
    """At the root, signed in: the page of `pages` the tab remembered before signing in, with its query parameters
    (handed back once; None until then, and for anything but a page of this app: `return_target`)."""
    result = _COMPONENT(key=KEY, data={"mode": "follow"}, on_target_change=lambda: None)
    by_path = {p.url_path: p for p in pages}
    target = return_target(getattr(result, "target", None), by_path,
                           str(config.get_option("server.baseUrlPath") or ""))
    page = by_path.get(target.url_path) if target else None  # the default page's url_path is "" (the root)
    return (page, target.params) if target and page else None
