"""CHIMERA boards on one gold: several systems' predictions for the same abstracts and one judge log that answers
every question any of them asks, the same answer for the same question in every run (one judge).

Gold: `n` abstracts of the bundled `data/chimera/eval.csv`, drawn with the seed. System k copies the gold
relation with probability `quality[k]` and otherwise perturbs it as `bench/generate.py` does (`perturb`), so the
systems differ in score and share the questions of the abstracts they both get right or wrong alike. The judge
answers an unordered span pair as `bench/generate.py` does (equal strings: yes; else yes in both orders 15%, one
order 10%), seeded by the question itself, so runs that ask the same question get the same answer.

    python devtools/board_inputs.py OUTDIR [--n 120] [--seed 0]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from devtools.generate import ENTITY_TYPES, P_BOTH_YES, P_ONE_ORDER, SOURCE, _flat, _norm_relations, perturb  # noqa: E402

QUALITY = {"sys-a": 0.7, "sys-b": 0.5, "sys-c": 0.3}
"""Share of abstracts each system gets exactly right (the rest perturbed)."""


def _answers(seed: int, pid: str, t: str, pv: str, gv: str) -> tuple[str, str]:
    """(answer for (pv, gv), answer for (gv, pv)), seeded by the unordered question."""
    if pv.casefold().split() == gv.casefold().split():
        return "yes", "yes"
    lo, hi = sorted((pv, gv))
    rng = random.Random(hashlib.blake2b(json.dumps([seed, pid, t, lo, hi]).encode(), digest_size=8).digest())
    r = rng.random()
    if r < P_BOTH_YES:
        return "yes", "yes"
    if r < P_BOTH_YES + P_ONE_ORDER:
        first = "yes" if rng.random() < 0.5 else "no"
        ans = {lo: first, hi: "no" if first == "yes" else "yes"}  # answer keyed by the first span asked
        return ans[pv], ans[gv]
    return "no", "no"


def write_board_inputs(outdir: str | Path, n: int = 120, *, seed: int = 0, quality: dict[str, float] | None = None,
                       recombinations: str | None = None) -> dict[str, dict[str, str]]:
    """Write gold.csv, one `pred-<system>.jsonl` per system and judge.jsonl into `outdir`; the score_run inputs
    of each system (`{"gold", "pred"}`) and the judge spec under `"judge"`. `recombinations`: only abstracts
    with a gold recombination (`any`), or one of that relation type (`combination`): nearly every one then holds
    questions, a denser board (and `combination` has none of the inspiration strata CHIMERA's plan reviews whole)."""
    quality = quality or QUALITY
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    csv.field_size_limit(64 * 1024 * 1024)
    with SOURCE.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        fields = list(reader.fieldnames or [])
        rows = list(reader)
    if recombinations is not None:
        rows = [r for r in rows if (recombinations == "any" and _norm_relations(json.loads(r["readable_relations"]
                                                                                          or "{}")))
                or set(_norm_relations(json.loads(r["readable_relations"] or "{}"))) == {recombinations}]
    rng = random.Random(seed)
    # n distinct abstracts when there are enough, else drawn with replacement and renamed `<paper_id>-<k>` (as
    # bench/generate.py does): a copy is another document with its own gold key
    chosen = (rng.sample(rows, n) if n <= len(rows) else
              [r | {"paper_id": f"{r['paper_id']}-{k}"} for k, r in enumerate(rng.choices(rows, k=n))])
    with (out / "gold.csv").open("w", encoding="utf-8", newline="") as gf:
        w = csv.DictWriter(gf, fieldnames=fields)
        w.writeheader()
        w.writerows(chosen)
    answers: dict[tuple[str, str, str, str], str] = {}
    for k, (system, q) in enumerate(quality.items()):
        srng = random.Random(seed * 1000 + k + 1)
        with (out / f"pred-{system}.jsonl").open("w", encoding="utf-8") as pf:
            for src in chosen:
                pid = src["paper_id"]
                gold = _norm_relations(json.loads(src["readable_relations"] or "{}"))
                pred = json.loads(json.dumps(gold)) if srng.random() < q else perturb(srng, gold, src["text"])[1]
                pf.write(json.dumps({"paper_id": pid, "relations": pred}, ensure_ascii=False) + "\n")
                p, g = _flat(pred), _flat(gold)
                for t in ENTITY_TYPES:
                    for pv in p[t]:
                        for gv in g[t]:
                            a, b = _answers(seed, pid, t, pv, gv)
                            answers[(pid, t, pv, gv)] = a
                            answers[(pid, t, gv, pv)] = b
    with (out / "judge.jsonl").open("w", encoding="utf-8") as lf:
        for (pid, t, s1, s2), ans in answers.items():
            lf.write(json.dumps({"paper_id": pid, "entity_type": t, "span1": s1, "span2": s2, "answer": ans},
                                ensure_ascii=False) + "\n")
    spec = f"replay:{out / 'judge.jsonl'}"
    return {s: {"gold": str(out / "gold.csv"), "pred": str(out / f"pred-{s}.jsonl"), "judge": spec}
            for s in quality}


def score_board_runs(db, inputs: dict[str, dict[str, str]], systems: Sequence[str] | None = None) -> list[str]:
    """Score each system's run into `db` (run name = system name); the names."""
    from audit.runs import score_run

    names = []
    for s in systems or list(inputs):
        i = inputs[s]
        score_run(db, "chimera", {"gold": i["gold"], "pred": i["pred"]}, i["judge"], run=s)
        names.append(s)
    return names


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--n", type=int, default=120)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    for s, i in write_board_inputs(a.outdir, a.n, seed=a.seed).items():
        print(s, i["pred"])


if __name__ == "__main__":
    main()
