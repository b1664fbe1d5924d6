"""Sign-in and roles in the dashboard: local mode (nothing configured) or team mode (an `[auth]` section in
`.streamlit/secrets.toml`: Streamlit's `st.login` against any OpenID Connect provider).

Team mode trusts only `st.user`, which Streamlit reads from its signed identity cookie: never the URL or the
session's widgets. The role comes from the roles file (`audit.review.roles`), decided by
`audit.review.roles.permits`; every
mutating path calls `guard` (or `refused` in a callback) with its action, so a hidden button is never the check.
"""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from audit.errors import AuditError
from audit.review.roles import LOCAL, Roles, RolesFileError, load_roles, permits, refusal
from ui.text import md_literal, show_text

ROLES_ENV = "REJUDGE_ROLES"
PROVIDER_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class Identity:
    """A signed-in person: the provider's subject and e-mail, and the role the roles file gives them."""

    subject: str
    email: str
    name: str
    role: str | None


def _secrets() -> tuple[dict, str | None]:
    """The secrets as a dict, and why they cannot be read when a secrets file exists (None: read, or no file)."""
    from streamlit import config
    from streamlit.errors import StreamlitSecretNotFoundError

    try:
        return st.secrets.to_dict(), None
    except (StreamlitSecretNotFoundError, OSError, ValueError) as e:
        present = [f for f in config.get_option("secrets.files") if Path(f).exists()]
        if not present and isinstance(e, StreamlitSecretNotFoundError):
            return {}, None  # no secrets file at all: local mode
        if any(f in str(e) for f in present):  # Streamlit's own message names the file (and the line)
            return {}, str(e)
        return {}, f"{', '.join(present) or 'the secrets file'} cannot be read: {e}"


def config_problem() -> str | None:
    """Why this server's sign-in set-up cannot be used although it was meant to be in team mode, or None.

    Fails closed: a secrets file that cannot be read, an `[auth]` section that is empty or spelt in another case
    (Streamlit reads only `[auth]`), or a roles file with no `[auth]` beside it would otherwise turn a team server
    into local mode, where every visitor is the owner (issue 34).
    """
    secrets, unreadable = _secrets()
    if unreadable:
        return unreadable
    section = secrets.get("auth")
    if section:
        return None
    misspelt = [k for k in secrets if k.casefold() == "auth" and k != "auth"]
    if misspelt:
        return f"the secrets have a [{misspelt[0]}] section; Streamlit reads sign-in settings only from [auth]"
    if "auth" in secrets:
        return "the [auth] section of the secrets is empty"
    if roles_path().exists():
        return (f"the roles file {roles_path()} exists but the secrets have no [auth] section (remove the roles "
                "file for local mode)")
    return None


def _auth_section() -> dict | None:
    section = _secrets()[0].get("auth")
    return section if isinstance(section, dict) and section else None


def team_mode() -> bool:
    """Whether sign-in is configured (an `[auth]` section in the secrets), or meant to be and broken
    (`config_problem`): then nobody is admitted."""
    return bool(_auth_section()) or config_problem() is not None


def roles_path() -> Path:
    return Path(os.environ.get(ROLES_ENV) or "rejudge.toml")


def _roles() -> Roles:
    """The roles file, read again when it changes (the owner edits it while the server runs)."""
    path = roles_path()
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        stamp = None
    return _roles_at(str(path.resolve()), stamp)


@st.cache_data(show_spinner=False, max_entries=4)
def _roles_at(path: str, stamp: int | None) -> Roles:  # noqa: ARG001 - part of the cache key (st.cache_data skips
    return load_roles(Path(path))                       # arguments named with a leading underscore)


def identity() -> Identity | None:
    """The signed-in person in team mode (None when signed out, and always in local mode)."""
    if not team_mode() or config_problem():
        return None
    user = st.user
    if not user.get("is_logged_in"):
        return None
    subject, email = str(user.get("sub") or ""), str(user.get("email") or "")
    if not email_verified(user):  # the provider does not vouch for the address: no role by it
        email = ""
    return Identity(subject=subject, email=email, name=str(user.get("name") or email), role=role_of(email))


VERIFIED_STRINGS = ("true",)
"""`email_verified` as a string: AWS Cognito documents the string "true" (OpenID Connect says a boolean)."""


def email_verified(user: Mapping[str, object]) -> bool:
    """Whether the provider vouches for the e-mail address: `email_verified` absent (a provider that does not send
    the claim, e.g. Microsoft Entra), `True`, or a documented string equivalent. `False`, `"false"`, `0`, `1`,
    `"yes"` and anything else are not: a role is never given by an address the provider left in doubt."""
    if "email_verified" not in user:
        return True
    value = user.get("email_verified")
    return value is True or (isinstance(value, str) and value.strip().casefold() in VERIFIED_STRINGS)


def role_of(email: str | None) -> str | None:
    """The role the roles file gives a verified address now (None: none, or the file cannot be used). For the
    review card's save route (`ui/review_card/route.py`), which has no `st.user`: its grant names the address."""
    try:
        return _roles().role_of(email) if email else None
    except RolesFileError:
        return None


def current_role() -> str | None:
    """`audit.review.roles.LOCAL` in local mode; in team mode the signed-in person's role (None: none, or signed
    out)."""
    if not team_mode():
        return LOCAL
    who = identity()
    return who.role if who else None


def may(action: str) -> bool:
    return permits(current_role(), action)


def refused(action: str) -> str | None:
    """Why the current person may not do `action`, or None when they may (for callbacks, which cannot stop)."""
    return None if may(action) else refusal(current_role(), action)


class Refused(AuditError):
    """The current person's role does not allow the action (raised by `check`)."""


def check(action: str) -> None:
    """Raise `Refused` (an AuditError, which every write path already reports) unless the person may `action`."""
    why = refused(action)
    if why:
        raise Refused(why)


def review_action(as_role: str) -> str:
    """The action a review as `as_role` needs: labelling, or settling conflicts."""
    return "adjudicate" if as_role == "adjudicator" else "label"


def guard(action: str) -> None:
    """Stop the page with a clear message unless the current person may do `action`."""
    why = refused(action)
    if why:
        st.error(md_literal(why))
        st.stop()


def identity_columns() -> dict[str, str | None]:
    """The `auth_subject` / `auth_email` a write stores (both None in local mode)."""
    who = identity()
    return {"auth_subject": who.subject or None, "auth_email": who.email or None} if who else \
        {"auth_subject": None, "auth_email": None}


def who_for_log() -> str:
    """Who made a change, for the rows that record it: the signed-in address, or "local" in local mode."""
    who = identity()
    return who.email if who else LOCAL


def _provider() -> tuple[str | None, str | None]:
    """(provider name for `st.login`, its metadata URL): the `[auth]` section's own, else its first named one."""
    section = _auth_section() or {}
    if section.get("server_metadata_url"):
        return None, section["server_metadata_url"]
    for name, sub in section.items():
        if isinstance(sub, dict) and sub.get("server_metadata_url"):
            return name, sub["server_metadata_url"]
    return None, None


def provider_problem(url: str | None) -> str | None:
    """Why the sign-in provider cannot be used now (unreachable, or its metadata unreadable), or None."""
    if not url:
        return "the [auth] section names no server_metadata_url"
    try:
        with urllib.request.urlopen(url, timeout=PROVIDER_TIMEOUT_S) as r:  # noqa: S310 - the owner's own URL
            meta = json.loads(r.read(200_000))
    except (OSError, ValueError) as e:
        return f"{url} did not answer ({e.__class__.__name__}: {getattr(e, 'reason', None) or e})"
    if not isinstance(meta, dict) or "authorization_endpoint" not in meta:
        return f"{url} is not an OpenID Connect discovery document"
    return None


def admitted() -> bool:
    """Whether the visitor may see the dashboard: always in local mode; in team mode signed in with a role."""
    if not team_mode():
        return True
    who = identity()
    return who is not None and bool(who.role)


def gate() -> None:
    """Unless `admitted`, draw the page that says why (sign in; provider unreachable; roles file unusable; not in
    the roles file) and stop."""
    if admitted():
        return
    problem = config_problem()
    if problem:
        _refused_page("This server's sign-in settings cannot be used, so it lets nobody in.",
                      f"Details: {problem}\nThe owner should fix .streamlit/secrets.toml (see "
                      ".streamlit/secrets.example.toml) or, for local mode, remove it and the roles file.",
                      sign_out=False)
        st.stop()
    if not st.user.get("is_logged_in"):
        _sign_in_page()
        st.stop()
    try:
        _roles()
    except RolesFileError as e:
        _refused_page("The roles file cannot be used, so nobody can be given a role.", str(e))
        st.stop()
    if not email_verified(st.user):
        _refused_page("The sign-in provider did not verify your e-mail address, so no role can be given by it.",
                      f"Its email_verified claim is {st.user.get('email_verified')!r}; only true counts. Verify "
                      "the address with the provider, then sign in again.")
        st.stop()
    who = identity()
    email = who.email if who and who.email else "(no verified e-mail address)"
    _refused_page(f"You are signed in as {email}, but the roles file names neither this address nor its domain.",
                  "Ask the audit's owner to add you to the roles file (owners, adjudicators or reviewers).")
    st.stop()


def _authlib_missing() -> str | None:
    """Streamlit signs in through Authlib (a declared requirement); say so plainly when it is not installed."""
    try:
        import authlib  # noqa: F401 - only its presence matters here
    except ImportError:
        return "Authlib is not installed: pip install -r requirements.txt"
    return None


def _sign_in_page() -> None:
    from ui.after_sign_in.component import remember_location  # it reads the session's settings (ui.state): late

    st.title("Rejudge — sign in")
    remember_location()  # the page and settings this tab opened, to open after the sign-in
    provider, url = _provider()
    missing = _authlib_missing()
    problem = missing or provider_problem(url)
    if problem:
        st.error("Sign-in is not set up on this server, so nobody can sign in." if missing else
                 "The sign-in provider cannot be reached, so nobody can sign in right now.")
        st.text(f"Details: {problem}")
        st.caption("Try again in a moment; if it persists, the owner should check the [auth] section of "
                   ".streamlit/secrets.toml and the provider.")
        st.button("Try again", key="auth.retry")
        return
    st.markdown("This audit is in **team mode**: reviews are stored under your signed-in identity, and what you "
                "may do depends on your role in the audit.")
    st.button("Sign in", key="auth.sign_in", type="primary", on_click=st.login,
              args=(provider,) if provider else ())


def _refused_page(headline: str, detail: str, sign_out: bool = True) -> None:
    st.title("Rejudge — no access")
    show_text(headline, "error")
    st.text(detail)
    if sign_out:
        st.button("Sign out", key="auth.sign_out_refused", on_click=st.logout)


def sidebar_identity() -> None:
    """One line on who is reviewing: local mode says names are not verified; team mode names the signed-in
    person and their role, with a sign-out button."""
    who = identity()
    if who is None:
        st.caption("local mode: reviewer names are not verified")
        return
    st.markdown(f"Signed in as **{md_literal(who.email)}** · {md_literal(who.role)}")
    st.button("Sign out", key="auth.sign_out", on_click=st.logout)
