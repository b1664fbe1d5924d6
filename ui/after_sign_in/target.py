"""Which page of this app a remembered deep link names, if any (pure: no Streamlit)."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

MAX_AGE_MS = 30 * 60 * 1000
"""A link remembered longer ago than this (a sign-in abandoned, then another one later in the tab) is not followed."""
MAX_CHARS = 4000
MAX_PARAMS = 40


@dataclass(frozen=True)
class Target:
    """A page of this app (its `url_path`; "" the root) and the query parameters to open it with."""

    url_path: str
    params: dict[str, str | list[str]]


def return_target(value: object, url_paths: Collection[str], base_path: str = "") -> Target | None:
    """The page to open for the browser's remembered link `value` (`{"path": location.pathname + search,
    "age_ms": …}`), or None: not a same-origin path of this app (an absolute URL, `//host`, a backslash, a
    control character), not one of `url_paths`, too old, or the bare root (already there).

    `base_path` is Streamlit's `server.baseUrlPath` (the app served under a prefix)."""
    if not isinstance(value, Mapping):
        return None
    path, age = value.get("path"), value.get("age_ms")
    if not isinstance(path, str) or not isinstance(age, int | float) or isinstance(age, bool):
        return None
    if not math.isfinite(age) or not 0 <= age <= MAX_AGE_MS or len(path) > MAX_CHARS:
        return None
    # browsers treat `\` as `/` and drop tabs and newlines, so `/\evil.org` or `/\t/evil.org` would be `//evil.org`
    if not path.startswith("/") or path.startswith("//") or "\\" in path or any(ord(c) < 32 or ord(c) == 127
                                                                              for c in path):
        return None
    parts = urlsplit(path)
    if parts.scheme or parts.netloc or parts.fragment:
        return None
    route = parts.path.strip("/")
    base = base_path.strip("/")
    if base:
        if route != base and not route.startswith(base + "/"):
            return None
        route = route[len(base):].strip("/")
    if route not in url_paths and route != "":
        return None
    pairs = parse_qsl(parts.query, keep_blank_values=False)
    if len(pairs) > MAX_PARAMS or (route == "" and not pairs):
        return None
    params: dict[str, str | list[str]] = {}
    for k, v in pairs:
        had = params.get(k)
        params[k] = v if had is None else [*([had] if isinstance(had, str) else had), v]
    return Target(route, params)
