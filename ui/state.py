"""Per-rerun access to the database, the session's current run and the reviewer's settings.

Two things follow a reviewer from page to page and across a reload, and both live in the URL:

- the **current run** (`?run=`): picked in the sidebar (or by any "open" link), shown there on every page, and
  read by every page through `require_run`; switching pages never switches runs.
- the **reviewer settings**: `?reviewer=NAME`, `?blind=1`, `?adj=1`, and the effective-label policy
  (`?policy=majority`, chosen on the Scores page). The sidebar writes them into the URL on every rerun, so a
  reload (a new Streamlit session) or a bookmarked link starts with the same name, blind mode, adjudicator mode
  and policy. The URL was chosen over a browser-side store because it needs no component, works in
  every tab opened from a link, and is visible: a reviewer can see (and share) exactly the mode they are in.

One source of truth (issue 25): the session's plain keys (`NAME_KEY`, `BLIND_KEY`, `ADJUDICATOR_KEY`,
`POLICY_KEY`, `CURRENT_RUN`). The URL is read into them once, on the session's first run, before
`st.navigation` draws a link that could interrupt it (`adopt_url_settings`); after that only a widget's
`on_change` (or a link that names a run, `?run=`) changes them, and every rerun writes them to the URL and into
the widgets. A widget's own state is never trusted: a sidebar link clicked before the browser has registered the
sidebar's widgets reruns with no widget state at all, and a widget drawn without its value then mounts at its
default (empty name, blind off, the first run of the list), which the next interaction would send back.

A page reads its run through `current_view(conn)`: the run's `audit.views.RunView` under the session's policy,
loaded once per render (kept on the render's connection), which every part of the page reads from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st

from audit.effective import DEFAULT_POLICY, POLICIES
from audit.errors import DatabaseRefused
from audit.review.blind_assignments import blind_assigned
from audit.store.database import Database, default_db_path, list_runs, open_db, plan_stamp, reviews_version
from audit.views import RunView, load_view
from ui import auth
from ui.blind import reviews_blind
from ui.text import show_text

REVIEWER_KEY = "reviewer"
NAME_KEY = "reviewer_name"  # plain keys survive pages where the widget is not drawn
BLIND_KEY = "blind_mode"
ADJUDICATOR_KEY = "adjudicator_mode"
CURRENT_RUN = "current_run"
RUN_WIDGET = "sidebar.run"
POLICY_KEY = "effective_policy"
URL_REVIEWER, URL_BLIND, URL_ADJ, URL_RUN, URL_POLICY = "reviewer", "blind", "adj", "run", "policy"
_VIEWS = "_rejudge_views"
ADOPTED = "_url_settings_adopted"
FORCED_BLIND = "_forced_blind"  # (run, reviewer, blind): the owner's assignment, read once per rerun


def db() -> Database:
    """A new connection (call once per rerun): SQLite objects must not be shared across sessions' threads.

    A page opens it through `ui.entry.page_prologue`, which also makes sure the page came through `app.py`.
    """
    try:
        return open_db(default_db_path())
    except DatabaseRefused as e:  # empty, damaged, foreign or newer file: one clear page, the file left untouched
        show_text(f"Cannot open the database. {e}", "error")
        st.stop()


def run_names(conn: Database) -> list[str]:
    return [r["name"] for r in list_runs(conn)]


def current_run() -> str | None:
    """The session's current run (set by `run_picker` in the sidebar on every rerun)."""
    return st.session_state.get(CURRENT_RUN)


def require_run(conn: Database, key: str | None = None) -> str:  # noqa: ARG001 - key kept for old callers
    """The session's current run; on an empty database, say where to start and stop the page."""
    run = current_run()
    names = run_names(conn)
    if run not in names:  # a run scored or deleted since the sidebar drew
        run = run_picker_value(names)
    if run is None:
        st.info("No runs in this database yet. Score one on the Runs page.")
        st.stop()
    return run


def current_view(conn: Database) -> RunView:
    """The current run's view under the session's effective-label policy, loaded once per render.

    The view is kept on `conn`, the render's connection (`db()` opens a new one per rerun), so every call during
    one render returns the same view and a rerun loads a fresh one. On an empty database, says where to start and
    stops the page (as `require_run`).
    """
    run = current_run()
    if run is None or (run, policy()) not in _views(conn):
        run = require_run(conn)
    return view_of(conn, run)


def view_of(conn: Database, run: str) -> RunView:
    """The view of any run (e.g. the two runs of a comparison) under the session's policy, loaded once per render.
    Raises UnknownRun."""
    views, key = _views(conn), (run, policy())
    if key not in views:
        views[key] = load_view(conn, run, key[1])
    return views[key]


def _views(conn: Database) -> dict[tuple[str, str], RunView]:
    return conn.__dict__.setdefault(_VIEWS, {})


def review_state(view: RunView) -> tuple:
    """The cache key of whatever a page derives from a run's stored data and its reviews alone (issue 25): the
    database file, the run (its id and creation time: a run scored again under the same name, even one that
    reuses a deleted run's id, is another run), the policy and the reviews' version (count and newest id), so a
    review made anywhere shows on the next render. One query per render."""
    return default_db_path(), view.id, view.row["created"], view.policy, reviews_version(view.db, view.id)


@st.cache_data(show_spinner=False, max_entries=16)
def _documents(_view: RunView, key: tuple) -> dict[str, list]:  # noqa: ARG001 - key: review_state(_view)
    return _view.document_columns()


def run_documents(view: RunView) -> dict[str, list]:
    """`view.document_columns()` (per document its audited outcome and review count), kept per `review_state`: at
    10,000 documents the read and the count take 0.2 s of every overview render."""
    return _documents(view, review_state(view))


@st.cache_data(show_spinner=False, max_entries=16)
def _next_sample(_view: RunView, key: tuple) -> dict | None:  # noqa: ARG001 - key: review_state(_view) and the plan
    from audit.review.sampling import next_sample

    return next_sample(_view.db, _view)


def sample_now(view: RunView) -> dict | None:
    """`audit.review.sampling.next_sample` of the run's plan (raises AuditError without one), kept per review state
    and plan: the review queue asks for it at the top of the page and again in its card's fragment, each one 1-2 s
    at 10,000 retrieval queries (#38); a review anywhere, or a new plan, computes it again."""
    from audit.review.sampling import ALL_KINDS

    return _next_sample(view, (review_state(view), plan_stamp(view.db, view.id, ALL_KINDS)))


def policy() -> str:
    """The session's effective-label policy (`audit.effective.POLICIES`; chosen on the Scores page)."""
    value = st.session_state.get(POLICY_KEY)
    return value if value in POLICIES else DEFAULT_POLICY


def policy_radio(key: str) -> str:
    """The effective-label policy choice; it applies to every page and export of the session (kept in ?policy=)."""
    _persisted(key, POLICY_KEY, DEFAULT_POLICY)
    return st.radio("Effective label", list(POLICIES), horizontal=True, key=key, on_change=_copy,
                    args=(key, POLICY_KEY),
                    format_func=lambda p: {"unanimous": "adjudicated > unanimous humans > judge",
                                           "majority": "adjudicated > majority of humans > judge"}.get(p, p),
                    help="How reviewers' labels become the audited label on every page and in every export: " +
                         " | ".join(f"{k}: {v}" for k, v in POLICIES.items()) + ". Exports record the policy "
                         "(CLI: `--policy`). Kept in the URL (?policy=).")


def run_picker_value(names: list[str]) -> str | None:
    """Resolve the current run from the URL and the session without drawing anything.

    `?run=` wins when it names a run (a link or a bookmark); else the session's current run; else the first
    bundled demo run (what a new user is told to start with); else the newest.
    """
    if not names:
        st.session_state.pop(CURRENT_RUN, None)
        return None
    from audit.demo import first_demo_run

    wanted = st.query_params.get(URL_RUN)
    current = st.session_state.get(CURRENT_RUN)
    demo = first_demo_run()
    value = (wanted if wanted in names else current if current in names else demo if demo in names
             else names[0])
    st.session_state[CURRENT_RUN] = value
    return value


UNKNOWN_RUN = "_unknown_run"  # (the `?run=` that named no run, the run shown instead): said until another is picked


def _picked() -> None:
    st.session_state.pop(UNKNOWN_RUN, None)
    st.session_state[CURRENT_RUN] = st.session_state[RUN_WIDGET]
    st.query_params[URL_RUN] = st.session_state[RUN_WIDGET]


PICKER_FITS = 24
"""Characters of a run name the sidebar's run picker shows whole (at its default width); a longer name is also
written out under it."""


def run_picker(conn: Database) -> str | None:
    """The sidebar's run select box: the session's current run, kept in `?run=` so every page and link carries it.

    A `?run=` naming an unknown run is said, and the current run shown instead, until another run is picked.
    """
    names = run_names(conn)
    wanted = st.query_params.get(URL_RUN)
    value = run_picker_value(names)
    if wanted and wanted not in names:  # kept until another run is picked: the next rerun's URL names the fallback
        st.session_state[UNKNOWN_RUN] = (wanted, value)
    missing, shown = st.session_state.get(UNKNOWN_RUN) or (None, None)
    if missing and shown == value and missing not in names:
        show_text(f"Run {missing!r} is not in this database; showing {value or 'no run'} instead.", "warning")
    if value is None:
        st.caption("No runs yet.")
        return None
    st.session_state[RUN_WIDGET] = value  # on every rerun: see _persisted
    st.selectbox("Current run", names, key=RUN_WIDGET, on_change=_picked,
                 help="Every page shows this run; links carry it (?run=). Runs stored in " + default_db_path())
    if len(value) > PICKER_FITS:  # the sidebar's box cuts a long name ("demo-chimera-smollm2-few-shc"): in full
        show_text(value, "caption")
    return value  # written to ?run= with the reviewer's settings, in one message (write_url_settings)


def synced_select(label: str, options: list[str], key: str, param: str, **kwargs: object) -> str:
    """A select box kept in step with the query parameter `param`, both ways.

    A changed URL (deep link, page switch with query params) wins over the last choice; a change in the widget is
    written back to the URL so the view can be shared. The choice lives in a plain key (`KEY.value`), seeded into
    the widget on every rerun (`_persisted`): a page without the widget (a sidebar link clicked away and back, which
    carries no `?param=`) or a click before the browser registered the widget keeps the choice, where the
    widget's own state would be dropped or mounted at the first option (issue 25; tests/e2e/
    test_document_select_race.py).
    """
    store, seen_key = f"{key}.value", f"{key}.synced"
    wanted = st.query_params.get(param)
    if wanted in options and st.session_state.get(seen_key) != wanted:
        st.session_state[store] = wanted
    if st.session_state.get(store) not in options:
        st.session_state[store] = options[0]
    _persisted(key, store, options[0])
    value = st.selectbox(label, options, key=key, on_change=_copy, args=(key, store),  # type: ignore[arg-type]
                         **kwargs)
    st.session_state[store] = st.session_state[seen_key] = value
    if st.query_params.get(param) != value:
        st.query_params[param] = value
    return value


def selected_run(conn: Database, key: str | None = None) -> str | None:  # noqa: ARG001
    """The session's current run (kept for callers of the old per-page picker)."""
    return run_picker_value(run_names(conn))


def is_blind_reviewer() -> bool:
    """Blind review as a reviewer: nothing derived from the judge's or other reviewers' labels may be shown (the
    blind rule, `ui.blind.reviews_blind`)."""
    return reviews_blind(blind(), role())


def blind_guard(page: str) -> None:
    """Pages whose numbers derive from the judge's or other reviewers' labels are hidden while reviewing blind."""
    if is_blind_reviewer():
        st.info(f"The {page} page is hidden while you review blind: its numbers are derived from the judge's and "
                "other reviewers' labels. Switch blind review off in the sidebar (or review as adjudicator) to "
                "see it.")
        st.stop()


def blind_on(conn: Database, run: str) -> bool:
    """Whether the current reviewer is blind on `run`, any run (not only the current one): the session's blind
    review, or the owner's assignment of that run. A page that shows another run's labels (Compare judges) must
    not show a run its reviewer is blind on."""
    return is_blind_reviewer() or blind_assigned(conn, run, reviewer())


def _persisted(widget_key: str, store_key: str, default: object) -> None:
    """Seed the widget from its plain key, on every rerun, even when the server's widget state already holds the
    same value: Streamlit sends a widget's value to the browser only when its key was written during the rerun.

    Otherwise a sidebar link clicked before the browser registered the widgets of the page being drawn (its
    rerun carries no widget state) makes the browser mount them at their defaults while the server believes they
    show the session's values; the next interaction then sends the defaults back through `on_change` into the
    plain keys and the URL (issue 25; tests/e2e/test_auth_sidebar_race.py)."""
    st.session_state[widget_key] = st.session_state.get(store_key, default)


def _copy(widget_key: str, store_key: str) -> None:
    st.session_state[store_key] = st.session_state.get(widget_key)


def sidebar_controls(conn: Database | None = None) -> None:
    """Current run, reviewer name, blind mode and adjudicator mode; all persist across pages, reruns and reloads
    (through the URL)."""
    adopt_url_settings()
    if conn is not None:
        run = run_picker(conn)
        note_forced_blind(conn, run)
    auth.sidebar_identity()
    if not auth.team_mode():  # team mode: the signed-in identity is the reviewer, no name to type
        _persisted(REVIEWER_KEY, NAME_KEY, "")
        st.text_input("Reviewer name", key=REVIEWER_KEY, placeholder="your name", on_change=_copy,
                      args=(REVIEWER_KEY, NAME_KEY),
                      help="Reviews are stored under this name (append-only, with time and note). Kept in the URL "
                           "(?reviewer=), so a reload keeps it.")
    _persisted("blind", BLIND_KEY, False)
    if forced_blind():
        st.session_state["blind"] = True
    st.toggle("Blind review", key="blind", on_change=_copy, args=("blind", BLIND_KEY), disabled=forced_blind(),
              help="Hide the judge's answer, other reviewers' labels and every score derived from them until you "
                   "have labelled. Each review records whether it was made blind. Kept in the URL (?blind=1)." +
                   (" The owner made this run, or a run that asks its questions, blind for you: it cannot be "
                    "switched off." if forced_blind()
                    else ""))
    if auth.may("adjudicate") and not forced_blind():
        _persisted("adjudicator", ADJUDICATOR_KEY, False)
        st.toggle("Adjudicator", key="adjudicator", on_change=_copy, args=("adjudicator", ADJUDICATOR_KEY),
                  help="Your labels settle conflicts: an adjudicated label overrides reviewers and judge. Kept in "
                       "the URL (?adj=1).")
    write_url_settings(with_run=conn is not None)


def note_forced_blind(conn: Database, run: str | None) -> None:
    """Read the owner's blind assignment of `run` for the current reviewer (once per rerun, in the sidebar)."""
    who = reviewer()
    forced = blind_assigned(conn, run, who) if run else False
    st.session_state[FORCED_BLIND] = (run, who, forced)


def forced_blind() -> bool:
    """Whether the owner made the current run blind for the current reviewer (they cannot switch it off)."""
    run, who, forced = st.session_state.get(FORCED_BLIND, (None, None, False))
    return bool(forced) and run == current_run() and who == reviewer()


def write_url_settings(with_run: bool = True) -> None:
    """Mirror the current run, the reviewer name, blind and adjudicator mode and the policy into the URL (so a
    reload keeps them), in one message: a click that interrupts the rerun leaves the URL as a whole, never with
    the run but without the reviewer."""
    wanted = {k: str(v) if v else "" for k, v in _carried().items() if with_run or k != URL_RUN}
    changed = {k: v for k, v in wanted.items() if v and st.query_params.get(k) != v}
    if changed:
        st.query_params.update(changed)
    for name in [k for k, v in wanted.items() if not v and k in st.query_params]:
        del st.query_params[name]


def link(page: str, **params: object) -> str:
    """A relative URL to `page` with `params`, carrying the current run, the reviewer name and the modes: links in
    tables open a new tab, which is a new session."""
    return links(page, [params])[0]


_PAIRS: dict[tuple[str, str], str] = {}
_MAX_PAIRS = 400_000
"""`links`' encoded parameters, kept across renders: the overview's link column at 100,000 abstracts encoded every
document id again after each review (2.4 s, #38)."""


_URLS: dict[tuple, dict[tuple, str]] = {}
"""`links`' whole links per page and carried settings, kept across renders: 100,000 of them took 0.25 s a render."""


def links(page: str, params: Iterable[Mapping[str, object]]) -> list[str]:
    """`link(page, **p)` for every `p`, the session's settings read once: a table's link column at 10,000 rows
    (each read of the settings looks up the secrets file twice, about 0.4 ms each)."""
    carried = _carried()
    pairs = _PAIRS  # (key, value) -> "key=value", as urlencode writes it: each once per process
    if len(pairs) > _MAX_PAIRS:
        pairs.clear()
    if len(_URLS) > _MAX_PAIRS:
        _URLS.clear()
    # a table's links, kept across its renders (1, 1.0 and True are equal keys, not equal text: their types too)
    urls = _URLS.setdefault((page, *((k, v.__class__, v) for k, v in carried.items())), {})

    def pair(k: str, v: str) -> str:
        hit = pairs.get((k, v))
        if hit is None:
            hit = pairs[k, v] = urlencode({k: v})
        return hit

    def build(p: Mapping[str, object]) -> str:
        return f"{page}?{'&'.join(pair(k, str(v)) for k, v in {**carried, **p}.items() if v not in (None, ''))}"

    def url(p: Mapping[str, object]) -> str:
        key = tuple((k, v.__class__, v) for k, v in p.items())
        try:
            hit = urls.get(key)
        except TypeError:  # a value that cannot be a key: built each time
            return build(p)
        if hit is None:
            hit = urls[key] = build(p)
        return hit

    return [url(p) for p in params]


def link_params(**params: object) -> dict[str, str]:
    """Query parameters for `st.page_link` / `st.switch_page`: the current run and settings plus `params`."""
    return {k: str(v) for k, v in {**_carried(), **params}.items() if v not in (None, "")}


def _carried() -> dict[str, object]:
    return {URL_RUN: current_run(), URL_REVIEWER: "" if auth.team_mode() else reviewer(),
            URL_BLIND: "1" if blind() else "",
            URL_ADJ: "1" if role() == "adjudicator" else "",
            URL_POLICY: "" if policy() == DEFAULT_POLICY else policy()}


_YES, _NO = ("1", "true", "yes", "on", "y", "t"), ("0", "false", "no", "off", "n", "f", "")


def url_flag(value: str | None) -> bool | None:
    """A yes/no URL parameter in its usual spellings (`1`, `true`, `yes`, `on`, … any case; absent or empty: no);
    None for anything else, which the caller refuses rather than guesses.

    >>> [url_flag(v) for v in ("1", "TRUE", "yes", None, "0", "off", "maybe")]
    [True, True, True, False, False, False, None]
    """
    v = (value or "").strip().lower()
    return True if v in _YES else False if v in _NO else None


def adopt_url_settings() -> None:
    """A new session (a reload, a link, a bookmark) takes the current run, the reviewer name, blind and
    adjudicator mode and the effective-label policy from the URL (once).

    `app.py` calls it before `st.navigation`, so no sidebar link exists yet that a click could follow before the
    URL was read (a sidebar link carries no query parameters); the session is marked as adopted only at the end.
    """
    if ADOPTED in st.session_state:
        return
    run = st.query_params.get(URL_RUN)
    if run and CURRENT_RUN not in st.session_state:  # checked against the database by run_picker_value
        st.session_state[CURRENT_RUN] = run
    name = st.query_params.get(URL_REVIEWER)
    if name and not st.session_state.get(NAME_KEY) and not auth.team_mode():  # team mode: the sign-in names you
        st.session_state[NAME_KEY] = name
    blind_flag = url_flag(st.query_params.get(URL_BLIND))
    if blind_flag is None:  # never sighted by a misspelling: the link is refused, the session adopts nothing
        show_text(f"This link's ?{URL_BLIND}= value is not understood, so it is not opened (it might have meant "
                  f"blind review): use {URL_BLIND}=1 (or true / yes / on) for blind review, {URL_BLIND}=0 for "
                  "sighted.", "error")
        st.stop()
    if blind_flag and BLIND_KEY not in st.session_state:
        st.session_state[BLIND_KEY] = True
    if url_flag(st.query_params.get(URL_ADJ)) and ADJUDICATOR_KEY not in st.session_state:
        st.session_state[ADJUDICATOR_KEY] = True
    if st.query_params.get(URL_POLICY) in POLICIES and POLICY_KEY not in st.session_state:
        st.session_state[POLICY_KEY] = st.query_params.get(URL_POLICY)
    st.session_state[ADOPTED] = True


def forget_url_settings() -> None:
    """Undo `adopt_url_settings` (and the run the sidebar chose meanwhile): the next rerun adopts its URL's settings
    as a new session would (a deep link followed after sign-in, whose session started at the root)."""
    for k in (ADOPTED, CURRENT_RUN, RUN_WIDGET, BLIND_KEY, ADJUDICATOR_KEY, POLICY_KEY):
        st.session_state.pop(k, None)


def short_spec(spec: str) -> str:
    """A judge spec for display: paths inside the project or the working directory shown relative."""
    from audit.demo import ROOT

    for base in (str(ROOT) + "/", str(Path.cwd()) + "/"):
        spec = spec.replace(base, "")
    return spec


def reviewer() -> str:
    """The reviewer: in team mode the signed-in e-mail address (never a typed or URL name), else the typed name."""
    if auth.team_mode():
        who = auth.identity()
        return who.email if who and who.role else ""
    return (st.session_state.get(NAME_KEY) or st.session_state.get(REVIEWER_KEY) or "").strip()


def blind() -> bool:
    return forced_blind() or bool(st.session_state.get(BLIND_KEY, st.session_state.get("blind", False)))


def role() -> str:
    """"adjudicator" only when chosen, allowed by the person's role (team mode) and the run is not assigned blind."""
    adj = st.session_state.get(ADJUDICATOR_KEY, st.session_state.get("adjudicator", False))
    return "adjudicator" if adj and auth.may("adjudicate") and not forced_blind() else "reviewer"
