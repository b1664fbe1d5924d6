"""The shipped real-judge log (data/chimera/judge_smollm2_structured.jsonl, made by scripts/real_judge_demo.py
against a live SmolLM2-135M server) replays to exactly what its metadata recorded from the live run."""

from __future__ import annotations

import json
from pathlib import Path

from sklearn.metrics import cohen_kappa_score

from audit.runs import score_run
from audit.store.database import open_db
from audit.views import decisions
from scoring.families.chimera.prompts import CHIMERA_SPAN_JSON_PROMPT_HASH, parse_span_json

DATA = Path(__file__).resolve().parents[2] / "data/chimera"
LOG = DATA / "judge_smollm2_structured.jsonl"
META = json.loads((DATA / "judge_smollm2_structured.meta.json").read_text(encoding="utf-8"))
INPUTS = {"gold": str(DATA / "eval.csv"), "pred": str(DATA / "pred_mixed.jsonl")}


def test_the_log_records_its_judge_and_every_answer() -> None:
    lines = [json.loads(x) for x in LOG.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == META["log_lines"] == META["judge_stats"]["requests"]  # one line per ordered pair asked
    counts: dict[str, int] = {}
    for r in lines:
        counts[r["answer"]] = counts.get(r["answer"], 0) + 1
    assert META["judge_spec"] == "openai-json:smollm2-135m" and META["prompt_hash"] == CHIMERA_SPAN_JSON_PROMPT_HASH
    assert META["params"] == {"temperature": 0.0, "max_tokens": 400, "answer_mode": "json",
                              "response_format": "json_object"}
    assert counts.get("invalid", 0) == META["judge_stats"]["invalid"]
    for r in lines:  # an unreadable reply is still unreadable with the current parser
        if r["answer"] == "invalid":
            assert parse_span_json(r["raw"]).value == "invalid"
    assert all(r["answer"] in ("yes", "no", "invalid") for r in lines)


def test_replaying_the_log_gives_the_live_runs_metrics_and_agreement(tmp_path: Path) -> None:
    db = open_db(tmp_path / "demo.db")
    row = score_run(db, "chimera", INPUTS, f"replay:{LOG}", run="smollm2")
    score_run(db, "chimera", INPUTS, "exact", run="exact")
    stats = row["summary"]["judge"]
    assert stats["missing"] == 0 and stats["invalid"] == META["judge_stats"]["invalid"]
    assert {s: row["original_metrics"][s]["avg"]["f1"] for s in META["metrics"]} == META["metrics"]
    src = row["judge_identity"]["source"]  # the replayed run still names the model and prompt
    assert src["judge_spec"] == META["judge_spec"] and src["prompt_hash"] == META["prompt_hash"]
    mine = {(d["doc"], d["type"], d["left"], d["right"]): d["judge"] for d in decisions(db, "smollm2")}
    exact = {(d["doc"], d["type"], d["left"], d["right"]): d["judge"] for d in decisions(db, "exact")}
    both = [k for k in mine if mine[k] != "invalid" and exact[k] != "invalid"]
    kappa = cohen_kappa_score([mine[k] for k in both], [exact[k] for k in both])
    assert len(both) == META["agreement_with_exact"]["compared"]
    assert kappa == META["agreement_with_exact"]["kappa"]
