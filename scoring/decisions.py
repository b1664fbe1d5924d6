"""The decision record shared by every task family."""

from __future__ import annotations

from dataclasses import dataclass, field

MATCH, NO_MATCH, INVALID_LABEL = "match", "no-match", "invalid"


@dataclass(frozen=True)
class Decision:
    """One atomic judgement the scorer relied on."""

    doc: str
    """Document id (CHIMERA: paper id)."""
    kind: str
    """Decision kind, e.g. `entity_pair`."""
    type: str
    """Sub-type, e.g. the entity type `comb-element`."""
    left: str
    """The predicted side."""
    right: str
    """The gold side (or the second idea)."""
    judge: str
    """The judge's label (`match`, `no-match`, or `invalid` when an answer could not be read)."""
    detail: dict = field(default_factory=dict, hash=False, compare=False)
    """Per-order answers, raw text, rationale, score."""

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        """Natural key: stable across databases, used to merge reviews."""
        return (self.doc, self.kind, self.type, self.left, self.right)
