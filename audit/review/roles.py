"""Team mode's roles: who may do what, decided here and nowhere else (pure: no Streamlit, no SQL).

The owner of a team audit lists people in one TOML file (`rejudge.toml`, or `$REJUDGE_ROLES`):

    [roles]
    owners = ["ana@lab.org"]
    adjudicators = ["bo@lab.org"]
    reviewers = ["@lab.org", "cy@uni.edu"]   # "@lab.org": anyone with an address at lab.org

Each role includes the ones below it (owner > adjudicator > reviewer); a person matched by several entries gets
the highest. Anyone the file does not name has no role and is refused after sign-in. In local mode (no sign-in
configured) nobody is verified and `LOCAL` is allowed everything: the dashboard trusts whoever can reach it, as
the CLI trusts whoever can open the database file.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from audit.review.identity import AddressError, canonical_address, reviewer_key

RANKS = {"reviewer": 1, "adjudicator": 2, "owner": 3}
LOCAL = "local"
"""The pseudo-role of local mode: nothing is verified, so nothing is refused."""

ACTIONS: dict[str, tuple[str, str]] = {
    # action: (least role, what it is, for refusals and the README's table)
    "label": ("reviewer", "label decisions (and undo your own label)"),
    "flag_erratum": ("reviewer", "flag or withdraw a gold erratum"),
    "adjudicate": ("adjudicator", "settle conflicts as adjudicator"),
    "score_run": ("owner", "score a new run"),
    "load_runs": ("owner", "load the demo runs"),
    "delete_run": ("owner", "delete a run"),
    "edit_assignments": ("owner", "change a run's review assignments (blind, sampling plan)"),
    "export_reviews": ("owner", "export a run's reviews"),
    "import_reviews": ("owner", "import reviews into a run"),
    "improve_judge": ("owner", "improve the judge from the reviews"),
    "edit_boards": ("owner", "create or delete a leaderboard board"),
}
ROLE_KEYS = {"owners": "owner", "adjudicators": "adjudicator", "reviewers": "reviewer"}


class RolesFileError(ValueError):
    """The roles file is unreadable or malformed (the message says where and why)."""


@dataclass(frozen=True)
class Roles:
    """Who holds which role: lower-cased addresses and domains per role."""

    addresses: dict[str, str] = field(default_factory=dict)  # address -> role
    domains: dict[str, str] = field(default_factory=dict)  # domain -> role

    def role_of(self, email: str | None) -> str | None:
        """The highest role the file gives this address (by address or by its domain), or None.

        >>> Roles({"ana@lab.org": "owner"}, {"lab.org": "reviewer"}).role_of("ANA@lab.org")
        'owner'
        >>> staff = Roles({}, {"lab.org": "reviewer"})
        >>> staff.role_of("bo@lab.org"), staff.role_of("x@evil.org"), staff.role_of("x@lab.org.evil.org")
        ('reviewer', None, None)
        """
        if not email:
            return None
        try:
            local, domain = canonical_address(email)
        except AddressError:  # look-alike characters: no role by this address
            return None
        if not local:
            return None
        found = [r for r in (self.addresses.get(f"{local}@{domain}"), self.domains.get(domain)) if r]
        return max(found, key=RANKS.__getitem__) if found else None


def parse_roles(text: str, source: str = "rejudge.toml") -> Roles:
    """Read the `[roles]` table of a roles file.

    Raises:
        RolesFileError: not TOML, no `[roles]` table, an unknown key, an entry that is not an address or `@domain`.
    """
    try:
        data = tomllib.loads(text.removeprefix("\ufeff"))  # a byte-order mark (Notepad, PowerShell), as every reader
    except tomllib.TOMLDecodeError as e:
        raise RolesFileError(f"{source}: not valid TOML ({e})") from None
    except RecursionError:  # a roles file is a few lists of addresses; nothing of it nests
        raise RolesFileError(f"{source}: not valid TOML this reader can take (nested too deeply)") from None
    table = data.get("roles")
    if not isinstance(table, dict):
        raise RolesFileError(f"{source}: needs a [roles] table with owners, adjudicators and reviewers")
    unknown = sorted(set(table) - set(ROLE_KEYS))
    if unknown:
        what = "an unknown key" if len(unknown) == 1 else "unknown keys"
        raise RolesFileError(f"{source}: [roles] has {what} {', '.join(unknown)}; use "
                             f"{', '.join(ROLE_KEYS)}")
    addresses: dict[str, str] = {}
    domains: dict[str, str] = {}
    for key, role in ROLE_KEYS.items():
        entries = table.get(key, [])
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            raise RolesFileError(f"{source}: roles.{key} must be a list of addresses or @domains")
        for raw in entries:
            entry = raw.strip()
            local, at, domain = entry.rpartition("@")
            if not at or not domain or "." not in domain or " " in entry or local.count("@"):
                raise RolesFileError(f"{source}: roles.{key}: {entry!r} is neither an address (name@domain) "
                                     "nor a domain (@domain)")
            try:
                local, domain = canonical_address(entry)  # the one comparison rule (audit.review.identity)
            except AddressError as e:
                raise RolesFileError(f"{source}: roles.{key}: {entry!r}: {e}") from None
            entry = f"{local}@{domain}"
            target = addresses if local else domains
            if RANKS[role] > RANKS.get(target.get(entry if local else domain, ""), 0):
                target[entry if local else domain] = role
    if not addresses and not domains:
        raise RolesFileError(f"{source}: [roles] names nobody; add at least one owner")
    return Roles(addresses, domains)


def load_roles(path: Path) -> Roles:
    """Parse the roles file at `path`. Raises RolesFileError (also when it is missing or unreadable)."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise RolesFileError(f"{path}: cannot be read ({e.__class__.__name__}: {e.strerror or e})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise RolesFileError(f"{path}, line {line}: byte 0x{data[e.start]:02x} is not UTF-8 (save the file as "
                             "UTF-8)") from None
    return parse_roles(text, str(path))


def permits(role: str | None, action: str) -> bool:
    """Whether a person with `role` may do `action` (`ACTIONS`); `LOCAL` may do everything, no role nothing.

    >>> permits("reviewer", "label"), permits("reviewer", "adjudicate"), permits("adjudicator", "score_run")
    (True, False, False)
    >>> permits("owner", "delete_run"), permits(None, "label"), permits("local", "delete_run")
    (True, False, True)
    """
    if action not in ACTIONS:
        raise KeyError(f"unknown action {action!r}")
    if role == LOCAL:
        return True
    return role in RANKS and RANKS[role] >= RANKS[ACTIONS[action][0]]


def refusal(role: str | None, action: str) -> str:
    """What to tell someone `permits` refused."""
    need, what = ACTIONS[action]
    have = f"your role is {role}" if role in RANKS else "you have no role in this audit"
    article = "an" if need[0] in "aeiou" else "a"
    return f"Only {article} {need} may {what}; {have}."


def blind_forced(assignments: dict[str, bool], email: str | None) -> bool:
    """Whether the owner's assignments for a run make this reviewer blind: their own entry wins over the run's
    (`"*"`); no entry, not forced.

    >>> blind_forced({"*": True}, "ana@lab.org"), blind_forced({"*": True, "ana@lab.org": False}, "ANA@lab.org")
    (True, False)
    """
    email = reviewer_key(email or "", strict=False)
    if email and email in assignments:
        return assignments[email]
    return assignments.get("*", False)
