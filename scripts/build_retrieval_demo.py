"""Build the retrieval demo run: a zero-shot WordLlama ranking over CHIMERA's annotated recombination entities.

No ranking output of the paper's systems is public, so this builds a real, reproducible one from the expert
annotations of the recombination-extraction data (CHIMERA-KB `data/recombination_extraction_data.zip`):

- knowledge base = every entity span of train.csv and eval.csv (exact strings, deduplicated; ids `e0000`.. in
  sorted order of the strings);
- queries = the relations of eval.csv, as the paper's `build_eval_dataset` turns edges into queries: a combination
  of elements e1..ek gives one query per ordered pair (anchor ei, answer ej), an inspiration relation one query
  (anchor = the inspiration target, the thing designed; answer = the inspiration source);
- candidates = the filtered setting (chimera.md §5.2): the whole knowledge base minus the anchor and minus every
  other known answer of the same anchor and relation type anywhere in train + eval, plus the gold;
- score = cosine similarity (rounded to 6 decimals, as the `embed` judge does) between the WordLlama embedding of the
  query string (the paper's mpnet template without its background: "Contribution: Combine '<anchor>' and " /
  "Contribution: '<anchor>' inspired by ") and each candidate, both case-folded with whitespace collapsed;
  ranked by score descending, ties by candidate id; the top 100 are written, plus the gold when it ranks lower,
  with `n_candidates` and the gold's tie block (`gold_block`) over the full pool.
- context = the abstract, shown to reviewers but NOT embedded: it contains the gold span verbatim.

Usage: python3 scripts/build_retrieval_demo.py [--source DIR] [--out PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from audit.output_paths import OutputRule  # noqa: E402
from scoring.judges.embed import SCORE_DECIMALS, load_model  # noqa: E402

DEFAULT_SOURCE = Path("/work/shared/data/chimera")
DEFAULT_OUT = ROOT / "data" / "retrieval" / "demo_rankings.jsonl"
TOP_K = 100
NAMES = {"analogy": "inspiration", "blend": "combination", "analogy-src": "inspiration-src",
         "analogy-target": "inspiration-target"}
TEMPLATES = {"combination": "Contribution: Combine '{}' and ", "inspiration": "Contribution: '{}' inspired by "}


def normalise(text: str) -> str:
    return " ".join(text.casefold().split())


def read_relations(path: Path) -> list[tuple[str, str, str, dict[str, list[str]]]]:
    """(paper_id, abstract, relation type, {entity type: spans}) per annotated relation, names normalised."""
    out = []
    for row in pd.read_csv(path, dtype=str, keep_default_na=False).itertuples():
        for rtype, rels in json.loads(row.readable_relations).items():
            for rel in rels:
                out.append((row.paper_id, row.text, NAMES.get(rtype, rtype),
                            {NAMES.get(k, k): list(v) for k, v in rel.items()}))
    return out


def pairs(rtype: str, ents: dict[str, list[str]]) -> list[tuple[int, str, int, str]]:
    """(anchor index, anchor, answer index, answer) for one relation, as the paper's tail/head queries."""
    if rtype == "combination":
        els = ents["comb-element"]
        return [(i, els[i], j, els[j]) for i, j in itertools.permutations(range(len(els)), 2)]
    return [(i, t, j, s) for i, t in enumerate(ents["inspiration-target"])
            for j, s in enumerate(ents["inspiration-src"])]


def unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)


Scorer = Callable[[list[str], list[str], list[str]], np.ndarray]
"""(query strings, anchors, knowledge-base texts) -> scores, one row per query, one column per text (higher is
better; rounded, so equal scores are real ties)."""


def wordllama_scores(qtext: list[str], anchors: list[str], texts: list[str]) -> np.ndarray:  # noqa: ARG001
    """Cosine similarity of WordLlama embeddings of the query string and each text (both normalised)."""
    model = load_model().inference
    kb = unit(np.asarray(model.embed([normalise(t) for t in texts]), dtype=np.float64))
    qv = unit(np.asarray(model.embed([normalise(t) for t in qtext]), dtype=np.float64))
    return np.round(np.clip(qv @ kb.T, -1.0, 1.0), SCORE_DECIMALS) + 0.0


def build(source: Path, scorer: Scorer = wordllama_scores) -> tuple[list[dict], dict]:
    train, evalr = read_relations(source / "train.csv"), read_relations(source / "eval.csv")
    texts = sorted({s for _, _, _, ents in train + evalr for spans in ents.values() for s in spans})
    ids = {t: f"e{i:04d}" for i, t in enumerate(texts)}
    known: dict[tuple[str, str], set[str]] = defaultdict(set)
    for _, _, rtype, ents in train + evalr:
        for _, anchor, _, answer in pairs(rtype, ents):
            known[(rtype, anchor)].add(answer)

    queries = [(pid, abstract, rtype, ai, anchor, gi, gold)
               for pid, abstract, rtype, ents in evalr for ai, anchor, gi, gold in pairs(rtype, ents)]
    qtext = [TEMPLATES[rtype].format(anchor) for _, _, rtype, _, anchor, _, _ in queries]
    sims = scorer(qtext, [q[4] for q in queries], texts)

    lines, pool_sizes = [], []
    for n, (pid, abstract, rtype, ai, anchor, gi, gold) in enumerate(queries):
        excluded = (known[(rtype, anchor)] - {gold}) | {anchor}
        pool = [i for i, t in enumerate(texts) if t not in excluded]
        pool.sort(key=lambda i: (-sims[n, i], i))  # ids follow the sorted texts, so index order = id order
        gold_i = texts.index(gold)
        rank = pool.index(gold_i) + 1
        gold_score = sims[n, gold_i]
        tied = [r for r, i in enumerate(pool, 1) if sims[n, i] == gold_score]
        kept = pool[:TOP_K] + ([gold_i] if rank > TOP_K else [])
        pool_sizes.append(len(pool))
        lines.append({
            "id": f"{pid}/{rtype}/{ai}-{gi}", "query": qtext[n], "context": abstract, "anchor_id": ids[anchor],
            "anchor_text": anchor, "relation": rtype, "positive": gold, "positive_id": ids[gold],
            "candidates": [ids[texts[i]] for i in kept], "candidates_text": [texts[i] for i in kept],
            "scores": [float(sims[n, i]) for i in kept], "positive_index": rank - 1, "n_candidates": len(pool),
            "gold_block": [tied[0], tied[-1]],
        })
    info = {"knowledge_base": len(texts), "queries": len(lines),
            "by_relation": {r: sum(x["relation"] == r for x in lines) for r in TEMPLATES},
            "pool_min": min(pool_sizes), "pool_max": max(pool_sizes)}
    return lines, info


def main(scorer: Scorer = wordllama_scores, out: Path = DEFAULT_OUT, doc: str | None = None) -> None:
    """Build and write the rankings of `scorer` (the command line of this script and of its BM25 sibling)."""
    ap = argparse.ArgumentParser(description=(doc or __doc__).splitlines()[0])
    ap.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="folder with CHIMERA train.csv and eval.csv")
    ap.add_argument("--out", type=Path, default=out)
    args = ap.parse_args()
    lines, info = build(args.source, scorer)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    # the bundled file is rebuilt in place (force), whole, never over the CHIMERA files it is built from
    rule = OutputRule(inputs=(args.source / "train.csv", args.source / "eval.csv"), force=True)
    rule.write(args.out, "".join(json.dumps(rec, ensure_ascii=False) + "\n" for rec in lines))
    info["inputs_sha256"] = {n: hashlib.sha256((args.source / n).read_bytes()).hexdigest()
                             for n in ("train.csv", "eval.csv")}
    info["output_sha256"] = hashlib.sha256(args.out.read_bytes()).hexdigest()
    info["output_bytes"] = args.out.stat().st_size
    print(json.dumps(info, indent=2))


if __name__ == "__main__":
    main()
