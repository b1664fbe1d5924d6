"""The one decision of who may do what (`audit.review.roles`), and the roles file's parsing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit.review.roles import ACTIONS, LOCAL, RANKS, RolesFileError, blind_forced, load_roles, parse_roles, permits

ROLES = sorted(RANKS, key=RANKS.__getitem__)


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_each_action_needs_its_role_and_every_higher_one_may(action):
    need = ACTIONS[action][0]
    assert [permits(r, action) for r in ROLES] == [RANKS[r] >= RANKS[need] for r in ROLES]
    assert permits(LOCAL, action) and not permits(None, action) and not permits("admin", action)


def test_the_issue_s_role_table():
    assert {a for a in ACTIONS if permits("reviewer", a)} == {"label", "flag_erratum"}
    assert {a for a in ACTIONS if permits("adjudicator", a)} == {"label", "flag_erratum", "adjudicate"}
    assert {a for a in ACTIONS if not permits("adjudicator", a)} == {
        "score_run", "load_runs", "delete_run", "edit_assignments", "export_reviews", "import_reviews",
        "improve_judge", "edit_boards"}


def test_unknown_action_is_an_error_not_a_refusal():
    with pytest.raises(KeyError):
        permits("owner", "launch")


def test_addresses_and_domains_with_the_highest_role_winning():
    roles = parse_roles('[roles]\nowners = ["Olga@Lab.org"]\nadjudicators = ["@lab.org"]\n'
                        'reviewers = ["@lab.org", "cy@uni.edu", "olga@lab.org"]\n')
    assert roles.role_of("olga@lab.org") == "owner"  # listed as reviewer too: the highest wins
    assert roles.role_of("anyone@LAB.ORG") == "adjudicator"
    assert roles.role_of("cy@uni.edu") == "reviewer"
    assert roles.role_of("dee@uni.edu") is None
    for forged in ("olga@lab.org@evil.org", "x@sub.lab.org", "lab.org", "", None, "@lab.org"):
        assert roles.role_of(forged) is None, forged


@pytest.mark.parametrize("text, says", [
    ("owners = [", "not valid TOML"), ("[other]\nx = 1\n", r"needs a \[roles\] table"),
    ("[roles]\nadmins = ['a@b.c']\n", "unknown key"), ("[roles]\nowners = 'a@b.c'\n", "must be a list"),
    ("[roles]\nowners = ['ana']\n", "neither an address"), ("[roles]\nowners = ['a b@c.d']\n", "neither"),
    ("[roles]\nowners = []\n", "names nobody"),
    ("owners = " + "[" * 100_000, "nested too deeply"),  # a RecursionError reached the team server's page
])
def test_a_bad_roles_file_says_what_is_wrong(text, says):
    with pytest.raises(RolesFileError, match=says):
        parse_roles(text, "team.toml")


def test_a_roles_file_saved_with_a_byte_order_mark_reads_as_without(tmp_path):
    """Notepad and PowerShell save UTF-8 with a BOM: it was "not valid TOML (Invalid statement (at line 1, column
    1))", a message that does not say why; every other reader of the product takes the mark."""
    text = '[roles]\nowners = ["olga@lab.org"]\n'
    (tmp_path / "bom.toml").write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert load_roles(tmp_path / "bom.toml") == parse_roles(text)


@given(st.dictionaries(st.sampled_from(["*", "ana@lab.org", "bo@lab.org"]), st.booleans()),
       st.sampled_from(["ana@lab.org", "BO@lab.org", "cy@lab.org", ""]))
def test_a_reviewer_s_own_assignment_wins_over_the_run_s(assignments, email):
    own = assignments.get(email.casefold()) if email else None
    assert blind_forced(assignments, email) == (own if own is not None else assignments.get("*", False))


KELVIN, LONG_S, CYRILLIC_A = "\u212a", "\u017f", "\u0430"


@pytest.mark.parametrize("email", [f"{KELVIN}im@lab.org", f"kim@lab.{LONG_S}org", f"x@{LONG_S}tanford.edu",
                                   f"x@STAN{LONG_S}ORD.edu", f"{CYRILLIC_A}na@other.org", "ｋim@lab.org"])
def test_a_look_alike_address_takes_nobody_s_role(email):
    """Case folding made the Kelvin sign a `k` and the long s an `s`: a look-alike address took the owner's role or
    a domain's. No role by look-alikes; a non-ASCII local part matches only an entry spelt exactly so."""
    roles = parse_roles('[roles]\nowners = ["kim@lab.org", "ana@other.org"]\nreviewers = ["@stanford.edu"]\n')
    assert roles.role_of(email) is None
    assert roles.role_of("KIM@Lab.org") == "owner" and roles.role_of("Bo@Stanford.EDU") == "reviewer"


def test_a_non_ascii_address_named_exactly_in_the_roles_file_keeps_its_role():
    roles = parse_roles('[roles]\nowners = ["jürgen@münchen.de", "@xn--mnchen-3ya.de"]\n')
    assert roles.role_of("jürgen@münchen.de") == "owner"
    assert roles.role_of("jürgen@MÜNCHEN.de") == "owner"  # the domain compares in its IDNA form
    assert roles.role_of("x@xn--mnchen-3ya.de") == "owner"
    assert parse_roles('[roles]\nreviewers = ["@lab.org"]\n').role_of("jürgen@lab.org") == "reviewer"


def test_a_roles_file_entry_with_look_alikes_is_refused_with_the_file():
    with pytest.raises(RolesFileError, match=r"r\.toml: roles\.owners: .*look-alike"):
        parse_roles(f'[roles]\nowners = ["{KELVIN}im@lab.org"]\n', "r.toml")
