"""LitXBench speed: our full scoring of the 19 bundled papers (load + decide + counts + metrics) and the time from
one review to audited metrics (re-solving one paper). Run on demand: `python -m bench.litxbench_speed`.

Not yet here: the official `litxbench` 0.1.3 timing on the same files. The package has no JSON loader (litx-json v1
is a re-encoding of its Python objects), so timing it needs a JSON -> litxbench-objects adapter run in a Python 3.12
venv built under /tmp; the reference files' own `compare_seconds_total` (official compare only, excluding loading
and the hallucination check) are printed instead for scale.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from scoring.families.base import add_nested, sum_nested
from scoring.families.litxbench import review
from scoring.families.litxbench.family import LitXBenchTask
from scoring.families.litxbench.model import MATCH, NO_MATCH

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "litxbench"
FIX = ROOT / "tests" / "fixtures" / "litxbench"


def main() -> None:
    task = LitXBenchTask()
    for variant in ("drop_meas30", "process_perturb"):
        review._DOCS.clear()
        t0 = time.perf_counter()
        loaded = task.load({"gold": str(DATA / "gold"), "pred": str(DATA / f"pred_{variant}"),
                            "text": str(DATA / "papers")})
        decisions, _ = task.decide(loaded, task.make_judge("official"), None, None)
        by_doc: dict[str, dict] = {}
        for d in decisions:
            by_doc.setdefault(d.doc, {})[(d.kind, d.type, d.left, d.right)] = d.judge
        parts = [task.counts(doc, by_doc.get(doc["paper_id"], {})) for doc in loaded.docs]
        metrics = task.metrics(sum_nested(parts))
        ours = time.perf_counter() - t0
        ref = json.loads((FIX / f"expected_{variant}.json").read_text())["overall"]
        print(f"{variant}: ours {ours:.2f} s for 19 papers ({len(decisions)} decisions), overall F1 "
              f"{metrics['multi_level']['overall_f1']:.4f}; official compare_seconds_total "
              f"{ref['compare_seconds_total']:.2f} s (compare only)")
        times = []
        for doc, part in zip(loaded.docs, parts, strict=True):
            labels = by_doc.get(doc["paper_id"], {})
            key = next((k for k, v in labels.items() if k[0] == "item_pair" and v == MATCH), None)
            if key is None:
                continue
            new = {**labels, key: NO_MATCH}
            t = time.perf_counter()
            task.redecide(doc, new)
            counts = task.counts(doc, new)
            total = add_nested(add_nested(json.loads(json.dumps(sum_nested(parts))), part, -1), counts)
            task.metrics(total)
            times.append(time.perf_counter() - t)
        print(f"  one review -> audited metrics: median {statistics.median(times) * 1000:.1f} ms, "
              f"max {max(times) * 1000:.1f} ms over {len(times)} papers (goal <= 50 ms)")


if __name__ == "__main__":
    main()
