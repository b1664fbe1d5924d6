"""The retrieval family's data: one ranked query of a bi-encoder run, and the names it uses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

KIND = "candidate"
"""Decision kind: is this candidate, ranked above the gold, an acceptable answer too?"""
ACCEPTABLE, NOT_ACCEPTABLE = "acceptable", "not-acceptable"
RELATIONS = ("combination", "inspiration")
RELATION_ALIASES = {"analogy": "inspiration", "blend": "combination"}
"""Old names of the relation types (chimera.md: blend == combination, inspiration == analogy)."""
SUBSETS = ("all", "combination", "inspiration", "cross_domain")
"""Query subsets the metrics are reported on; `cross_domain` only when the run flags queries (`is_cross_domain`)."""
HITS_AT = (1, 3, 5, 10, 50, 100)
METRIC_NAMES = ("n", "mr", "mrr", *(f"hits@{k}" for k in HITS_AT), "median_rank")
TiePolicy = Literal["mean", "optimistic", "pessimistic"]
TIE_POLICIES: tuple[TiePolicy, ...] = ("mean", "optimistic", "pessimistic")
"""How the gold's block of equal scores is ranked: its mean rank (default), its best rank, its worst rank."""
DEFAULT_POLICY: TiePolicy = "mean"
REVIEW_DEPTH = 100
"""Only candidates within the top 100 are offered for review (Hits@100 is the deepest cut-off)."""


@dataclass(frozen=True)
class RankedQuery:
    """One query of a ranking run (a line of the CHIMERA bi-encoder's `results.json`), validated.

    `candidates` is the ranking as written: either the whole candidate pool, or its top K (`n_candidates` says how
    many candidates the pool had), possibly followed by the gold when the gold ranks below the top K. Ranks are
    1-based positions in the full ranking; `positive_index` is the gold's 0-based one.
    """

    id: str
    query: str
    context: str | None
    anchor_text: str
    relation: str
    """`combination` or `inspiration` (old names normalised)."""
    positive: str
    """The gold answer's text."""
    positive_id: str
    candidates: tuple[str, ...]
    candidates_text: tuple[str, ...]
    positive_index: int
    is_cross_domain: bool | None
    """None when the line does not say."""
    scores: tuple[float, ...] | None
    """One similarity per listed candidate, descending; None when the run wrote none (ties unknown)."""
    n_candidates: int
    """Size of the full candidate pool (= len(candidates) unless the list was cut)."""
    gold_block: tuple[int, int]
    """First and last rank (1-based, inclusive) of the gold's block of equal scores in the full ranking."""
    anchor_id: str | None = None
    line: int = 0

    @property
    def gold_position(self) -> int:
        """The gold's index in `candidates` (its rank - 1, or the last index when it was appended after the cut)."""
        return self.candidates.index(self.positive_id)

    @property
    def appended_gold(self) -> bool:
        """True when the list is a top K followed by the gold, which ranks below it."""
        return self.gold_position != self.positive_index

    def rank_of_position(self, i: int) -> int:
        """1-based rank in the full ranking of the candidate listed at index i."""
        return self.positive_index + 1 if i == self.gold_position else i + 1

    @property
    def strictly_above(self) -> int:
        """Candidates with a higher score than the gold (in the full ranking)."""
        return self.gold_block[0] - 1

    @property
    def tied(self) -> int:
        """Other candidates with exactly the gold's score."""
        return self.gold_block[1] - self.gold_block[0]
