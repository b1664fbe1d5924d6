"""How well does the offline `embed:T` judge agree with the reference LLM judge log, and with `exact` / `fuzzy`?

For each threshold T in 0.50..0.95 (step 0.05) it answers every distinct ordered span pair of the judge log
(data/chimera/judge_mixed.jsonl, pairs of spans from the abstracts in data/chimera/eval.csv) and prints raw
agreement and Cohen's kappa of embed:T against the log's yes/no answers, against `exact` and against `fuzzy`
(default threshold). Pairs whose log answer is not yes/no are left out. The T with the best kappa against the log
is the default of `scoring.judges.embed.EmbedJudge`.

    python bench/embed_agreement.py [--log PATH] [--gold PATH] [--non-identical] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sklearn.metrics import cohen_kappa_score, roc_auc_score  # noqa: E402

from scoring.families.chimera.questions import SpanQuery, read_log_line  # noqa: E402
from scoring.families.chimera.scorer import load_gold  # noqa: E402
from scoring.judges.answer import NO, YES  # noqa: E402
from scoring.judges.embed import DEFAULT_EMBED_THRESHOLD, EmbedJudge  # noqa: E402
from scoring.judges.local import ExactJudge, FuzzyJudge, normalise_words  # noqa: E402
from scoring.judges.replay import ReplayJudge  # noqa: E402

THRESHOLDS = [round(0.5 + 0.05 * i, 2) for i in range(10)]


def agreement(a: list[str], b: list[str]) -> tuple[float, float]:
    """(raw agreement, Cohen's kappa); kappa is nan when it is undefined (both raters constant and equal)."""
    raw = sum(x == y for x, y in zip(a, b, strict=True)) / len(a)
    if len(set(a) | set(b)) < 2:
        return raw, float("nan")
    return raw, float(cohen_kappa_score(a, b, labels=[YES, NO]))


def load_queries(log: Path, gold: Path, non_identical: bool) -> tuple[list[SpanQuery], list[str]]:
    texts = {d.paper_id: d.text for d in load_gold(gold)}
    replay = ReplayJudge(log, read_log_line)
    queries, answers = [], []
    for (doc, etype, s1, s2), ans in replay.answers.items():
        if ans.value not in (YES, NO) or (non_identical and s1 == s2):
            continue
        queries.append(SpanQuery(doc, texts.get(doc, ""), etype, s1, s2))
        answers.append(ans.value)
    return queries, answers


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log", type=Path, default=ROOT / "data/chimera/judge_mixed.jsonl")
    ap.add_argument("--gold", type=Path, default=ROOT / "data/chimera/eval.csv")
    ap.add_argument("--non-identical", action="store_true", help="leave out pairs whose two spans are identical")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON lines")
    args = ap.parse_args(argv)

    queries, log_answers = load_queries(args.log, args.gold, args.non_identical)
    if not queries:
        print("no yes/no pairs in the log", file=sys.stderr)
        return 1
    exact = [a.value for a in ExactJudge().ask_many(queries)]
    fuzzy_judge = FuzzyJudge()
    fuzzy = [a.value for a in fuzzy_judge.ask_many(queries)]

    judge = EmbedJudge(DEFAULT_EMBED_THRESHOLD)
    t0 = time.perf_counter()
    judge.ask_many(queries)  # embeds every distinct span in one batch (timed); the thresholds reuse the cosines
    elapsed = time.perf_counter() - t0
    sims = judge.similarities([(q.span1, q.span2) for q in queries])

    n_yes = log_answers.count(YES)
    print(f"{len(queries)} distinct ordered pairs ({n_yes} yes / {len(queries) - n_yes} no in the log), "
          f"{sum(q.span1 == q.span2 for q in queries)} with identical spans; model {judge.identity()['model']} "
          f"({judge.identity()['model_version']}, {judge.identity()['dim']}-d); first ask_many {elapsed * 1000:.0f} ms")
    for name, other in (("exact", exact), (fuzzy_judge.spec, fuzzy)):
        raw, kappa = agreement(other, log_answers)
        print(f"baseline {name} vs log: agreement {raw:.3f}, kappa {kappa:.3f}")

    rows = []
    for t in THRESHOLDS:
        emb = [YES if s >= t else NO for s in sims]
        row = {"threshold": t, "embed_yes": emb.count(YES)}
        for name, other in (("log", log_answers), ("exact", exact), ("fuzzy", fuzzy)):
            row[f"agree_{name}"], row[f"kappa_{name}"] = agreement(emb, other)
        rows.append(row)

    if args.json:
        for row in rows:
            print(json.dumps(row))
    else:
        print()
        print("| T | embed yes | agree log | kappa log | agree exact | kappa exact | agree fuzzy | kappa fuzzy |")
        print("|---|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['threshold']:.2f} | {r['embed_yes']} | {r['agree_log']:.3f} | {r['kappa_log']:.3f} "
                  f"| {r['agree_exact']:.3f} | {r['kappa_exact']:.3f} | {r['agree_fuzzy']:.3f} "
                  f"| {r['kappa_fuzzy']:.3f} |")
    best = max(rows, key=lambda r: (round(r["kappa_log"], 6), -r["threshold"]))  # ties: the lower T
    print(f"\nbest kappa vs log: T = {best['threshold']:.2f} (kappa {best['kappa_log']:.3f}, "
          f"agreement {best['agree_log']:.3f}; ties go to the lower T); current default {DEFAULT_EMBED_THRESHOLD:g}")
    differ = [i for i, q in enumerate(queries) if normalise_words(q.span1) != normalise_words(q.span2)]
    labels = [log_answers[i] == YES for i in differ]
    if 0 < sum(labels) < len(labels):
        auc = roc_auc_score(labels, [sims[i] for i in differ])
        print(f"pairs whose spans differ after normalisation: {len(differ)}; ROC AUC of the cosine against the "
              f"log's yes = {auc:.3f} (0.5 = no signal)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
