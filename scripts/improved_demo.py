"""Write the bundled improved demo run from a real `improve-judge --strategy few-shot|rules` run on the SmolLM2 demo
run (tests/llm/test_improve_real.py with REJUDGE_IMPROVE_OUT=DIR): its database (whose answer cache holds every
answer the improved prompts got) and its result file.

    python scripts/improved_demo.py --db real.db --result DIR/rules.json --base-url http://127.0.0.1:PORT/v1

writes, in data/chimera/: `pred_smollm2_reviewed.jsonl` (the predictions of the reviewed documents),
`judge_smollm2_<strategy>.jsonl` (one line per question: the answer of the judge fitted WITHOUT the question's
document, i.e. the out-of-sample answers the evaluation compared), its `.meta.json`, and
`improve_smollm2_<strategy>.json` (the result, stored with the demo run so the Improve the judge page shows it
without a server). Reads the cache only: a question it lacks is an error, never a request.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from audit.outputs.improve_llm import Asker, decision_of
from audit.store.database import SqliteAnswerCache, open_db
from audit.views import load_view
from scoring.improve.llm import ImprovedJudge

DATA = Path(__file__).resolve().parent.parent / "data" / "chimera"
RUN = "demo-chimera-smollm2"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", required=True)
    p.add_argument("--result", required=True)
    p.add_argument("--base-url", required=True, help="the server the real run asked (the cache keys name it)")
    args = p.parse_args()
    os.environ["OPENAI_BASE_URL"] = args.base_url
    os.environ.setdefault("OPENAI_API_KEY", "sk-local")
    result = json.loads(Path(args.result).read_text(encoding="utf-8"))
    strategy = result["strategy"]
    db = open_db(args.db)
    view = load_view(db, RUN)
    task = view.task
    scheme = next(s for s in task.label_schemes.values() if s.scale == "binary")
    asker = Asker(db, view, result["judge_after"]["spec"])
    lines, hashes = [], {}
    for k, fold in enumerate(result["fold_judges"]):
        judge = ImprovedJudge(asker.judge(), fold["model"], positive=scheme.positive or "", decision_of=decision_of,
                              embed=asker.embed if strategy == "few-shot" else None)
        docs = set(fold["held_out_documents"])
        questions = [q for d in view.decisions() if d["doc"] in docs
                     for q in task.questions_for(asker.payload(d["doc"]), d)]
        judge.bind(questions[0])
        hashes[f"fold {k}"] = judge.identity()["prompt_hash"]
        cache = SqliteAnswerCache(db, judge.spec, judge.identity())
        keys = [judge.cache_key(q) for q in questions]
        found = cache.get_many(keys)
        missing = [q.key for q, key in zip(questions, keys, strict=True) if key not in found]
        if missing:
            raise SystemExit(f"{args.db}: no cached answer for {len(missing)} question(s), e.g. {missing[0]}")
        for q, key in zip(questions, keys, strict=True):
            if any(x["paper_id"] == q.key[0] and (x["entity_type"], x["span1"], x["span2"]) == q.key[1:]
                   for x in lines):
                continue  # a pair of two equal spans is one question in both orders
            a = found[key]
            lines.append({"paper_id": q.key[0], "entity_type": q.key[1], "span1": q.key[2], "span2": q.key[3],
                          "answer": a.value, "rationale": a.rationale, "fold": k})
    docs = sorted({d for f in result["folds"] for d in f})
    preds = [json.loads(x) for x in (DATA / "pred_mixed.jsonl").read_text(encoding="utf-8").splitlines()]
    (DATA / "pred_smollm2_reviewed.jsonl").write_text(
        "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in preds if x["paper_id"] in docs), encoding="utf-8")
    log = DATA / f"judge_smollm2_{strategy}.jsonl"
    log.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    base = json.loads((DATA / "judge_smollm2_structured.meta.json").read_text(encoding="utf-8"))
    ev = result["evaluation"]
    meta = {"what": f"SmolLM2-135M-Instruct improved by improve-judge --strategy {strategy} on the reviews of "
                    f"{len(docs)} documents of demo-chimera-smollm2; each document answered by the fold judge fitted "
                    "WITHOUT it (the out-of-sample answers the evaluation compared)",
            "judge_spec": result["judge_after"]["spec"], "model": base["model"],
            "prompt": f"chimera-span-comparison-json+{strategy}",
            "prompt_hash": "; ".join(f"{k}: {h}" for k, h in hashes.items()), "params": base["params"],
            "dialect": base["dialect"], "server": base["server"],
            "improvement": {"strategy": strategy, "seed": result["judge_after"]["learnt_from"]["seed"],
                            "folds": result["folds"], "kappa_before": ev["kappa_before"],
                            "kappa_after": ev["kappa_after"], "delta_kappa": ev["delta_kappa"],
                            "delta_kappa_ci": ev["delta_kappa_ci"], "improved": result["improved"],
                            "cost": result.get("cost")},
            "log_lines": len(lines), "made_by": "scripts/improved_demo.py from tests/llm/test_improve_real.py"}
    log.with_suffix(".meta.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    bundled = dict(result, bundled="measured against the real SmolLM2 server and bundled with the demo (no server "
                                   "needed to show it; the decision links of the run it came from are left out)")
    bundled["evaluation"] = dict(ev, disagreeing_before=[], disagreeing_after=[])
    (DATA / f"improve_smollm2_{strategy}.json").write_text(json.dumps(bundled, indent=1, ensure_ascii=False) + "\n",
                                                           encoding="utf-8")
    print(f"{log.name}: {len(lines)} answers from {len(result['fold_judges'])} fold judges; {len(docs)} documents")


if __name__ == "__main__":
    main()
