"""One rule for comparing e-mail addresses (team mode's roles): what makes two spellings the same person.

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


class AddressError(ValueError):
    """An address that cannot be compared safely (the message says why)."""


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
    audit.identity.AddressError: the local part '\u212aim' holds look-alike characters (NFKC changes it)

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
