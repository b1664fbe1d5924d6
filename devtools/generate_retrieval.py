"""Generate a retrieval (CHIMERA recombination prediction) run of N ranked queries with the demo's rank distribution.

Each query is a copy of a query of the bundled demo (`data/retrieval/demo_rankings.jsonl`, 252 queries of 100+
candidates), drawn with replacement (seeded): copy k of query `orig` gets the id `f"{orig}#{k}"` and keeps its
candidates, scores, gold position and tie block, so the gold's rank, the ties and the number of reviewable
candidates (about 68 per query) follow the demo's. Same N and seed -> same file, byte for byte.

    python bench/generate.py N OUTDIR --family retrieval [--seed S]
"""

from __future__ import annotations

import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "data" / "retrieval" / "demo_rankings.jsonl"


def generate_retrieval(n: int, outdir: str | Path, seed: int = 0) -> dict:
    """Write rankings.jsonl (N queries) into OUTDIR; return summary figures."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    with SOURCE.open(encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    rng = random.Random(seed)
    tmp = out / ".rankings.tmp"
    candidates = 0
    with tmp.open("w", encoding="utf-8") as f:
        for k in range(n):
            src = rows[rng.randrange(len(rows))]
            candidates += len(src["candidates"])
            f.write(json.dumps(src | {"id": f"{src['id']}#{k}"}, ensure_ascii=False) + "\n")
    tmp.replace(out / "rankings.jsonl")
    return {"queries": n, "candidates": candidates, "dir": str(out)}
