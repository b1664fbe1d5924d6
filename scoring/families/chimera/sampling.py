"""CHIMERA's sampling design for partial audits (docs: partial-audit.md): a block is a document (its decisions are
settled together, and relation credit needs the whole document); strata from judge-side information only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

RARE_TYPES = ("inspiration-src", "inspiration-target")
"""Rare entity types: one flip there moves the macro average many times more than an ordinary flip, so their
blocks are a stratum of their own (the partial-audit bench needed it for honest coverage)."""


def _split(d: Mapping) -> bool:
    """Yes in one span order only: the judge contradicts itself."""
    a = (d.get("detail") or {}).get("pred_gold", {}).get("value")
    b = (d.get("detail") or {}).get("gold_pred", {}).get("value")
    return {a, b} == {"yes", "no"}


def stratum(decisions: Sequence[Mapping]) -> str:
    """`identical` (every pair is two equal strings: always a match), `split`, `match` (some judge match),
    `no-match`; prefixed `inspiration/` when the document has inspiration entities."""
    rare = any(d["type"] in RARE_TYPES for d in decisions)
    if all(d["left"] == d["right"] for d in decisions):
        base = "identical"
    elif any(_split(d) for d in decisions):
        base = "split"
    elif any(d["judge"] == "match" and d["left"] != d["right"] for d in decisions):
        base = "match"
    else:
        base = "no-match"
    return f"inspiration/{base}" if rare else base


def trivial(decision: Mapping) -> bool:
    """An identical-string pair, whose answer is certain (a match); whether the judge gave it is
    `scoring.families.base.certainty`'s question."""
    return decision["left"] == decision["right"]
