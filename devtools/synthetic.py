"""A seeded synthetic clustered run (tests and bench of the partial audit): blocks with judge and human counts.

Documents have an error propensity (judge errors cluster by document); each document has one block per type.
Strata come from judge-side information only: `split` (the block holds a split-order answer), `match` (the judge
matched something), `none`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TYPES = ("a", "b")


@dataclass(frozen=True)
class Population:
    blocks: list[str]
    stratum: dict[str, str]
    judge: dict[str, dict[str, dict[str, int]]]
    human: dict[str, dict[str, dict[str, int]]]


def clustered_population(n_docs: int = 150, seed: int = 7) -> Population:
    rng = np.random.default_rng(seed)
    blocks, stratum, judge, human = [], {}, {}, {}
    for d in range(n_docs):
        propensity = rng.beta(1.2, 6.0)
        for t in TYPES:
            b = f"d{d}|{t}"
            p, g = 1 + rng.poisson(1.5), 1 + rng.poisson(1.5)
            tp = int(rng.binomial(min(p, g), 0.5))
            split = rng.random() < 0.25
            missed = int(rng.binomial(min(p, g) - tp, min(1.0, propensity * (3.0 if split else 1.0))))
            wrong = int(rng.binomial(tp, propensity * 0.6))
            tp_h = tp + missed - wrong
            blocks.append(b)
            stratum[b] = "split" if split else ("match" if tp > 0 else "none")
            judge[b] = {t: {"tp": tp, "fp": p - tp, "fn": g - tp}}
            human[b] = {t: {"tp": tp_h, "fp": p - tp_h, "fn": g - tp_h}}
    return Population(blocks, stratum, judge, human)
