"""`improve-judge --strategy few-shot | rules` against the REAL local model (SmolLM2-135M-Instruct on llama.cpp's
server, tests/llm/llama_server.py) on the bundled SmolLM2 run: the run is the replayed log (no request), reviewed
on its first 4 documents of at most 3 decisions (devtools/smollm2_review.py), and each strategy re-asks the
model with the improved prompts, cross-fitted over 2 document folds; then `score --judge improved:ID` asks the
improved judge on 1 document nobody reviewed (one is enough to show the improved prompts reach a new run; with
--no-fold-answers: the run holds the whole gold, so it shares the reviewed documents, and asking the fold judges too
would be 2 x 10 more requests of what tests/cli/test_improve_llm_estimate.py covers against a fake server).
Marked `llm`; skipped without the server.
Slow: about 20-23 requests per strategy (1-2 s each on an idle 2-core machine; 5-25 s at load 15-20 with 1 thread).
The size: REJUDGE_IMPROVE_DOCS (4), REJUDGE_IMPROVE_MAX_DECISIONS (3), REJUDGE_IMPROVE_FOLDS (2). With 6 documents the
few-shot test alone was the longest path of CI's browser phase (508 s of its 817 s beside the browser tests); 4 still
give both folds reviewed decisions of both labels (κ defined before and after).

Δκ is whatever the model gives; the test asserts the mechanics (every reviewed decision re-asked and read, the
result complete) and, with REJUDGE_IMPROVE_OUT=DIR, writes the result to DIR/<strategy>.json (the numbers in
docs/improve-judge.md and the bundled improved demo run come from there).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.llm.llama_server import LlamaServer, unavailable

pytestmark = pytest.mark.llm
_WHY = unavailable()
if _WHY:
    pytest.skip(_WHY, allow_module_level=True)

from audit.cli import main  # noqa: E402
from audit.outputs.improve_judge import improve_judge  # noqa: E402
from audit.runs import score_run  # noqa: E402
from audit.store.database import open_db  # noqa: E402
from audit.views import load_view  # noqa: E402
from devtools.smollm2_review import review_documents, small_documents  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data/chimera"
RUN = "demo-chimera-smollm2"
N_DOCS = int(os.environ.get("REJUDGE_IMPROVE_DOCS", "4"))
MAX_DECISIONS = int(os.environ.get("REJUDGE_IMPROVE_MAX_DECISIONS", "3"))
"""Documents with at most this many decisions (2: every question costs a request of 5-25 s on a loaded machine)."""
FOLDS = int(os.environ.get("REJUDGE_IMPROVE_FOLDS", "2"))


@pytest.fixture(scope="module")
def server() -> Iterator[LlamaServer]:
    with LlamaServer() as srv:
        yield srv


@pytest.mark.parametrize("strategy", ["few-shot", "rules"])
def test_improve_the_smollm2_judge_with_the_real_model(server: LlamaServer, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch, strategy: str) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    monkeypatch.setenv("REJUDGE_JUDGE_TIMEOUT", "600")
    db = open_db(tmp_path / "real.db")
    score_run(db, "chimera", {"gold": str(DATA / "eval.csv"), "pred": str(DATA / "pred_mixed.jsonl")},
              f"replay:{DATA / 'judge_smollm2_structured.jsonl'}", run=RUN)
    reviewed = review_documents(db, RUN, small_documents(db, RUN, N_DOCS, MAX_DECISIONS))
    r = improve_judge(db, RUN, strategy, folds=FOLDS, min_documents=min(N_DOCS, 20), seed=0)
    ev = r["evaluation"]
    assert ev["n_documents"] == N_DOCS and ev["n_decisions"] == len(reviewed)
    assert r["cost"]["requests"] > 0 and r["judge_after"]["spec"] == "openai-json:smollm2-135m"
    assert ev["kappa_before"] is not None and ev["delta_kappa"] is not None
    assert r["improved"] is (ev["delta_kappa_ci"] is not None and ev["delta_kappa_ci"][0] > 0)
    if strategy == "rules":
        assert r["judge_after"]["rules"].strip()  # the model wrote something from the notes
    # the improved judge is a judge like any other: `score` asks the real model with its prompts on one more document
    unseen = small_documents(db, RUN, N_DOCS + 1, MAX_DECISIONS)[N_DOCS:]
    assert len(unseen) == 1
    pred = tmp_path / "unseen.jsonl"
    pred.write_text("".join(line for line in (DATA / "pred_mixed.jsonl").read_text().splitlines(keepends=True)
                            if json.loads(line)["paper_id"] in unseen))
    sent = sum(server.status_counts().values())
    assert main(["--db", str(tmp_path / "real.db"), "score", "chimera", "--gold", str(DATA / "eval.csv"),
                 "--pred", str(pred), "--judge", f"improved:{r['stored_as']}", "--run", "improved-next",
                 "--no-fold-answers"]) == 0
    next_run = load_view(db, "improved-next")
    identity = next_run.row["judge_identity"]
    assert identity["improved"]["strategy"] == strategy
    assert identity["learnt_from"]["review_ids"] == r["judge_after"]["learnt_from"]["review_ids"]
    statuses = server.status_counts()
    assert sum(statuses.values()) > sent and set(statuses) == {200}
    assert next_run.row["summary"]["judge"]["missing"] == 0
    out = os.environ.get("REJUDGE_IMPROVE_OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / f"{strategy}.json").write_text(json.dumps(r, indent=1, ensure_ascii=False) + "\n")
    print(f"{strategy}: kappa {ev['kappa_before']:.3f} -> {ev['kappa_after']:.3f}, delta {ev['delta_kappa']:+.3f} "
          f"{ev['delta_kappa_ci']}, {r['cost']}")
