"""Judge stability checks (audit/outputs/stability.py, scoring/stats/stability.py): re-asking a seeded sample of a run's
questions against the scripted local server (devtools/judge_server.py) with a seeded non-deterministic answer rule,
so every expected flip is computed from the rule, independently of the code under test; and once against a real
llama.cpp server when one is available."""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter

import pytest

from audit.errors import AuditError
from audit.outputs.stability import list_checks, run_check, sample_decisions, stability_report, unstable_decisions
from audit.runs import score_run
from audit.store.database import open_db
from audit.views import as_view
from devtools.judge_server import NO_TEXT, YES_TEXT, JudgeServer, spans_of
from scoring.families.chimera.prompts import render_span_prompt
from scoring.stats.intervals import wilson_interval
from scoring.stats.stability import distribution, flipped, rates_by
from tests.conftest import GOLD, PRED_MIXED, ROOT

P_YES = 0.35
SEED = "stability-test-1"
RUN = "llm"


def coin(prompt: str, n: int) -> bool:
    """The seeded rule: the n-th ask (0 = the run's own) of a prompt says yes with probability P_YES."""
    h = hashlib.sha256(f"{SEED}|{n}|{prompt}".encode()).digest()
    return int.from_bytes(h[:8], "big") / 2**64 < P_YES


class SeededScript:
    """Equal spans: always Yes. Other CHIMERA prompts: `coin(prompt, n)` for the n-th time this prompt is asked;
    ideation prompts: a seeded score / winner. Keyed per prompt, so thread order does not matter."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()

    def __call__(self, prompt: str) -> str:
        n = self.seen[prompt]
        self.seen[prompt] += 1
        spans = spans_of(prompt)
        if spans is None:
            h = int(hashlib.sha256(f"{SEED}|{n}|{prompt}".encode()).hexdigest(), 16)
            if "WINNER:" in prompt:
                return f"Reasons.\nWINNER: {('FIRST', 'SECOND', 'TIE')[h % 3]}"
            return f"Reasons.\nSCORE: {1 + h % 5}"
        if spans[0].strip().casefold() == spans[1].strip().casefold():
            return YES_TEXT
        return YES_TEXT if coin(prompt, n) else NO_TEXT


@pytest.fixture
def server():
    with JudgeServer(SeededScript()) as srv:
        yield srv


@pytest.fixture
def env(monkeypatch, server):
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("REJUDGE_JUDGE_BACKOFF", "0")
    return server


@pytest.fixture
def scored(env, tmp_path):
    db = open_db(tmp_path / "s.db")
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, "openai:test-model", run=RUN)
    yield db
    db.conn.close()


def _texts(db) -> dict[str, str]:
    return {r[0]: json.loads(r[1])["text"] for r in db.execute("SELECT doc_id, payload FROM documents")}


def expected_label(text: str, d: dict, n: int) -> str:
    """The label the rule gives decision `d` on the n-th ask, from the paper's prompt (not from the code tested)."""
    answers = []
    for s1, s2 in ((d["left"], d["right"]), (d["right"], d["left"])):
        equal = s1.strip().casefold() == s2.strip().casefold()
        answers.append(equal or coin(render_span_prompt(d["type"], text, s1, s2), n))
    return "match" if all(answers) else "no-match"


# ---------------------------------------------------------------- pure statistics


def test_wilson_interval_matches_the_formula():
    z = 1.959963984540054
    for k, n in ((0, 10), (3, 10), (7, 7), (12, 50)):
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        lo, hi = wilson_interval(k, n)
        assert lo == pytest.approx(max(0.0, centre - half), abs=1e-9) and hi == pytest.approx(min(1.0, centre + half),
                                                                                              abs=1e-9)
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def test_flips_distributions_and_grouped_rates():
    assert flipped(["match", "match"]) is False and flipped(["match", "no-match"]) is True and not flipped(["x"])
    assert distribution(["b", "a", "b", "c", "a", "b"]) == {"b": 3, "a": 2, "c": 1}
    assert list(distribution(["b", "a"])) == ["a", "b"]
    rows = [{"t": "x", "f": True}, {"t": "x", "f": False}, {"t": "y", "f": True}, {"t": "y", "f": None}]
    r = rates_by(rows, "f", ("t",))
    assert (r["all"]["n"], r["all"]["flipped"]) == (3, 2) and r["all"]["rate"] == pytest.approx(2 / 3)
    assert r["by_t"]["x"]["rate"] == 0.5 and r["by_t"]["y"] == {"n": 1, "flipped": 1, "rate": 1.0,
                                                               "ci": list(wilson_interval(1, 1))}
    assert rates_by([], "f")["all"] == {"n": 0, "flipped": 0, "rate": None, "ci": None}


# ---------------------------------------------------------------- checks against the scripted server


def test_repeats_bypass_the_cache_store_every_answer_and_flip_as_the_rule_says(scored, env):
    db, srv = scored, env
    cache_rows = db.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0]
    before = srv.requests
    k, n = 4, 40
    check = run_check(db, RUN, repeats=k, temperature=0.8, sample=n, seed=5)
    chosen = sample_decisions(db, RUN, n, 5)
    distinct = {tuple(q.key) for _, qs in chosen for q in qs}
    assert check["decisions"] == n and check["questions"] == len(distinct) and check["missing"] == 0
    assert srv.requests - before == k * len(distinct)  # every question asked again, K times: no cache hit
    assert db.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0] == cache_rows  # and nothing cached
    assert {b["temperature"] for b in srv.bodies[-k * len(distinct):]} == {0.8}
    rows = db.execute("SELECT decision_id, attempt, COUNT(*) FROM stability_answers GROUP BY decision_id, attempt"
                      ).fetchall()
    assert len(rows) == n * k and {a for _, a, _ in rows} == set(range(1, k + 1)) and {c for *_, c in rows} == {2}

    rep = stability_report(db, RUN)
    texts = _texts(db)
    assert len(rep["decisions"]) == n
    flips = changed = 0
    for d in rep["decisions"]:
        want = [expected_label(texts[d["doc"]], d, i) for i in range(1, k + 1)]
        assert d["labels"] == {check["check"]: want}
        assert d["run_label"] == expected_label(texts[d["doc"]], d, 0)
        assert Counter(d["distribution"]) == Counter(want)
        assert d["flipped"] == (len(set(want)) > 1)
        assert d["changed_vs_run"] == any(x != d["run_label"] for x in want)
        flips += len(set(want)) > 1
        changed += any(x != d["run_label"] for x in want)
    assert 0 < flips < n  # the rule makes some, not all, decisions unstable
    overall = rep["flip_rate"]["all"]
    assert (overall["n"], overall["flipped"]) == (n, flips) and overall["ci"] == list(wilson_interval(flips, n))
    assert rep["changed_vs_run"]["all"]["flipped"] == changed
    for group in ("by_type", "by_run_label", "by_kind"):
        assert sum(g["n"] for g in rep["flip_rate"][group].values()) == n
        assert sum(g["flipped"] for g in rep["flip_rate"][group].values()) == flips
    assert rep["checks"][0]["flip_rate"]["flipped"] == flips
    unstable = unstable_decisions(db, RUN)
    assert unstable == sorted(d["id"] for d in rep["decisions"] if d["flipped"] or d["changed_vs_run"])
    assert unstable_decisions(db, RUN, include_changed=False) == sorted(d["id"] for d in rep["decisions"]
                                                                        if d["flipped"])


def test_a_second_judge_is_asked_the_same_sample_and_flips_count_across_versions(scored):
    db = scored
    a = run_check(db, RUN, repeats=1, sample=15, seed=9, name="llm once")
    b = run_check(db, RUN, repeats=1, judge_spec="exact", sample=15, seed=9)
    ids = lambda check: {r[0] for r in db.execute(  # noqa: E731
        "SELECT DISTINCT decision_id FROM stability_answers WHERE check_name = ?", [check])}
    assert ids(a["check"]) == ids(b["check"]) and len(ids(a["check"])) == 15
    assert ids(a["check"]) != {d["id"] for d, _ in sample_decisions(db, RUN, 15, 10)}  # another seed, another sample
    assert [c["name"] for c in list_checks(db, RUN)] == ["llm once", b["check"]]
    assert list_checks(db, RUN)[1]["params"]["deterministic"] is True
    single = stability_report(db, RUN, [b["check"]])
    assert all(d["flipped"] is None for d in single["decisions"])  # one attempt: nothing to flip yet
    both = stability_report(db, RUN, ["llm once", b["check"]])
    texts = _texts(db)
    for d in both["decisions"]:
        exact = "match" if d["left"].casefold().split() == d["right"].casefold().split() else "no-match"
        llm = expected_label(texts[d["doc"]], d, 1)
        assert d["labels"] == {"llm once": [llm], b["check"]: [exact]}
        assert d["flipped"] == (llm != exact)
    with pytest.raises(AuditError, match="already has a stability check"):
        run_check(db, RUN, repeats=1, sample=2, name="llm once")
    with pytest.raises(AuditError, match="no sampling temperature"):
        run_check(db, RUN, repeats=1, sample=2, judge_spec="exact", temperature=0.5)
    with pytest.raises(AuditError, match="no stability check"):
        stability_report(db, RUN, ["nope"])


def test_cli_runs_a_check_and_reports(scored, tmp_path, capsys):
    from audit.cli import main

    base = ["--db", str(tmp_path / "s.db"), "stability", "--run", RUN]
    assert main([*base, "--repeats", "2", "--sample", "6", "--seed", "3", "--temperature", "0.7"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["check"]["repeats"] == 2 and data["check"]["decisions"] == 6
    assert data["report"]["flip_rate"]["all"]["n"] == 6 and len(data["report"]["decisions"]) == 6
    assert main([*base, "--report"]) == 0
    assert json.loads(capsys.readouterr().out)["checks"][0]["name"] == data["check"]["check"]
    assert main([*base, "--judge", "exact", "--temperature", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "temperature" in err


def test_ideation_questions_are_re_asked_through_an_llm_judge(env, tmp_path):
    from audit.demo import DATA
    from scoring.families import TASKS

    db = open_db(tmp_path / "i.db")
    demo = TASKS["ideation"].demo_runs(DATA)[0]
    score_run(db, "ideation", demo.inputs, demo.judge, run="idea")
    with pytest.raises(AuditError, match="cannot be asked"):
        run_check(db, "idea", repeats=1, sample=3)  # its judge is the input files: nothing to re-ask
    check = run_check(db, "idea", repeats=3, judge_spec="openai:test-model", sample=12, seed=2)
    rep = stability_report(db, "idea", [check["check"]])
    kinds = {d["kind"] for d in rep["decisions"]}
    assert check["missing"] == check["invalid"] == 0 and kinds <= {"rating", "comparison"}
    for d in rep["decisions"]:
        labels = d["labels"][check["check"]]
        assert len(labels) == 3 and d["flipped"] == (len(set(labels)) > 1)
        if d["kind"] == "rating":  # one question: its answer is the label, comparable with the run's score
            assert set(labels) <= {"1", "2", "3", "4", "5"} and d["changed_vs_run"] is not None
        else:  # two orders, no label rule in the family: flips of the answer pattern, not comparable with the run
            assert all("|" in x for x in labels) and d["changed_vs_run"] is None
    db.conn.close()


def test_families_without_an_llm_judge_have_nothing_to_check(tmp_path):
    from audit.demo import DATA
    from scoring.families import TASKS

    db = open_db(tmp_path / "r.db")
    demo = TASKS["retrieval"].demo_runs(DATA)[0]
    score_run(db, "retrieval", demo.inputs, demo.judge, run="ret")
    with pytest.raises(AuditError, match="nothing to check"):
        run_check(db, "ret", repeats=1)
    assert unstable_decisions(db, "ret") == []
    db.conn.close()


# ---------------------------------------------------------------- a real llama.cpp server (when available)

LOCAL_SCRIPT = ROOT / "scripts" / "local_judge_server.sh"


@pytest.mark.llm
def test_real_llama_cpp_server_at_temperature_above_zero(tmp_path):
    """SmolLM2-135M behind llama-cpp-python's server (tests/llm/llama_server.py starts the server that
    scripts/local_judge_server.sh documents), one decision's two span orders asked twice at temperature 0.8
    (max 200 tokens: a 135M model on 2 shared cores takes seconds per answer). Marked `llm`."""
    if not LOCAL_SCRIPT.exists():
        pytest.skip(f"{LOCAL_SCRIPT.relative_to(ROOT)} is not there (another helper adds it): no real server")
    try:
        from tests.llm.llama_server import MODEL_ALIAS, LlamaServer, unavailable
    except ImportError as e:
        pytest.skip(f"tests/llm/llama_server.py is not importable: {e}")
    why = unavailable()
    if why:
        pytest.skip(why)
    db = open_db(tmp_path / "l.db")
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, "exact", run="base")
    from scoring.judges.registry import JudgeOptions

    with LlamaServer() as srv:
        options = JudgeOptions(base_url=srv.base_url, api_key="no-key", concurrency=1)
        check = run_check(db, "base", repeats=2, temperature=0.8, judge_spec=f"openai:{MODEL_ALIAS}",
                          judge_options=options, sample=1, seed=0)
    rep = stability_report(db, "base", [check["check"]])
    assert check["temperature"] == 0.8 and check["missing"] == 0
    assert check["answers"] == 2 * check["questions"] and check["questions"] in (1, 2)
    assert len(rep["decisions"]) == 1 and rep["flip_rate"]["all"]["n"] == 1
    stored = db.execute("SELECT COUNT(*), COUNT(DISTINCT attempt) FROM stability_answers").fetchone()
    assert stored == (4, 2)  # two questions (span orders) per attempt, stored even when they are one prompt
    assert sum(sum(d.values()) for d in rep["decisions"][0]["answers"].values()) == 4
    db.conn.close()


# ---------------------------------------------------------------- failed checks store nothing (issue 28)


def _stored_answers(db) -> int:
    return db.execute("SELECT COUNT(*) FROM stability_answers").fetchone()[0]


def test_a_check_whose_every_request_fails_exits_2_and_stores_nothing(scored, tmp_path, capsys, monkeypatch):
    from audit.cli import main

    with JudgeServer(always_status=500) as dead:
        monkeypatch.setenv("OPENAI_BASE_URL", dead.base_url)
        code = main(["--db", str(tmp_path / "s.db"), "stability", "--run", RUN, "--repeats", "2", "--sample", "5"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error:") and err.count("\n") == 1 and "nothing was stored" in err
    assert _stored_answers(scored) == 0 and list_checks(scored, RUN) == []


@pytest.mark.parametrize("temperature", ["nan", "inf", "-1"])
def test_a_temperature_that_is_not_a_finite_number_is_refused_up_front(scored, env, tmp_path, capsys, temperature):
    from audit.cli import main

    before = env.requests
    code = main(["--db", str(tmp_path / "s.db"), "stability", "--run", RUN, "--temperature", temperature])
    err = capsys.readouterr().err
    assert code == 2 and "temperature" in err and env.requests == before and _stored_answers(scored) == 0


def test_a_server_dying_during_a_check_stores_no_check(scored, monkeypatch):
    with JudgeServer(die_after=4) as dying:
        monkeypatch.setenv("OPENAI_BASE_URL", dying.base_url)
        monkeypatch.delenv("REJUDGE_JUDGE_BACKOFF")
        with pytest.raises(Exception, match="stopped answering") as err:
            run_check(scored, RUN, repeats=3, sample=10)
    assert "nothing was stored" in str(err.value) and _stored_answers(scored) == 0


# ---------------------------------------------------------------- in the dashboard and the export


def test_stability_results_are_in_the_json_export(scored):
    from audit.outputs.export import export_json

    assert export_json(scored, RUN, with_agreement=False)["stability"] is None
    run_check(scored, RUN, repeats=3, temperature=0.7, sample=20, seed=2)
    block = export_json(scored, RUN, with_agreement=False)["stability"]
    report = stability_report(scored, RUN)
    assert block["flip_rate"] == json.loads(json.dumps(report["flip_rate"]))
    assert block["decisions"] == 20 and len(block["checks"]) == 1
    ids = [d["id"] for d in block["unstable_decisions"]]
    assert ids == unstable_decisions(scored, RUN)
    rate = block["flip_rate"]["all"]
    assert rate["flipped"] == sum(bool(d["flipped"]) for d in report["decisions"])
    assert rate["ci"] == pytest.approx(list(wilson_interval(rate["flipped"], rate["n"])))


def test_the_overview_shows_flip_rates_with_intervals_and_links_the_unstable_decisions(scored, tmp_path,
                                                                                        monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tests.app.conftest import open_page

    run_check(scored, RUN, repeats=3, temperature=0.7, sample=20, seed=2)
    report = stability_report(scored, RUN)
    monkeypatch.setenv("REJUDGE_DB", str(tmp_path / "s.db"))
    monkeypatch.chdir(ROOT)
    from audit.demo import SEEDED

    scored.execute("INSERT INTO settings (key, value, updated) VALUES (?, '1', '')", [SEEDED])  # no demo runs
    scored.conn.commit()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at = open_page(at, "overview", run=RUN)
    assert not at.exception
    expanders = [e.label for e in at.expander if e.label.startswith("Judge stability")]
    flips = report["flip_rate"]["all"]
    assert expanders and f"flip rate {100 * flips['rate']:.1f}% of {flips['n']} decisions" in expanders[0]
    rates = next(d.value for d in at.dataframe if "95% interval" in d.value.columns)
    overall = rates[rates["group"] == "all"].iloc[0]
    lo, hi = flips["ci"]
    assert overall["decisions"] == flips["n"] and overall["95% interval"] == f"{100 * lo:.1f}% – {100 * hi:.1f}%"
    assert set(rates["group"]) >= {"all", "type", "run's judge label"}
    unstable = unstable_decisions(scored, RUN)
    if unstable:
        table = next(d.value for d in at.dataframe if "open" in d.value.columns and "flipped" in d.value.columns)
        numbers = as_view(scored, RUN).decision_numbers(unstable)  # the number the card shows, in table and link
        assert table["decision"].tolist() == [numbers[i] for i in unstable]
        assert all(f"decision_no={numbers[i]}" in link for i, link in zip(unstable, table["open"], strict=True))
