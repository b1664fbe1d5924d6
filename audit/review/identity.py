"""One rule for who a name is: e-mail addresses (team mode's roles, blind assignments, shares) and reviewer names
(reviews, shares) — what makes two spellings the same person (`canonical_address`, `reviewer_key`).

An ASCII address compares case-insensitively, as mail providers treat it. Unicode is where look-alikes hide:
`casefold()` turned the Kelvin sign `K` (U+212A) into `k` and `ſ` (long s) into `s`, so `Kim@lab.org` took
`kim@lab.org`'s owner role and `x@ſtanford.edu` matched `@stanford.edu` (issue 34). So:

- a domain is compared in its IDNA (ASCII, `xn--`) form; a label that Unicode compatibility normalisation (NFKC)
  would change is refused (`ſ`, `K`, full-width letters: no registrable domain is spelt with them);
- a local part that is not ASCII is never case-folded or normalised: it matches only a roles-file entry spelt
  exactly the same way (NFKC-changing ones are refused outright).
"""

from __future__ import annotations

import unicodedata

from audit.errors import AuditError


class AddressError(AuditError):
    """An address or name that cannot be compared safely (the message says why)."""


def _domain(domain: str) -> str:
    labels = []
    for label in domain.split("."):
        if label.isascii():
            labels.append(label.lower())
            continue
        if unicodedata.normalize("NFKC", label) != label:
            raise AddressError(f"the domain label {label!r} holds look-alike characters (NFKC changes it)")
        folded = label.casefold()
        if unicodedata.normalize("NFKC", folded) != folded:
            raise AddressError(f"the domain label {label!r} holds look-alike characters")
        labels.append("xn--" + folded.encode("punycode").decode("ascii"))
    return ".".join(labels)


def canonical_address(email: str) -> tuple[str, str]:
    """(local part, domain) of `email` as compared: ASCII local parts lower-cased, others exactly as given; the
    domain in IDNA form. An empty local part is allowed (a roles file's `@domain`).

    >>> canonical_address(" Ana@Lab.ORG ")
    ('ana', 'lab.org')
    >>> canonical_address("jürgen@münchen.de")
    ('jürgen', 'xn--mnchen-3ya.de')
    >>> canonical_address("\\u212aim@lab.org")
    Traceback (most recent call last):
    audit.review.identity.AddressError: the local part '\u212aim' holds look-alike characters (NFKC changes it)

    Raises:
        AddressError: not one `@`, or look-alike characters that NFKC normalisation would change.
    """
    email = email.strip()
    if email.count("@") != 1:
        raise AddressError(f"{email!r} is not an address (name@domain)")
    local, domain = email.split("@")
    if not local.isascii() and unicodedata.normalize("NFKC", local) != local:
        raise AddressError(f"the local part {local!r} holds look-alike characters (NFKC changes it)")
    return (local.lower() if local.isascii() else local), _domain(domain)


def _scripts(name: str) -> set[str]:
    """The scripts of the letters in `name` (LATIN, CYRILLIC, GREEK, ...), from their Unicode names."""
    return {unicodedata.name(c, "UNKNOWN").split()[0] for c in name if c.isalpha()}


def reviewer_key(name: str, *, strict: bool = True) -> str:
    """The one identity rule for a reviewer, an address or a plain name: two names are the same reviewer exactly
    when their keys are equal (shares, blind assignments and reviews compare by it).

    An address compares as `canonical_address`. A plain name is NFC-normalised and ASCII names are lower-cased;
    a non-ASCII name is never case-folded (`casefold` merged `Straße` with `strasse`). A name that NFKC
    normalisation would change (`Ｋim`, the Kelvin sign) or that mixes scripts (`аna` with a Cyrillic `а` beside
    Latin letters) is refused (`strict`), else returned as given so that it matches nobody else.

    >>> reviewer_key(" Ana "), reviewer_key("Straße") == reviewer_key("strasse"), reviewer_key("Rita@Lab.org")
    ('ana', False, 'rita@lab.org')

    Raises:
        AddressError (an AuditError): a look-alike name (only when `strict`).
    """
    raw = name.strip()
    name = unicodedata.normalize("NFC", raw)
    try:
        if not raw.isascii() and unicodedata.normalize("NFKC", raw).isascii():  # the Kelvin sign is a K under NFC
            raise AddressError(f"the name {ascii(raw)} is a look-alike of the ASCII name "
                               f"{unicodedata.normalize('NFKC', raw)!r}")
        if name.count("@") == 1:
            local, domain = canonical_address(name)
            return f"{local}@{domain}"
        if unicodedata.normalize("NFKC", name) != name:
            raise AddressError(f"the name {name!r} holds look-alike characters (NFKC changes it)")
        scripts = _scripts(name)
        if len(scripts) > 1:
            raise AddressError(f"the name {name!r} mixes {' and '.join(sorted(s.title() for s in scripts))} "
                               "letters (a look-alike of another name)")
    except AddressError:
        if strict:
            raise
        return name
    return name.lower() if name.isascii() else name
