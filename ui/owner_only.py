"""Controls that only some roles may use (team mode, `audit.review.roles.ACTIONS`): drawn disabled for anyone else, with
the reason beside them, so nobody learns it only after a click. The page still checks on use (`ui.auth.guard`)."""

from __future__ import annotations

import streamlit as st

from ui import auth
from ui.text import md_literal, show_text


def why_not(action: str) -> str | None:
    """Why the current person may not do `action` (shown under its control), None when they may."""
    return auth.refused(action)


def role_button(label: str, *, action: str, key: str, help: str | None = None, disabled: bool = False,
                **kwargs: object) -> bool:
    """`st.button` for `action`: disabled with the refusal as its tooltip and a caption for a person who may not
    (and when `disabled`, e.g. until a confirmation is ticked); True only when clicked by one who may."""
    why = why_not(action)
    clicked = st.button(md_literal(label), key=key, disabled=why is not None or disabled, help=why or help, **kwargs)  # type: ignore[arg-type]
    if why is not None:
        show_text(why, "caption")
    return clicked and why is None
