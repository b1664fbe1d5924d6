"""The `few-shot` and `rules` strategies for LLM judges of yes/no pair decisions (CHIMERA's span pairs), and the
judge they make: the run's LLM asked the family's own prompt with reviewed examples put before it (few-shot) or the
reviewers' notes, distilled into instructions by the judge model itself, appended to it (rules).

Fitting reads only the fitting items: few-shot keeps them as the example pool (which examples a question sees is
chosen when it is asked, from that pool alone); rules sends the notes of the overruled ones to the model and keeps
its reply. Both models are JSON (so "the same judge" means the same JSON) and carry everything a prompt is built
from, so the improved judge can be rebuilt from a result file (`ImprovedJudge`).

A question's prompt gains a new template (the family's template text plus this strategy's scaffold, and for rules
the rules text): a new prompt hash, and the cache keys of the new prompts are new, so answers are cached like any
other. The question key is the family's (a replay log of the improved judge reads like the original's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from scoring.improve.crossfit import Item, Model
from scoring.improve.preflight import DEFAULT_K
from scoring.judges.answer import NO, YES, Answer
from scoring.judges.prompts import Parsed, PromptTemplate
from scoring.judges.question import Question
from scoring.judges.transport import AnswerCallback, Judge, Progress

POOL_FACTOR = 2
"""Overruled ones first among the POOL_FACTOR * k most similar examples."""
MAX_NOTES = 15
"""Notes sent to the model to distil (the first by decision id): a small model's context holds about this many."""
MAX_NOTE_CHARS = 200
FEW_SHOT_HEAD = ("Examples: expert reviewers already settled these pairs of spans from other abstracts (the answer "
                 "to each is theirs):\n{EXAMPLES}\n\nNow the task.\n\n")
RULES_HEAD = "\n\n8. Reviewers of earlier answers add these instructions; follow them:\n"
DISTIL_PROMPT = """An automatic judge decides whether two spans extracted from a scientific abstract discuss the \
same idea. Human reviewers overruled some of its answers and wrote why. Write at most 6 short, general \
instructions, one per line starting with "- ", that would have made the judge answer as the reviewers did. Do not \
name the spans below; write rules that apply to any pair.

Overruled answers:
{NOTES}

Instructions:"""


def _answer_of(label: str, positive: str) -> str:
    return YES if label == positive else NO


def pair_text(f: Mapping) -> str:
    return f"{f['type']}: “{f['left']}” / “{f['right']}”"


# ------------------------------------------------------------------ few-shot


def fit_few_shot(items: Sequence[Item], *, k: int = DEFAULT_K) -> Model:
    """The example pool: every fitting item with its human label and whether the human overruled the judge,
    sorted by decision id. Nothing else is read (the labels of held-out documents cannot reach it)."""
    return {"strategy": "few-shot", "k": k, "examples": [
        {"decision": i.decision, "doc": i.doc, "type": i.features["type"], "left": i.features["left"],
         "right": i.features["right"], "label": i.human, "overruled": i.human != i.judge}
        for i in sorted(items, key=lambda i: i.decision)]}


Embed = Callable[[Sequence[str]], np.ndarray]
"""Unit-length embeddings of texts, one row each (the embed judge's WordLlama)."""


def pair_vectors(embed: Embed, pairs: Sequence[Mapping]) -> np.ndarray:
    """One unit vector per pair: the normalised sum of its two spans' embeddings (so the order does not matter)."""
    if not pairs:
        return np.zeros((0, 1))
    left = embed([p["left"] for p in pairs])
    right = embed([p["right"] for p in pairs])
    v = left + right
    n = np.linalg.norm(v, axis=1, keepdims=True)
    return np.divide(v, n, out=np.zeros_like(v), where=n > 0)


def choose_examples(model: Model, question: Mapping, embed: Embed, vectors: np.ndarray) -> list[dict]:
    """The k examples a question sees: never one of its own document; among the POOL_FACTOR * k most similar
    (cosine of `pair_vectors`, ties by decision id), overruled ones first, then by similarity. `vectors`: the
    `pair_vectors` of every example of the model, made once by the caller (each row is its pair's alone)."""
    keep = [j for j, e in enumerate(model["examples"]) if e["doc"] != question["doc"]]
    if not keep:
        return []
    pool = [model["examples"][j] for j in keep]
    sims = vectors[keep] @ pair_vectors(embed, [question])[0]
    ranked = sorted(range(len(pool)), key=lambda j: (-round(float(sims[j]), 6), pool[j]["decision"]))
    near = ranked[:POOL_FACTOR * model["k"]]
    picked = sorted(near, key=lambda j: (not pool[j]["overruled"], -round(float(sims[j]), 6), pool[j]["decision"]))
    return [pool[j] for j in picked[:model["k"]]]


def examples_text(examples: Sequence[Mapping], positive: str) -> str:
    return "\n".join(f"- {pair_text(e)} → {_answer_of(e['label'], positive)}" for e in examples)


# ------------------------------------------------------------------ rules


def notes_of(items: Sequence[Item]) -> list[dict]:
    """The overruled fitting items that carry a note, as the distillation sees them (first MAX_NOTES by id)."""
    out = [{"decision": i.decision, "type": i.features["type"], "left": i.features["left"],
            "right": i.features["right"], "judge": i.judge, "human": i.human,
            "note": " ".join(str(i.features.get("note") or "").split())[:MAX_NOTE_CHARS]}
           for i in sorted(items, key=lambda i: i.decision) if i.human != i.judge and i.features.get("note")]
    return out[:MAX_NOTES]


def distil_prompt(notes: Sequence[Mapping]) -> str:
    lines = "\n".join(f"{n + 1}. {pair_text(x)}: the judge said {x['judge']}, the reviewers said {x['human']}. "
                      f"Note: {x['note']}" for n, x in enumerate(notes))
    return DISTIL_PROMPT.replace("{NOTES}", lines)


def clean_rules(reply: str) -> str:
    """The instruction lines of the model's reply (lines starting with "- ", at most 6); the reply stripped when
    it has none."""
    lines = [ln.strip() for ln in reply.splitlines() if ln.strip().startswith(("- ", "* "))]
    return "\n".join("- " + ln[2:].strip() for ln in lines[:6]) if lines else reply.strip()


Distil = Callable[[str], str]
"""Prompt -> the model's reply (asked through the answer cache)."""


def fit_rules(items: Sequence[Item], distil: Distil) -> Model:
    """The rules the model distils from the fitting items' notes on overruled decisions; no such note: no rules
    (the judge stays the original)."""
    notes = notes_of(items)
    rules = clean_rules(distil(distil_prompt(notes))) if notes else ""
    return {"strategy": "rules", "rules": rules, "from_notes": [n["decision"] for n in notes], "edited": False}


# ------------------------------------------------------------------ the improved question and judge


@dataclass(frozen=True)
class Augmented:
    """A family question with text added before (`head`) or after (`tail`) its prompt. Its template is the
    family's with the strategy's `scaffold` added (a new hash); its key, answers and parser are the family's."""

    inner: Any
    name: str
    scaffold: str
    head: str = ""
    tail: str = ""
    structured_inner: Any = field(default=None, compare=False)

    @property
    def key(self) -> tuple[str, ...]:
        return self.inner.key

    @property
    def answers(self) -> tuple[str, ...]:
        return self.inner.answers

    @property
    def pair(self) -> None:
        return None  # only an LLM answers it: a comparator would ignore the added text

    @property
    def template(self) -> PromptTemplate | None:
        t = self.inner.template
        if t is None:
            return None
        return PromptTemplate(f"{t.name}+{self.name}", t.text + "\n" + self.scaffold, t.answers)

    @property
    def schema(self) -> Mapping | None:
        return self.inner.schema

    def structured(self) -> Augmented | None:
        s = self.inner.structured()
        return None if s is None else replace(self, inner=s)

    def prompt(self) -> str | None:
        p = self.inner.prompt()
        return None if p is None else self.head + p + self.tail

    def parse(self, raw: str | None, *, truncated: bool = False) -> Parsed:
        return self.inner.parse(raw, truncated=truncated)


def rules_tail(rules: str) -> str:
    return RULES_HEAD + rules if rules.strip() else ""


class ImprovedJudge(Judge):
    """An LLM judge asked with a few-shot or rules model: every question goes out `Augmented`. A rules model
    without rules asks the original prompt. Caching, cost and identity are the inner judge's, with the
    improvement recorded (`identity()["improved"]`)."""

    def __init__(self, inner: Judge, model: Model, *, positive: str, decision_of: Callable[[Question], dict],
                 embed: Embed | None = None) -> None:
        self.inner, self.model, self.positive = inner, model, positive
        self.decision_of, self.embed = decision_of, embed
        self.spec = inner.spec
        self.cacheable, self.reports_each_answer = inner.cacheable, inner.reports_each_answer
        self.temperature = inner.temperature
        if model["strategy"] == "few-shot" and embed is None:
            raise ValueError("a few-shot judge needs an embedding model to choose its examples")
        self._template: PromptTemplate | None = None
        self._vectors: np.ndarray | None = None
        """The example pool's `pair_vectors`, made at the first question: every question compares itself with the
        same pool (a run of n questions embedded the pool n times, three times each: for its cache key, to ask
        it, and to record what was asked)."""

    def augment(self, q: Question) -> Question:
        m = self.model
        if m["strategy"] == "rules":
            if not m["rules"].strip():
                return q
            tail = rules_tail(m["rules"])
            return Augmented(q, "rules", tail, tail=tail)
        if self._vectors is None:
            self._vectors = pair_vectors(self.embed, m["examples"])  # type: ignore[arg-type]
        examples = choose_examples(m, self.decision_of(q), self.embed, self._vectors)  # type: ignore[arg-type]
        head = FEW_SHOT_HEAD.replace("{EXAMPLES}", examples_text(examples, self.positive))
        return Augmented(q, "few-shot", FEW_SHOT_HEAD, head=head)

    @property
    def fatal(self) -> str | None:  # type: ignore[override]
        return self.inner.fatal

    def identity(self) -> dict:
        """The inner judge's, with the improved prompt's name and hash (the family's kept as `base_prompt`) once
        bound, and the improvement."""
        out = self.inner.identity()
        t = self._template
        if t is not None and out.get("prompt_hash") != t.version:
            out = {k: v for k, v in out.items() if k != "prompts"} | {
                "prompt": t.name, "prompt_hash": t.version,
                "base_prompt": {"name": out.get("prompt"), "hash": out.get("prompt_hash")}}
        return out | {"improved": improvement_identity(self.model)}

    def bind(self, sample: Question) -> ImprovedJudge:
        """Name the improved prompt (its template as this judge's answer mode asks it) before asking."""
        q = self.augment(sample)
        form = getattr(self.inner, "form", None)
        self._template = (form(q) if form else q).template
        self.inner.bind(q)
        return self

    def cache_key(self, query: Question) -> str:
        return self.inner.cache_key(self.augment(query))

    def estimate_cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        return self.inner.estimate_cost(prompt_tokens, completion_tokens)

    def ask_many(self, queries: Sequence[Question], progress: Progress | None = None,
                 on_answer: AnswerCallback | None = None) -> list[Answer]:
        return self.inner.ask_many([self.augment(q) for q in queries], progress, on_answer=on_answer)


def improvement_identity(model: Model) -> dict:
    """What identifies an improved LLM judge besides its model and prompt: the strategy, and the rules text or
    the example pool (decision ids and labels) and k."""
    from scoring.judges.prompts import template_hash

    if model["strategy"] == "rules":
        return {"strategy": "rules", "rules": model["rules"], "rules_hash": template_hash(model["rules"]),
                "edited": bool(model.get("edited"))}
    pool = [[e["decision"], e["label"]] for e in model["examples"]]
    return {"strategy": "few-shot", "k": model["k"], "examples": len(pool),
            "examples_hash": template_hash(repr(pool))}
