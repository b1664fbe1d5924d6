"""CHIMERA's data model: relation, entity and class names, documents and predictions."""

from __future__ import annotations

from dataclasses import dataclass

RELATION_TYPES = ("combination", "inspiration")
ENTITY_TYPES = ("comb-element", "inspiration-src", "inspiration-target")
CLASSES = ("relevant", "irrelevant")
ENTITIES_OF = {"combination": ("comb-element",), "inspiration": ("inspiration-src", "inspiration-target")}
ALIASES = {"analogy": "inspiration", "blend": "combination", "analogy-src": "inspiration-src",
           "analogy-target": "inspiration-target", "blend-element": "comb-element"}
KIND = "entity_pair"
OUTCOMES = ("perfect", "partial", "missed recombination", "false alarm", "type mismatch", "true negative")
MAX_INPUT_BYTES = 512 * 1024 * 1024
GOLD_COLUMNS = ("paper_id", "text", "readable_relations")


def normalise_name(name: str) -> str:
    """Map old spellings (analogy, blend, analogy-src, ...) to the names the scorer uses."""
    return ALIASES.get(name, name)


@dataclass(frozen=True)
class Relation:
    """One recombination: its type and its entities as (entity type, span) in order."""

    type: str
    entities: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class GoldSpan:
    """A gold entity's location in the text (for highlighting)."""

    type: str
    value: str
    start: int
    end: int


@dataclass(frozen=True)
class ChimeraDoc:
    """One abstract with its gold annotation."""

    paper_id: str
    text: str
    document_class: str
    gold: tuple[Relation, ...]
    gold_spans: tuple[GoldSpan, ...]
    line: int


@dataclass(frozen=True)
class ChimeraPrediction:
    """The relations a system predicted for one abstract."""

    paper_id: str
    relations: tuple[Relation, ...]
    line: int | None
    """Line in the prediction file, or None when the prediction is missing (counted as no recombination)."""


@dataclass(frozen=True)
class LoadedPredictions:
    predictions: dict[str, ChimeraPrediction]
    missing: list[str]
    """Gold paper ids with no prediction line (scored as 'no recombination')."""
    notes: list[str]
    """Normalisations applied (e.g. `analogy` renamed), one line each."""

