"""Agreement statistics speed: group_stats on 5,000 synthetic decisions with 2,000 bootstrap resamples.

    python bench/agreement_speed.py       # prints seconds (goal: < 2 s on this 2-core machine)
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scoring.stats.agreement import group_stats  # noqa: E402


def rows(n: int = 5000, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        kind = "idea" if i % 2 else "pair"
        labels = ["1", "2", "3", "4", "5"] if kind == "idea" else ["match", "no-match"]
        out.append({"kind": kind, "type": f"t{i % 3}", "doc": f"d{i % 500}", "human": rng.choice(labels),
                    "judge": rng.choice(labels)})
    return out


if __name__ == "__main__":
    data = rows()
    start = time.perf_counter()
    group_stats(data, ordinal_kinds=("idea",), n_resamples=2000)
    print(f"group_stats on {len(data)} decisions, 2,000 resamples: {time.perf_counter() - start:.2f} s")
