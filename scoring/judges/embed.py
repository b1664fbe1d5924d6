"""`embed[:T]`: an offline semantic judge, cosine similarity of span embeddings.

Imported by `scoring.judges.registry` on the first `embed` spec (`embed_from_spec`). The model is WordLlama's
`l2_supercat` 256-d static token embeddings, whose weights and tokenizer ship inside the `wordllama` wheel
(install `wordllama==0.4.0.post1`; it needs no torch). It is loaded from the package folder with downloads
disabled, so it never touches the network or a model hub.
"""

from __future__ import annotations

import hashlib
import logging
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from scoring.errors import JudgeSpecError
from scoring.judges.answer import NO, YES, Answer
from scoring.judges.local import comparable_pair, normalise_words
from scoring.judges.question import Question
from scoring.judges.transport import AnswerCallback, LocalJudge, Progress

DEFAULT_EMBED_THRESHOLD = 0.9
"""Chosen by `bench/embed_agreement.py` (best Cohen's kappa against data/chimera/judge_mixed.jsonl); see EmbedJudge."""
MODEL_CONFIG = "l2_supercat"
MODEL_DIM = 256
WORDLLAMA_PIN = "wordllama==0.4.0.post1"
SCORE_DECIMALS = 6
"""Cosines are rounded before comparing, so a span's self-similarity is exactly 1 and float noise in the last
bits cannot flip an answer."""
EMBED_BATCH = 1024


@dataclass(frozen=True)
class _Model:
    inference: Any
    """`wordllama.WordLlamaInference`."""
    version: str
    weights_file: str
    weights_sha256: str
    dim: int


_model: _Model | None = None
_model_lock = threading.Lock()


def _import_wordllama() -> Any:
    """Import wordllama without letting it configure the root logger (it calls `logging.basicConfig(INFO)`)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama
    except ImportError as e:
        raise JudgeSpecError(f"the embed judge needs the wordllama package: pip install {WORDLLAMA_PIN} "
                             f"({e})") from None
    finally:
        for h in root.handlers[:]:
            if h not in handlers:
                root.removeHandler(h)
        root.setLevel(level)
    return wordllama


def load_model() -> _Model:
    """The bundled WordLlama model, loaded once per process from the package folder (never downloaded).

    Raises:
        JudgeSpecError: wordllama is not installed or its wheel lacks the bundled weights.
    """
    global _model
    with _model_lock:
        if _model is None:
            wordllama = _import_wordllama()
            pkg_dir = Path(wordllama.__file__).parent
            wl = wordllama.WordLlama
            try:
                uri = getattr(wl._wordllama, MODEL_CONFIG)
                weights = wl.resolve_file(MODEL_CONFIG, uri, MODEL_DIM, False, "weights", cache_dir=pkg_dir,
                                          disable_download=True)
                inference = wl.load(MODEL_CONFIG, cache_dir=pkg_dir, dim=MODEL_DIM, disable_download=True)
            except (FileNotFoundError, AttributeError, ValueError) as e:
                raise JudgeSpecError(f"cannot load the bundled wordllama model {MODEL_CONFIG}_{MODEL_DIM} "
                                     f"offline (install {WORDLLAMA_PIN}): {e}") from None
            digest = hashlib.sha256(Path(weights).read_bytes()).hexdigest()
            _model = _Model(inference, wordllama.__version__, Path(weights).name, digest,
                            int(inference.embedding.shape[1]))
        return _model


class EmbedJudge(LocalJudge):
    """`embed[:T]`: yes iff the cosine similarity of the two spans' embeddings is at least T (default 0.9).

    A span is normalised as the `exact` judge does (case-folded, whitespace collapsed: the model is case-sensitive
    and an all-caps copy of a span scores only about 0.25), then embedded as the mean of its WordLlama
    `l2_supercat` token vectors (256-d, `WordLlamaInference.embed`). So `exact` yes implies cosine 1, i.e. embed yes
    at every T. Only the two spans are compared: the text and the entity type are ignored and the answer is
    symmetric. `Answer.score` is the cosine rounded to 6 decimals; a span without tokens has cosine 0 with anything.
    Embeddings are cached in memory per normalised span string for the judge's lifetime.

    Default T = 0.9, chosen by `bench/embed_agreement.py`: over T = 0.50..0.95 (step 0.05) on the 290 distinct
    ordered pairs of data/chimera/judge_mixed.jsonl (spans from the abstracts of data/chimera/eval.csv, yes/no from
    an LLM judge), 0.9 and 0.95 tie for the best Cohen's kappa against the LLM's answers (0.332; ties go to the
    lower T). The evidence is weak: kappa only ranges 0.322-0.332 over all T, because the log's agreement with any
    string judge comes from pairs of identical spans, and on the other pairs the cosine carries no signal about
    the log's answers (ROC AUC below 0.5). At 0.9 the judge equals `exact` on that log; lower T (0.6: kappa 0.330)
    accepts more paraphrases. Re-run the bench on a better reference log before relying on the default.
    """

    def __init__(self, threshold: float = DEFAULT_EMBED_THRESHOLD) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not math.isfinite(threshold) \
                or not 0 <= threshold <= 1:
            raise JudgeSpecError(f"embed threshold must be a cosine between 0 and 1, got {threshold!r}")
        self.threshold = float(threshold)
        self.spec = f"embed:{self.threshold:g}"
        self._model = load_model()
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def identity(self) -> dict:
        m = self._model
        return {"spec": self.spec, "model": f"wordllama/{MODEL_CONFIG}", "model_version": f"wordllama {m.version}",
                "weights": m.weights_file, "weights_sha256": m.weights_sha256, "dim": m.dim,
                "pooling": "mean of token embeddings", "similarity": "cosine", "threshold": self.threshold}

    @staticmethod
    def normalise(span: str) -> str:
        """What is embedded: the span case-folded, its whitespace collapsed (the `exact` judge's normalisation)."""
        return " ".join(normalise_words(span))

    def embed(self, spans: Sequence[str]) -> np.ndarray:
        """Unit-length embeddings of the normalised spans (float64, one row per span; a zero row for a span
        without tokens). Computed in one batch for the spans not yet cached."""
        keys = [self.normalise(s) for s in spans]
        with self._lock:
            new = list(dict.fromkeys(k for k in keys if k not in self._vectors))
            if new:
                raw = np.asarray(self._model.inference.embed(new, batch_size=EMBED_BATCH), dtype=np.float64)
                norms = np.linalg.norm(raw, axis=1, keepdims=True)
                unit = np.divide(raw, norms, out=np.zeros_like(raw), where=norms > 0)
                for k, v in zip(new, unit, strict=True):
                    v.flags.writeable = False
                    self._vectors[k] = v
            if not keys:
                return np.zeros((0, self._model.dim))
            return np.stack([self._vectors[k] for k in keys])

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Rounded cosine similarity of each (span1, span2)."""
        if not pairs:
            return []
        distinct = list(dict.fromkeys(s for p in pairs for s in p))
        index = {s: i for i, s in enumerate(distinct)}
        vecs = self.embed(distinct)
        a = vecs[[index[p[0]] for p in pairs]]
        b = vecs[[index[p[1]] for p in pairs]]
        cos = np.clip(np.einsum("ij,ij->i", a, b), -1.0, 1.0)
        return [round(float(c), SCORE_DECIMALS) + 0.0 for c in cos]

    def _answer(self, cos: float) -> Answer:
        return Answer(YES if cos >= self.threshold else NO, score=cos,
                      rationale=f"cosine {cos:.2f} vs threshold {self.threshold:g}")

    def answer(self, query: Question) -> Answer:
        return self.ask_many([query])[0]

    def ask_many(self, queries: Sequence[Question], progress: Progress | None = None,
                 on_answer: AnswerCallback | None = None) -> list[Answer]:  # noqa: ARG002 (one batch)
        """Embed every distinct span in one batch, then compare: thousands of queries per second."""
        sims = self.similarities([comparable_pair(self, q) for q in queries])
        out = [self._answer(c) for c in sims]
        if progress and queries:
            progress(len(queries), len(queries))
        return out


def embed_from_spec(arg: str, *_context: object) -> EmbedJudge:
    """The `embed[:T]` factory: no argument means `DEFAULT_EMBED_THRESHOLD`."""
    arg = arg.strip()
    if not arg:
        return EmbedJudge(DEFAULT_EMBED_THRESHOLD)
    try:
        threshold = float(arg)
    except ValueError:
        raise JudgeSpecError(f"embed threshold must be a number, got {arg!r}") from None
    return EmbedJudge(threshold)

