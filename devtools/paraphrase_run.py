"""A CHIMERA run whose fuzzy judge is too strict: predictions that paraphrase the gold spans lightly (a word dropped,
two words swapped, a plural, an article, a typo) beside verbatim copies and unrelated spans, with the truth a careful
human would give (a paraphrase and a copy match their gold span; nothing else matches). Scored with `fuzzy:95`, the
judge misses most paraphrases (their ratio is about 70-94); a lower threshold finds them.

Seeded; built from `data/chimera/eval.csv` (the relevant abstracts' gold relations).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from scoring.families.chimera.scorer import load_gold

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "data" / "chimera" / "eval.csv"


def _paraphrase(span: str, rng: np.random.Generator) -> str:
    words = span.split()
    if len(words) < 3:
        return span + "s" if not span.endswith("s") else span[:-1]
    how = rng.integers(5)
    i = int(rng.integers(len(words) - 1))
    if how == 0:
        words.pop(i)
    elif how == 1:
        words[i], words[i + 1] = words[i + 1], words[i]
    elif how == 2:
        words[i] = words[i] + "s" if not words[i].endswith("s") else words[i][:-1]
    elif how == 3:
        words.insert(i, "the")
    else:
        w = words[i]
        j = int(rng.integers(len(w))) if len(w) > 1 else 0
        words[i] = w[:j] + w[j + 1:] if len(w) > 3 else w + "e"
    return " ".join(words)


def _unrelated(text: str, span: str, rng: np.random.Generator) -> str:
    words = text.split()
    n = max(2, min(len(span.split()), 8))
    start = int(rng.integers(max(1, len(words) - n)))
    return " ".join(words[start:start + n])


def write_paraphrase_predictions(path: Path, seed: int = 0, p_copy: float = 0.3,
                                 p_paraphrase: float = 0.45) -> dict[tuple[str, str, str], str]:
    """Write the predictions to `path`; return the truth {(doc, type, unordered span pair as 'a\\x00b' sorted):
    label} for every generated pair (any other pair is a no-match unless its spans are identical)."""
    rng = np.random.default_rng(seed)
    truth: dict[tuple[str, str, str], str] = {}
    lines = []
    for doc in load_gold(str(GOLD)):
        relations: dict[str, list] = {}
        for rel in doc.gold:
            out: dict[str, list[str]] = {}
            for etype, span in rel.entities:
                r = rng.random()
                pred = span if r < p_copy else (_paraphrase(span, rng) if r < p_copy + p_paraphrase
                                                else _unrelated(doc.text, span, rng))
                out.setdefault(etype, []).append(pred)
                truth[(doc.paper_id, etype, pair_key(pred, span))] = "match" if r < p_copy + p_paraphrase \
                    else "no-match"
            relations.setdefault(rel.type, []).append(out)
        lines.append(json.dumps({"paper_id": doc.paper_id, "relations": relations}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return truth


def pair_key(a: str, b: str) -> str:
    return "\x00".join(sorted((a, b)))


def true_label(truth: dict, doc: str, etype: str, left: str, right: str) -> str:
    """The careful human's label of a span pair."""
    if left == right:
        return "match"
    return truth.get((doc, etype, pair_key(left, right)), "no-match")
