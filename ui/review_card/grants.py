"""Review grants: what a page render allows the review card's save route (`ui/review_card/route.py`) to store.

The route has no Streamlit session and no `st.user`, so it never takes the browser's word for who is reviewing.
The queue page, which has both, issues a grant when it mounts the card: a random token naming the database, the
run, the reviewer, the role they review in, their blind and sample settings and, in team mode, their signed-in
identity. The browser sends the token with its labels; the route looks it up and stores through
`ui.review_card.store.store_events`, the function the component's own channel stores through, with the role
checks made again at every request (the roles file read again: a role taken away stops the next save).

A token lives in the server's memory only (a restart forgets every token: the card then sends its labels
through the component's channel until the next render gives it a new one), for `TTL_S` after its last use.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace

TTL_S = 12 * 3600.0
"""A token unused for this long is forgotten (a tab left open overnight sends through the channel, then gets a
new token at its next render)."""
MAX_GRANTS = 10_000
"""Tokens kept at most (the oldest forgotten first): bounds the memory a stream of new sessions can take."""


@dataclass(frozen=True)
class Grant:
    """One session's right to store labels in one run, as the session knew it when it drew the card."""

    db_path: str
    run_row: dict = field(hash=False, compare=False)
    policy: str
    reviewer: str
    role: str
    blind: bool
    sampled: bool
    queue: str
    team: bool
    """Team mode: the role is read again from the roles file for `email` at every request."""
    subject: str | None = None
    email: str | None = None
    in_queue: int = field(default=0, compare=False)
    """The queue's size and whether its progress line has the sample's part (`ui.queue_progress.progress_line`):
    the route answers with that line read afresh. Not part of the right: a rerun updates them under its token."""
    with_sample: bool = field(default=False, compare=False)

    def key(self) -> tuple:
        """What makes two grants the same right (the run by id and creation time: a run scored again under the same
        name is another run)."""
        return (self.db_path, self.run_row["id"], self.run_row.get("created"), self.policy, self.reviewer, self.role,
                self.blind, self.sampled, self.queue, self.team, self.subject, self.email)


@dataclass
class _Entry:
    grant: Grant
    used: float


class Grants:
    """The tokens this server process has issued (thread-safe: sessions' script threads issue, the route reads)."""

    def __init__(self, ttl_s: float = TTL_S, max_grants: int = MAX_GRANTS) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self.ttl_s, self.max_grants = ttl_s, max_grants

    def issue(self, grant: Grant, previous: str | None = None) -> str:
        """A token for `grant`: `previous` again when it still names the same grant (a rerun keeps its token),
        else a new one (and `previous` is forgotten: a session holds one token per card)."""
        now = time.monotonic()
        with self._lock:
            self._expire(now)
            old = self._entries.get(previous) if previous else None
            if old is not None and old.grant.key() == grant.key():
                old.grant, old.used = replace(grant), now  # the run's row as read now
                self._entries.move_to_end(previous)  # type: ignore[arg-type]
                return previous  # type: ignore[return-value]
            if old is not None:
                del self._entries[previous]  # type: ignore[arg-type]
            token = secrets.token_urlsafe(32)
            self._entries[token] = _Entry(grant, now)
            while len(self._entries) > self.max_grants:
                self._entries.popitem(last=False)
            return token

    def lookup(self, token: object) -> Grant | None:
        """The grant of `token`, or None (unknown, expired, or not a token at all)."""
        if not isinstance(token, str) or not token or len(token) > 100:
            return None
        now = time.monotonic()
        with self._lock:
            self._expire(now)
            entry = self._entries.get(token)
            if entry is None:
                return None
            entry.used = now
            self._entries.move_to_end(token)
            return entry.grant

    def revoke(self, token: str) -> None:
        with self._lock:
            self._entries.pop(token, None)

    def _expire(self, now: float) -> None:
        while self._entries:
            token, entry = next(iter(self._entries.items()))
            if now - entry.used <= self.ttl_s:
                return
            del self._entries[token]


GRANTS = Grants()
"""The process's grants: issued by the queue page, read by the save route (one server process serves both)."""
