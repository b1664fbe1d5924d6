"""The offline `embed[:T]` judge (scoring/embed_judge.py): WordLlama's bundled weights, no network, no torch."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from scoring.errors import JudgeSpecError
from scoring.families.chimera.questions import SpanQuery
from scoring.judges import embed as embed_judge
from scoring.judges.answer import NO, YES
from scoring.judges.embed import DEFAULT_EMBED_THRESHOLD, EmbedJudge
from scoring.judges.registry import parse_judge_spec

ROOT = Path(__file__).resolve().parents[2]


def q(span1: str, span2: str, doc: str = "d1", etype: str = "comb-element") -> SpanQuery:
    return SpanQuery(doc, "some abstract text", etype, span1, span2)


@pytest.fixture(scope="module")
def judge() -> EmbedJudge:
    return EmbedJudge(0.75)


def cos(j: EmbedJudge, a: str, b: str) -> float:
    return j.similarities([(a, b)])[0]


def test_paraphrase_closer_than_unrelated(judge: EmbedJudge) -> None:
    para = cos(judge, "back-translation", "back translation method")
    for unrelated in ("graph neural network", "ultrasound haptic feedback", "Wasserstein distance"):
        assert para > cos(judge, "back-translation", unrelated) + 0.2
        assert para > cos(judge, "back translation method", unrelated) + 0.2
    assert cos(judge, "self-supervised learning", "self supervised learning approach") > \
        cos(judge, "self-supervised learning", "robotic actuation")


def test_answer_is_yes_iff_cosine_reaches_threshold(judge: EmbedJudge) -> None:
    queries = [q("back-translation", "back translation method"), q("back-translation", "graph neural network"),
               q("contrast halo", "luminance halo"), q("robotic actuation", "robotic actuation")]
    answers = judge.ask_many(queries)
    for a in answers:
        assert a.value == (YES if a.score >= 0.75 else NO)
        assert a.rationale == f"cosine {a.score:.2f} vs threshold 0.75"
        assert re.fullmatch(r"cosine -?\d\.\d\d vs threshold 0\.75", a.rationale)
        assert not a.cached and a.raw is None
    assert answers[1].value == NO and answers[3].value == YES and answers[3].score == 1.0


def test_exact_yes_implies_embed_yes() -> None:
    """Spans are normalised like the exact judge (case, whitespace), so exact-equal spans score exactly 1."""
    strict = EmbedJudge(1.0)
    for a, b in (("KNOWLEDGE TRANSFER", "knowledge transfer"), ("Behavior  Trees ", "behavior trees")):
        [ans] = strict.ask_many([q(a, b)])
        assert ans.score == 1.0 and ans.value == YES


def test_symmetric_and_ignores_text_and_type(judge: EmbedJudge) -> None:
    a = judge.ask_many([q("pseudo-labeling", "label filtering")])[0]
    b = judge.ask_many([SpanQuery("other", "other text", "inspiration-src", "label filtering", "pseudo-labeling")])[0]
    assert a == b


def test_empty_span_has_cosine_zero(judge: EmbedJudge) -> None:
    [a, b] = judge.ask_many([q("", "knowledge transfer"), q("", "")])
    assert a.score == 0.0 and b.score == 0.0 and a.value == NO


def test_deterministic_across_batches_and_instances(judge: EmbedJudge) -> None:
    queries = [q(f"span {i} about machine translation", "back translation method") for i in range(50)]
    queries += [q("contrast halo", "luminance halo"), q("a saliency-based superpixel algorithm",
                                                        "a superpixel-based saliency estimator")]
    first = judge.ask_many(queries)
    assert judge.ask_many(queries) == first
    fresh = EmbedJudge(0.75)
    assert [fresh.answer(x) for x in reversed(queries)] == list(reversed(first))


def test_ask_many_embeds_each_distinct_span_once(judge: EmbedJudge) -> None:
    calls: list[list[str]] = []
    inner = judge._model.inference

    class Spy:
        def embed(self, texts: list[str], **kw: object) -> object:
            calls.append(list(texts))
            return inner.embed(texts, **kw)

    j = EmbedJudge(0.75)
    j._model = dataclasses.replace(j._model, inference=Spy())
    progress: list[tuple[int, int]] = []
    queries = [q("alpha method", "beta method"), q("beta method", "alpha method"), q("ALPHA  method", "gamma")]
    answers = j.ask_many(queries, progress=lambda done, total: progress.append((done, total)))
    assert len(answers) == 3 and progress[-1] == (3, 3)
    assert calls == [["alpha method", "beta method", "gamma"]]
    j.ask_many(queries[:2])
    assert len(calls) == 1  # all cached
    assert j.ask_many([]) == []


def test_thousands_of_queries_in_one_call() -> None:
    # the speed (spans per second) is measured in bench/judge_embed_speed.py, not asserted here
    j = EmbedJudge(0.75)
    queries = [q(f"method {i} for low-resource neural machine translation", f"baseline {i} with data augmentation")
               for i in range(2500)] + [q("same span", "same span")]
    answers = j.ask_many(queries)
    assert len(answers) == 2501
    assert all((a.value == YES) == (a.score >= 0.75) and -1 <= a.score <= 1 for a in answers)
    assert answers[-1].value == YES and answers[-1].score == 1.0


def test_spec_parsing() -> None:
    default = parse_judge_spec("embed")
    assert isinstance(default, EmbedJudge)
    assert default.threshold == DEFAULT_EMBED_THRESHOLD and default.spec == f"embed:{DEFAULT_EMBED_THRESHOLD:g}"
    j = parse_judge_spec(" embed:0.75 ")
    assert isinstance(j, EmbedJudge) and j.threshold == 0.75 and j.spec == "embed:0.75"
    assert parse_judge_spec("embed:1").threshold == 1.0
    assert parse_judge_spec(j.spec).identity() == j.identity()  # the spec round-trips
    assert not j.cacheable


@pytest.mark.parametrize("spec", ["embed:abc", "embed:1.5", "embed:-0.1", "embed:nan", "embed:inf", "embed:0.7x"])
def test_bad_threshold_raises_spec_error(spec: str) -> None:
    with pytest.raises(JudgeSpecError, match="embed threshold"):
        parse_judge_spec(spec)


def test_bad_threshold_in_constructor() -> None:
    for bad in (1.01, -1.0, float("nan"), True, "0.5"):
        with pytest.raises(JudgeSpecError):
            EmbedJudge(bad)  # type: ignore[arg-type]


def test_identity_fields(judge: EmbedJudge) -> None:
    import wordllama

    ident = judge.identity()
    assert ident["spec"] == "embed:0.75" and ident["threshold"] == 0.75
    assert ident["model"] == "wordllama/l2_supercat"
    assert ident["model_version"] == f"wordllama {wordllama.__version__}"
    assert ident["dim"] == 256 and ident["weights"] == "l2_supercat_256.safetensors"
    assert re.fullmatch(r"[0-9a-f]{64}", ident["weights_sha256"])
    assert ident["similarity"] == "cosine"


def test_missing_wordllama_is_a_spec_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed_judge, "_model", None)
    monkeypatch.setitem(sys.modules, "wordllama", None)  # makes `import wordllama` raise ImportError
    with pytest.raises(JudgeSpecError, match="pip install wordllama"):
        EmbedJudge(0.8)


OFFLINE_SCRIPT = textwrap.dedent("""
    import logging, socket, sys

    def no_network(*args, **kwargs):
        raise OSError("network disabled in this test")

    socket.socket.connect = no_network
    socket.create_connection = no_network
    socket.getaddrinfo = no_network

    from pathlib import Path
    from scoring.families.chimera.questions import SpanQuery
    from scoring.judges.registry import parse_judge_spec
    from scoring.judges import embed as embed_judge

    judge = parse_judge_spec("embed:0.6")
    [a] = judge.ask_many([SpanQuery("d", "t", "comb-element", "back-translation", "back translation method")])
    import wordllama
    pkg = Path(wordllama.__file__).parent
    weights = pkg / "weights" / embed_judge.load_model().weights_file
    assert weights.is_file(), weights
    root = logging.getLogger()
    print(a.value, a.score, "torch" in sys.modules, len(root.handlers), root.level, sep="|")
""")


def test_loads_offline_from_package_folder(tmp_path: Path) -> None:
    """HF_HUB_OFFLINE=1, sockets disabled and an empty HOME (no ~/.cache/wordllama): the bundled weights load."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE", "WORDLLAMA"))}
    env.update(HF_HUB_OFFLINE="1", HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"),
               PYTHONPATH=str(ROOT), no_proxy="*")
    proc = subprocess.run([sys.executable, "-c", OFFLINE_SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    value, score, torch_loaded, handlers, level = proc.stdout.strip().splitlines()[-1].split("|")
    assert value == YES and 0.6 <= float(score) < 1.0
    assert torch_loaded == "False"
    assert (handlers, level) == ("0", "30"), "importing the judge must not configure the root logger"
    assert not (tmp_path / ".cache").exists()
