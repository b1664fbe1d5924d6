"""Secrets kept out of everything recorded: the one place that decides what an endpoint, a judge reply, a failure
message or a judge log's metadata may show.

- `redact_url`: an endpoint as recorded and shown (run identity, cache key, exports, the new-run form, messages):
  no user info, no query, and no secret-looking path segment (`/v1/key-…`, `sk-…`, a long random token).
- `url_secrets`: the strings of an endpoint that are credentials, to scrub from any text (`redact_secrets`).
- `redact_secrets`: text (a reply, an error message) with the given secrets and any `Authorization` value hidden.
- `public_value`: a value copied from a file the user did not write for us (a judge log's `.meta.json`) as it may
  be recorded: endpoints redacted, local paths reduced to the file name, credentials hidden, size bounded.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Sequence
from urllib.parse import parse_qsl, quote, unquote, urlsplit, urlunsplit

REDACTED = "[redacted]"
"""What a secret path segment or a credential field of a recorded value becomes."""
HIDDEN = "***"
"""What a secret inside free text (a reply, an error message) becomes."""

_KEY_PREFIX = re.compile(
    r"(?i)^(?:sk|pk|rk)[-_][A-Za-z0-9_-]{4,}"
    r"|^(?:key|keys|apikey|api[-_]key|token|tok|secret|pat|bearer)[-_](?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{4,}"
    r"|^(?:ghp|gho|ghu|ghs|ghr|github_pat|glpat|hf|xox[abprs])[-_][A-Za-z0-9-]{8,}"
    r"|^AKIA[0-9A-Z]{16}$")
"""Key-shaped words: OpenAI-style `sk-`, a named prefix (`key-`, `token_`: with a digit after it, so `token-level`
is a word), a vendor's token prefix (`hf_`, `ghp_`, `xoxb-`), an AWS key id."""
_UUID = re.compile(r"(?i)^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_ALNUM_RUN = re.compile(r"[A-Za-z0-9]+")
_SECRET_NAMES = frozenset({"key", "apikey", "api-key", "api_key", "token", "access_token", "secret", "password",
                           "passwd", "auth", "authorization", "bearer", "credential", "credentials"})
"""A path segment or a field with one of these names holds a secret (the next segment, the field's value)."""


def looks_secret(token: str) -> bool:
    """Whether a path segment or word looks like a credential: a key prefix (`sk-`, `key-`, `hf_`, ...), a UUID,
    or a long random run (16+ letters and digits mixed, or 24+ letters of both cases). Model names such as
    `Meta-Llama-3.1-8B-Instruct` or `gpt-4o-mini-2024-07-18` are made of short pieces and do not.

    >>> [looks_secret(s) for s in ("key-3f9a2c", "sk-live-abcd", "v1", "Meta-Llama-3.1-8B-Instruct", "4f" * 12)]
    [True, True, False, False, True]
    """
    token = token.strip()
    if _KEY_PREFIX.search(token) or _UUID.match(token):
        return True
    for run in _ALNUM_RUN.findall(token):
        letters, digits = any(c.isalpha() for c in run), any(c.isdigit() for c in run)
        if len(run) >= 16 and letters and digits:
            return True
        if len(run) >= 24 and any(c.isupper() for c in run) and any(c.islower() for c in run):
            return True
    return False


def _secret_segments(path: str) -> list[int]:
    """Indexes of the secret segments of a URL path (`looks_secret`, or the one after a segment named `key` ...)."""
    segments = path.split("/")
    found = []
    for i, seg in enumerate(segments):
        plain = unquote(seg)
        if looks_secret(plain) or (i > 0 and unquote(segments[i - 1]).lower() in _SECRET_NAMES and plain):
            found.append(i)
    return found


def redact_url(url: str) -> str:
    """The endpoint as it may be recorded or shown: without user info, query, fragment, trailing slash, and with
    every secret-looking path segment replaced by `[redacted]`.

    >>> redact_url("https://u:p@host:8443/v1/key-3f9a2c7d/?api_key=x")
    'https://host:8443/v1/[redacted]'
    """
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"  # IPv6
        if parts.port:
            host = f"{host}:{parts.port}"
    except ValueError:  # a malformed port or bracket: show nothing that could hold a secret
        return "<invalid URL>"
    segments = parts.path.split("/")
    for i in _secret_segments(parts.path):
        segments[i] = REDACTED
    return urlunsplit((parts.scheme, host, "/".join(segments).rstrip("/"), "", ""))


def url_secrets(url: str) -> list[str]:
    """Strings of `url` that may be credentials: its user info (raw and decoded), password, query values, secret
    path segments, and the Basic-auth token a client would build from them. Longest first, so replacing them in
    order leaves no piece."""
    try:
        parts = urlsplit(url.strip())
        user, password = parts.username, parts.password
    except ValueError:
        return [url.strip()] if url.strip() else []
    found: set[str] = set()
    netloc_user = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    if netloc_user:
        found |= {netloc_user, unquote(netloc_user)}
    for v in (user, password):
        if v:
            found |= {v, unquote(v)}
    if user is not None or password is not None:
        pair = f"{unquote(user or '')}:{unquote(password or '')}"
        found.add(base64.b64encode(pair.encode()).decode())
    for _, v in parse_qsl(parts.query, keep_blank_values=False):
        found |= {v, quote(v, safe="")}
    if parts.query:
        found.add(parts.query)
    segments = parts.path.split("/")
    for i in _secret_segments(parts.path):
        found |= {segments[i], unquote(segments[i])}
    if found:
        found.add(url.strip())
    return sorted((x for x in found if len(x) >= 3), key=len, reverse=True)


_AUTH_VALUE = re.compile(r"(?i)\b(bearer|basic|token)(\s+)([A-Za-z0-9._~+/=:-]{4,})")
_AUTH_FIELD = re.compile(r"""(?i)(["']?(?:proxy-)?authorization["']?\s*[:=]\s*["']?)([^"'\r\n,}]+)""")


def _auth_value(m: re.Match[str]) -> str:
    # "Bearer sk-…" or "Basic dTpw…" is a credential; "basic idea", "token count" or "bearer bond" in a judge's
    # reasoning is not (a lower-case word).
    scheme, value = m.group(1).lower(), m.group(3)
    word = value.isalpha() and value.islower()
    if looks_secret(value) or (not word and ((scheme == "bearer" and len(value) >= 8)
                                             or (scheme == "basic" and _looks_base64(value)))):
        return m.group(1) + m.group(2) + HIDDEN
    return m.group(0)


def _looks_base64(value: str) -> bool:
    return (re.fullmatch(r"[A-Za-z0-9+/]{6,}={0,2}", value) is not None
            and (value.endswith("=") or any(c.isdigit() for c in value) or not value.islower()))


def redact_secrets(text: str, secrets: Sequence[str] = ()) -> str:
    """`text` with every secret replaced by `***`, and any `Authorization` value (a header a server echoes,
    `Bearer ...`, a Basic token) hidden even when it is not one of ours. Used on every reply text and failure
    message a judge records."""
    for secret in sorted({s for s in secrets if s and len(s) >= 3}, key=len, reverse=True):
        text = text.replace(secret, HIDDEN)
    text = _AUTH_FIELD.sub(lambda m: m.group(1) + HIDDEN, text)
    return _AUTH_VALUE.sub(_auth_value, text)


# ---------------------------------------------------------------- values copied from the user's files

MAX_TEXT = 300
"""Characters kept of one string of a copied value."""
MAX_ITEMS = 50
"""Items kept of one list or object of a copied value."""
MAX_DEPTH = 4
MAX_FIELD_CHARS = 4096
"""A copied field whose JSON is longer than this (after the bounds above) is replaced by a note."""

_URL_OR_PATH = re.compile(
    r"(?P<url>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+)"
    r"|(?P<path>(?<![\w./\\])(?:~|[A-Za-z]:)?(?:[/\\][^\s/\\\"'<>]+){2,})")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._~+/=-]{5,}")


def public_text(text: str) -> str:
    """A string from a user's file as it may be recorded: URLs redacted (`redact_url`), local paths reduced to the
    file name, `replay:PATH` specs to `replay:NAME`, credentials hidden, at most `MAX_TEXT` characters.

    >>> public_text("judged by http://ana:pw@h/v1/key-3f9a2c7d with /home/ana/logs/run.jsonl")
    'judged by http://h/v1/[redacted] with run.jsonl'
    """
    def one(m: re.Match[str]) -> str:
        if m.group("url"):
            url = m.group("url")
            return _file_name(url) if url.lower().startswith("file:") else redact_url(url)
        return _file_name(m.group("path"))

    out = _URL_OR_PATH.sub(one, text)
    out = _WORD.sub(lambda m: REDACTED if _KEY_PREFIX.search(m.group(0)) else m.group(0), out)
    out = redact_secrets(out)
    return out if len(out) <= MAX_TEXT else out[:MAX_TEXT] + "…"


def _file_name(path: str) -> str:
    return re.split(r"[/\\]", path.rstrip("/\\"))[-1] or REDACTED


def public_value(value: object, depth: int = 0) -> object:
    """A JSON value from a user's file as it may be recorded: every string through `public_text`, a field named
    like a credential (`api_key`, `token`, `password`, ...) replaced, non-finite numbers dropped, and bounded
    (`MAX_ITEMS` items per container, `MAX_DEPTH` levels, `MAX_TEXT` characters per string)."""
    if isinstance(value, str):
        return public_text(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if abs(value) < 10 ** 18 else None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if depth >= MAX_DEPTH:
        return "[omitted: nested too deep]"
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for k, v in list(value.items())[:MAX_ITEMS]:
            name = public_text(str(k))[:100]
            out[name] = REDACTED if str(k).strip().lower() in _SECRET_NAMES else public_value(v, depth + 1)
        return out
    if isinstance(value, list):
        return [public_value(v, depth + 1) for v in value[:MAX_ITEMS]]
    return None


def public_field(value: object) -> object:
    """`public_value`, and a note instead of a field still longer than `MAX_FIELD_CHARS` characters as JSON."""
    import json

    out = public_value(value)
    size = len(json.dumps(out, ensure_ascii=False))
    return out if size <= MAX_FIELD_CHARS else f"[omitted: {size} characters]"
