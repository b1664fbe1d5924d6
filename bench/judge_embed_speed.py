"""Speed of the offline `embed` judge: spans embedded per second (moved here from tests/judges/test_embed_judge.py,
where a wall-time bound failed on a loaded machine).

    python bench/judge_embed_speed.py [--queries 2500]

Prints the wall time of one `ask_many` over N distinct span pairs (2N spans) with a fresh judge (no span cache),
and spans per second. The development machine (2 shared cores) took about 0.2 s for 5,000 spans.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scoring.families.chimera.questions import SpanQuery  # noqa: E402
from scoring.judges.embed import EmbedJudge  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=2500)
    args = ap.parse_args()
    EmbedJudge(0.75)  # load the model once, outside the timing
    judge = EmbedJudge(0.75)
    queries = [SpanQuery("d", "text", "comb-element", f"method {i} for low-resource neural machine translation",
                         f"baseline {i} with data augmentation") for i in range(args.queries)]
    t0 = time.perf_counter()
    answers = judge.ask_many(queries)
    wall = time.perf_counter() - t0
    assert len(answers) == len(queries)
    print(json.dumps({"queries": len(queries), "spans": 2 * len(queries), "wall_s": round(wall, 3),
                      "spans_per_s": round(2 * len(queries) / wall)}))


if __name__ == "__main__":
    main()
