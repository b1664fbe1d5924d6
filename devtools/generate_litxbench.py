"""Generate a LitXBench run of N papers from the bundled 19 (`data/litxbench/`), for benchmarks at scale (#38).

Paper k is a seeded draw (with replacement) of a bundled paper `orig`, written as `f"{orig}-{k}"`: its gold file,
its text and one of the bundled predictions of it (`pred_drop_meas30` or `pred_process_perturb`, seeded), byte
for byte. Every copy is thus a real gold / prediction pair, with the bundled runs' mix of matches and misses.
Same N and seed -> same files, byte for byte.

    python bench/generate.py N OUTDIR --family litxbench [--seed S]
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "litxbench"
VARIANTS = ("pred_drop_meas30", "pred_process_perturb")


def generate_litxbench(n: int, outdir: str | Path, seed: int = 0) -> dict[str, int]:
    """Write OUTDIR/gold, OUTDIR/pred and OUTDIR/papers with N papers; {variant: papers} of the predictions."""
    if n < 1:
        raise ValueError("n must be at least 1")
    out = Path(outdir)
    folders = {name: out / name for name in ("gold", "pred", "papers")}
    for f in folders.values():
        if f.exists():
            shutil.rmtree(f)
        f.mkdir(parents=True)
    papers = sorted(p.stem for p in (DATA / "gold").glob("*.json"))
    rng = random.Random(seed)
    width = len(str(n - 1))
    kinds = dict.fromkeys(VARIANTS, 0)
    for k in range(n):
        orig, variant = rng.choice(papers), rng.choice(VARIANTS)
        kinds[variant] += 1
        new = f"{orig}-{k:0{width}d}"
        shutil.copyfile(DATA / "gold" / f"{orig}.json", folders["gold"] / f"{new}.json")
        shutil.copyfile(DATA / variant / f"{orig}.json", folders["pred"] / f"{new}.json")
        shutil.copyfile(DATA / "papers" / f"{orig}.md", folders["papers"] / f"{new}.md")
    return kinds
