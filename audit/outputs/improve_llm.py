"""The `few-shot` and `rules` strategies on a stored run (`scoring.improve.llm` is the pure part): which LLM to ask,
the reviewed items with what the strategy reads (the pair, the reviewers' note), and the fit and apply functions
`improve_judge` cross-fits. Every request goes through the database's answer cache (`SqliteAnswerCache`), so a
re-run asks nothing twice and a changed prompt never reuses an old answer; requests and tokens are counted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from sqlite_utils import Database

from audit.errors import AuditError
from audit.outputs.review_sets import reviews_in
from audit.store.database import SqliteAnswerCache
from audit.views import RunView
from scoring.errors import JudgeFailed, JudgeSpecError
from scoring.families.base import LabelScheme
from scoring.improve.crossfit import Item, Model
from scoring.improve.llm import DEFAULT_K, ImprovedJudge, fit_few_shot, fit_rules
from scoring.judges.answer import JudgeStats
from scoring.judges.asking import ask_with_cache
from scoring.judges.prompts import Parsed, PromptTemplate
from scoring.judges.question import PromptQuestion, Question
from scoring.judges.transport import Judge

LLM_PREFIXES = ("openai:", "openai-json:")
DISTIL_TEMPLATE = PromptTemplate("improve-rules-distillation", "{PROMPT}", ("rules",))


def llm_spec(row: Mapping) -> str | None:
    """The LLM judge spec a run's answers came from: its own spec, or for a replayed log the spec its metadata
    names (`identity.source.judge_spec`); None when no LLM answered."""
    spec = row["judge_spec"] or ""
    if spec.startswith(LLM_PREFIXES):
        return spec
    source = (row.get("judge_identity") or {}).get("source") or {}
    named = source.get("judge_spec") if isinstance(source, dict) else None
    return named if isinstance(named, str) and named.startswith(LLM_PREFIXES) else None


def llm_applicability(view: RunView, strategy: str) -> str | None:
    """Why `few-shot` / `rules` does not apply to this run (one line), or None."""
    spec = llm_spec(view.row)
    if spec is None:
        return (f"{strategy}: applies to LLM judges (openai:MODEL, openai-json:MODEL, or a replayed log whose "
                f"metadata names one); this run's judge is {view.row['judge_spec']}")
    binary = [k for k, s in view.task.label_schemes.items() if s.scale == "binary" and s.positive is not None]
    if len(binary) != 1 or not view.task.label_schemes[binary[0]].symmetric:
        return (f"{strategy}: built for families whose decision is one symmetric yes/no question asked in both orders; "
                f"not {view.task.name}")
    return None


@dataclass
class Asker:
    """The run's LLM (reached as `$OPENAI_BASE_URL` / `$OPENAI_API_KEY` say), the answer cache and the cost."""

    db: Database
    view: RunView
    spec: str
    stats: JudgeStats = field(default_factory=JudgeStats)
    embedder: Callable | None = None
    _payloads: dict = field(default_factory=dict)

    def judge(self, spec: str | None = None) -> Judge:
        try:
            return self.view.task.make_judge(spec or self.spec)
        except JudgeSpecError as e:
            raise AuditError(f"{self.spec}: {e}") from None

    def ask(self, judge: Judge, questions: Sequence[Question]) -> list:
        if questions:
            judge.bind(questions[0])  # the cache records the prompt these questions are asked with
        cache = SqliteAnswerCache(self.db, judge.spec, judge.identity())
        try:
            return ask_with_cache(judge, questions, cache, self.stats)
        except JudgeFailed as e:
            raise AuditError(f"{e} (the {self.spec} server is set by OPENAI_BASE_URL)") from None

    def payload(self, doc: str) -> Mapping:
        if doc not in self._payloads:
            self._payloads[doc] = self.view.document(doc)["payload"]
        return self._payloads[doc]

    def embed(self, texts: Sequence[str]):  # noqa: ANN201 (numpy array)
        if self.embedder is None:
            from scoring.judges.embed import EmbedJudge

            self.embedder = EmbedJudge().embed
        return self.embedder(texts)

    def cost(self) -> dict:
        s = self.stats
        return {"requests": s.requests, "cached": s.cached, "invalid": s.invalid, "prompt_tokens": s.prompt_tokens,
                "completion_tokens": s.completion_tokens, "cost_usd": s.cost_usd}

    def improved(self, model: Model, scheme: LabelScheme) -> ImprovedJudge:
        return ImprovedJudge(self.judge(), model, positive=scheme.positive or "",  # type: ignore[arg-type]
                             decision_of=decision_of, embed=self.embed if model["strategy"] == "few-shot" else None)

    def apply(self, model: Model, items: Sequence[Item], scheme: LabelScheme) -> list[str]:
        """Each item's label from the improved judge: its questions (every order) asked, the family's rule."""
        if not items:
            return []
        task = self.view.task
        per = [task.questions_for(self.payload(i.doc), _decision(i)) for i in items]
        answers = self.ask(self.improved(model, scheme), [q for qs in per for q in qs])
        out, at = [], 0
        for i, qs in zip(items, per, strict=True):
            out.append(task.label_from_answers(_decision(i), [a.value for a in answers[at:at + len(qs)]]) or "invalid")
            at += len(qs)
        return out

    def distil(self, prompt: str) -> str:
        """The model's free-text reply to a distillation prompt (the run's model, text mode, cached)."""
        model = self.spec.split(":", 1)[1]
        judge = self.judge(f"openai:{model}")
        q = PromptQuestion(("improve-rules", prompt[:64]), DISTIL_TEMPLATE, (("PROMPT", prompt),), _reply)
        a = self.ask(judge, [q])[0]
        return a.raw or ""


def _reply(raw: str | None, *, truncated: bool = False) -> Parsed:  # noqa: ARG001 (a parser's signature)
    return Parsed("rules", rationale=None) if raw else Parsed("invalid", "empty reply")


def decision_of(q: Question) -> dict:
    """A pair question as the example retrieval sees it (CHIMERA's key: document, type, span shown first,
    second)."""
    doc, t, a, b = q.key[:4]
    return {"doc": doc, "type": t, "left": a, "right": b}


def _decision(i: Item) -> dict:
    f = i.features
    return {"kind": f["kind"], "type": f["type"], "left": f["left"], "right": f["right"]}


def llm_items(view: RunView, rows: list[dict], kind: str, reviewed: Callable[[list[dict], Sequence[str]], list[dict]],
              reviews_used: str) -> list[Item]:
    """The reviewed decisions of `kind`, each with its pair and the notes of its current reviews (joined)."""
    items = []
    for r in reviewed(rows, [kind]):
        d = view.reviewed.rows[r["decision"]]
        notes = [x["note"] for x in reviews_in(view.reviews.get(r["decision"], []), reviews_used)
                 if x.get("note")]
        items.append(Item(r["decision"], d["doc_id"], r["human"], d["judge_label"],
                          {"kind": d["kind"], "type": d["type"], "left": d["left"], "right": d["right"],
                           "note": " / ".join(notes)}))
    return items


def few_shot_fit(k: int = DEFAULT_K) -> Callable[[Sequence[Item]], Model]:
    return lambda part: fit_few_shot(part, k=k)


def rules_fit(asker: Asker) -> Callable[[Sequence[Item]], Model]:
    return lambda part: fit_rules(part, asker.distil)
