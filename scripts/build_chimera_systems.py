"""Build two more CHIMERA extraction systems for the demo board from the bundled gold (data/chimera/eval.csv).

No prediction output of the paper's extractors is public, so these are simulated extractors with realistic, and
deliberately different, error profiles; each is the gold annotation passed through seeded perturbations:

- `verbose` (`pred_verbose.jsonl`): reproduces most spans verbatim but widens some with neighbouring words of the
  abstract (0-3 words before, 1-4 after), shortens a few to their content words (function words such as "of",
  "the", "using" dropped: a telegraphic paraphrase), adds an extra element
  (a nearby phrase of the abstract) to some combinations, and raises false alarms on some irrelevant abstracts.
  It recalls nearly everything; a judge lenient to paraphrase and wider spans favours it.
- `terse` (`pred_terse.jsonl`): cuts some spans to their first words (a head of 1-3 words), misses some entities
  and whole recombinations, and gives some relations the wrong type (combination <-> inspiration). Precise where
  it answers, but it misses a lot.

Every unperturbed span is the gold span verbatim, so the systems (and `pred_mixed.jsonl`, whose spans are the same
kind of strings) share judge questions (document, entity type, unordered span pair): a review of one counts in
every run that asks it.

Deterministic: one `random.Random(seed)` per system, documents in file order. Usage:

    python3 scripts/build_chimera_systems.py [--gold data/chimera/eval.csv] [--out-dir data/chimera] [--seed 36]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring.families.chimera.load import load_gold  # noqa: E402
from scoring.families.chimera.model import ENTITIES_OF, ChimeraDoc, GoldSpan, Relation  # noqa: E402

STOP = {"a", "an", "the", "of", "for", "to", "in", "on", "and", "with", "by", "from", "as", "that", "which", "its",
        "their", "using", "via"}
WORD = re.compile(r"\S+")


def _words_around(text: str, span: GoldSpan | None, value: str) -> tuple[list[str], list[str]]:
    """Words of the abstract before and after the span (located by its offsets, else by first occurrence)."""
    start, end = (span.start, span.end) if span else (text.find(value), text.find(value) + len(value))
    if start < 0:
        return [], []
    return WORD.findall(text[:start]), WORD.findall(text[end:])


def _clean(s: str) -> str:
    return " ".join(s.split()).strip(" ,.;:()")


def widen(rng: random.Random, doc: ChimeraDoc, value: str) -> str:
    loc = next((s for s in doc.gold_spans if s.value == value), None)
    before, after = _words_around(doc.text, loc, value)
    left = before[-rng.randint(0, 3):] if before else []
    right = after[:rng.randint(1, 4)]
    out = _clean(" ".join([*left, value, *right]))
    return out or value


def paraphrase(rng: random.Random, value: str) -> str:  # noqa: ARG001 (same signature as the others)
    words = value.split()
    kept = [w for w in words if w.lower() not in STOP]
    return " ".join(kept) if 1 < len(kept) < len(words) else value


def truncate(rng: random.Random, value: str) -> str:
    words = value.split()
    return " ".join(words[:rng.randint(1, 3)]) if len(words) > 3 else value


def extra_phrase(rng: random.Random, doc: ChimeraDoc) -> str | None:
    """A 2-4 word phrase of the abstract that is no gold span: a plausible but wrong extra element."""
    words = WORD.findall(doc.text)
    if len(words) < 8:
        return None
    i = rng.randrange(len(words) - 4)
    phrase = _clean(" ".join(words[i:i + rng.randint(2, 4)]))
    gold = {v for r in doc.gold for _, v in r.entities}
    return phrase if phrase and phrase not in gold else None


def other_type(rel: Relation) -> Relation:
    """The relation with the other type: a combination's elements become source(s) and target, and back."""
    spans = [v for _, v in rel.entities]
    if rel.type == "combination":
        if len(spans) < 2:
            return rel
        return Relation("inspiration", (("inspiration-src", spans[0]), *(("inspiration-target", v) for v in spans[1:])))
    return Relation("combination", tuple(("comb-element", v) for v in spans))


def verbose(rng: random.Random, doc: ChimeraDoc) -> list[Relation]:
    if not doc.gold:
        extra = extra_phrase(rng, doc), extra_phrase(rng, doc)
        if rng.random() < 0.15 and all(extra):
            return [Relation("combination", tuple(("comb-element", v) for v in extra if v))]
        return []
    out = []
    for rel in doc.gold:
        ents = []
        for t, v in rel.entities:
            r = rng.random()
            ents.append((t, widen(rng, doc, v) if r < 0.35 else paraphrase(rng, v) if r < 0.5 else v))
        if rel.type == "combination" and rng.random() < 0.25:
            extra = extra_phrase(rng, doc)
            if extra:
                ents.append(("comb-element", extra))
        out.append(Relation(rel.type, tuple(ents)))
    return out


def terse(rng: random.Random, doc: ChimeraDoc) -> list[Relation]:
    out = []
    for rel in doc.gold:
        if rng.random() < 0.2:
            continue  # a missed recombination
        ents = tuple((t, truncate(rng, v) if rng.random() < 0.4 else v) for t, v in rel.entities
                     if rng.random() >= 0.15)  # a missed entity
        types = ENTITIES_OF[rel.type]
        if not all(any(t == need for t, _ in ents) for need in types):
            continue  # too little left to be a relation of its type
        kept = Relation(rel.type, ents)
        out.append(other_type(kept) if rng.random() < 0.12 else kept)
    return out


SYSTEMS: dict[str, Callable[[random.Random, ChimeraDoc], list[Relation]]] = {"verbose": verbose, "terse": terse}


def as_json(relations: list[Relation]) -> dict:
    out: dict[str, list[dict[str, list[str]]]] = {}
    for rel in relations:
        ents: dict[str, list[str]] = {}
        for t, v in rel.entities:
            ents.setdefault(t, []).append(v)
        out.setdefault(rel.type, []).append(ents)
    return out


def build(gold: Path, name: str, seed: int) -> list[str]:
    """The prediction file's lines for one system (JSON lines, one per gold abstract)."""
    rng = random.Random(f"{seed}/{name}")
    return [json.dumps({"paper_id": d.paper_id, "relations": as_json(SYSTEMS[name](rng, d))}, ensure_ascii=False)
            for d in load_gold(gold)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gold", type=Path, default=ROOT / "data" / "chimera" / "eval.csv")
    ap.add_argument("--out-dir", type=Path, default=ROOT / "data" / "chimera")
    ap.add_argument("--seed", type=int, default=36)
    args = ap.parse_args()
    for name in SYSTEMS:
        out = args.out_dir / f"pred_{name}.jsonl"
        lines = build(args.gold, name, args.seed)
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"wrote {out} ({len(lines)} lines)", file=sys.stderr)


if __name__ == "__main__":
    main()
