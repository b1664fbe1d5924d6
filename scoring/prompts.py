"""Judge prompt templates, their version hashes, and the rules that read the judge's answer.

Each template is a `PromptTemplate`: its text with `{PLACEHOLDER}` fields, and a version (the first 12 hex
digits of the SHA-256 of the text) that is stored with every judge call and every run, so a changed prompt
never reuses an old cached answer and a run says exactly which wording it used.

- `CHIMERA_SPAN`: the CHIMERA span-comparison prompt, verbatim from the paper's scorer
  (noy-sternlicht/CHIMERA-KB, `src/eval.py`, `SPAN_COMPARISON_PROMPT`); parsed by `parse_span_answer`.
- `IDEATION_ABSOLUTE`: rate one idea 1-5 on one criterion, answer in a final `SCORE: <n>` line;
  parsed by `parse_absolute_score` (docs: ideation.md section 2).
- `IDEATION_PAIRWISE` / `IDEATION_PAIRWISE_NO_TIE`: which of two ideas is better on one criterion, answer in a
  final `WINNER: FIRST|SECOND|TIE` line, asked in both orders (`pairwise_prompts`); parsed by
  `parse_pairwise_winner` (ideation.md section 3). The ideation wording is ours: the target paper's prompts
  could not be obtained, so runs using them do not claim to reproduce its numbers.

A reply that cannot be read is `invalid` (with a reason), never silently "no" or a middle score.
"""

from __future__ import annotations

import hashlib
import re
import string
from dataclasses import dataclass

YES, NO, INVALID = "yes", "no", "invalid"
FIRST, SECOND, TIE = "first", "second", "tie"


def template_hash(text: str) -> str:
    """Version of a prompt template: the first 12 hex digits of the SHA-256 of its UTF-8 text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class PromptTemplate:
    """A named prompt template with `{FIELD}` placeholders."""

    name: str
    """Stable name stored with runs, e.g. `chimera-span-comparison`."""
    text: str
    """The template text, exactly as sent (before the fields are filled in)."""

    @property
    def version(self) -> str:
        """`template_hash(text)`: changes whenever the wording changes."""
        return template_hash(self.text)

    @property
    def fields(self) -> tuple[str, ...]:
        """Placeholder names in order of first appearance."""
        names = [f for _, f, _, _ in string.Formatter().parse(self.text) if f]
        return tuple(dict.fromkeys(names))

    def render(self, **values: str) -> str:
        """Fill every placeholder (values are inserted as-is; braces inside them are not interpreted).

        Raises:
            KeyError: a placeholder has no value, or a value names no placeholder.
        """
        expected = set(self.fields)
        if set(values) != expected:
            missing, extra = sorted(expected - set(values)), sorted(set(values) - expected)
            raise KeyError(f"prompt {self.name!r}: missing fields {missing}, unknown fields {extra}")
        return self.text.format(**values)


# ---------------------------------------------------------------- CHIMERA span comparison

CHIMERA_SPAN_PROMPT = """You are tasked with comparing two spans extracted from a scientific text to determine if \
they discuss the same {ENTITY_TYPE}. Follow these instructions carefully:

1. First, read the full text for context:
<full_text>
{TEXT}
</full_text>

2. Now, consider these two spans extracted from the text above:
<span1>
{SPAN1}
</span1>

<span2>
{SPAN2}
</span2>

3. Your task is to carefully analyze these two spans and determine if they discuss the same {ENTITY_TYPE}. The \
idea the spans discuss should be exactly the same, up to minor lexical or semantic variations.

4. In your analysis, consider the following:
   a. The main topic or idea presented in each span
   b. The context in which these spans appear in the full text
   c. Any potential contradictions between the spans

5. After your analysis, provide a justification for your determination. Explain your reasoning clearly, \
referencing specific elements from the spans and the full text if necessary.

6. Based on your analysis and justification, provide a "Yes" or "No" answer to whether the spans discuss the \
same {ENTITY_TYPE}.

7. Present your response in the following format:
   <justification>
   [Your detailed justification here]
   </justification>

   <answer>
   [Your "Yes" or "No" answer here]
   </answer>"""
"""The paper's `SPAN_COMPARISON_PROMPT` (CHIMERA-KB `src/eval.py`), character for character."""

CHIMERA_SPAN = PromptTemplate("chimera-span-comparison", CHIMERA_SPAN_PROMPT)
CHIMERA_SPAN_PROMPT_HASH = CHIMERA_SPAN.version


def render_span_prompt(entity_type: str, text: str, span1: str, span2: str) -> str:
    """The CHIMERA prompt for one ordered span pair (the paper fills it with `str.format` the same way)."""
    return CHIMERA_SPAN.render(ENTITY_TYPE=entity_type, TEXT=text, SPAN1=span1, SPAN2=span2)


@dataclass(frozen=True)
class Parsed:
    """What a parser read from a judge's reply."""

    value: str
    """The parsed answer (`yes`/`no`, `1`..`5`, `first`/`second`/`tie`) or `invalid`."""
    reason: str | None = None
    """Why the reply is `invalid`; None when it was read."""
    rationale: str | None = None
    """The judge's justification, when the reply has one."""

    @property
    def ok(self) -> bool:
        return self.value != INVALID


def _between(raw: str, open_tag: str, close_tag: str) -> str | None:
    start = raw.find(open_tag)
    if start < 0:
        return None
    start += len(open_tag)
    end = raw.find(close_tag, start)
    return raw[start:end] if end >= 0 else None


def parse_span_answer(raw: str | None, *, truncated: bool = False) -> Parsed:
    """Read a CHIMERA judge reply: the text between the first `<answer>` and the next `</answer>`, stripped and
    lower-cased, must be `yes` or `no`.

    Differs from the paper on purpose: the paper's scorer turns a reply without the tags (its guard never fires,
    see chimera.md section 3.1) or with anything else inside them into "" (= no match); here such a reply is
    `invalid`, with the reason, so it is counted and can be reviewed. The paper-parity metric still treats an
    invalid answer as no match.

    Args:
        raw: the reply text (None or empty: invalid).
        truncated: the reply stopped at the token limit (`finish_reason == "length"`), named in the reason.
    """
    justification = _between(raw or "", "<justification>", "</justification>")
    rationale = justification.strip() if justification is not None else None
    if not raw or not raw.strip():
        return Parsed(INVALID, "empty answer")
    inner = _between(raw, "<answer>", "</answer>")
    if inner is None:
        if "<answer>" in raw:
            why = "no closing </answer> tag"
        else:
            why = "no <answer> tag"
        if truncated:
            why += " (reply cut off at the token limit)"
        return Parsed(INVALID, why, rationale)
    value = inner.strip().lower()
    if value not in (YES, NO):
        shown = inner.strip()
        return Parsed(INVALID, f"answer is {shown[:40]!r}, not Yes or No", rationale)
    return Parsed(value, None, rationale)


# ---------------------------------------------------------------- ideation: absolute 1-5

CRITERIA = {
    "novelty": "How new is the idea compared with existing work? 1 = already well known or trivially derived; "
               "5 = a clearly original direction that the field has not explored.",
    "feasibility": "Could a typical research team carry out the idea with reasonable time and resources? "
                   "1 = not realistically possible; 5 = straightforward to implement and test.",
    "effectiveness": "If carried out, how well would the idea solve the research question? 1 = unlikely to help; "
                     "5 = likely to give a large, convincing improvement.",
}
"""Default criterion definitions shown to the judge (ours; see the module docstring)."""

IDEATION_ABSOLUTE_PROMPT = """You are an expert reviewer of research ideas. Rate the idea below on one criterion.

Research question:
<question>
{QUESTION}
</question>

Idea:
<idea>
{IDEA}
</idea>

Criterion: {CRITERION}
{CRITERION_DEFINITION}

Judge only this criterion. Write a short rationale (at most five sentences), then end your reply with a final \
line of exactly this form, with an integer from 1 (worst) to 5 (best):
SCORE: <n>"""

IDEATION_ABSOLUTE = PromptTemplate("ideation-absolute", IDEATION_ABSOLUTE_PROMPT)
IDEATION_ABSOLUTE_PROMPT_HASH = IDEATION_ABSOLUTE.version

ABSOLUTE_FORMAT_REMINDER = ("Your previous reply could not be read. Reply again, ending with a final line of "
                            "exactly this form, with one integer from 1 to 5:\nSCORE: <n>")
"""Sent with a re-ask after an unreadable absolute rating (ideation.md section 2: at most R re-asks, R = 1)."""


def render_absolute_prompt(question: str, idea: str, criterion: str, definition: str | None = None) -> str:
    """The absolute-rating prompt for one (question, idea, criterion); `definition` defaults to `CRITERIA`."""
    if definition is None:
        if criterion not in CRITERIA:
            raise KeyError(f"unknown criterion {criterion!r}; expected one of {', '.join(CRITERIA)} "
                           "or pass a definition")
        definition = CRITERIA[criterion]
    return IDEATION_ABSOLUTE.render(QUESTION=question, IDEA=idea, CRITERION=criterion,
                                    CRITERION_DEFINITION=definition)


_SCORE_SLOT = re.compile(r"^[\s*_#>`-]*score[\s*_`]*:(.*)$", re.I | re.M)
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
_SCORE_VALUE = re.compile(r"^(\d+)(?:\.0+)?(?:\s*/\s*5(?:\.0+)?)?$")


def parse_absolute_score(raw: str | None, *, truncated: bool = False) -> Parsed:
    """Read a 1-5 rating from the `SCORE: <n>` slot only (ideation.md section 2).

    Accepted: an integer 1..5, also written `4/5` or `4.0` (markdown emphasis around the slot is ignored).
    Invalid: no slot (refusal, truncated reply), a value out of range, a fraction such as 3.5, anything
    non-numeric, two different numbers in a slot, or slots that disagree. `Parsed.value` is the digit as a
    string; `Parsed.rationale` is the text before the first slot.
    """
    if not raw or not raw.strip():
        return Parsed(INVALID, "empty answer")
    slots = list(_SCORE_SLOT.finditer(raw))
    if not slots:
        why = "no 'SCORE: <n>' line"
        return Parsed(INVALID, why + (" (reply cut off at the token limit)" if truncated else ""))
    rationale = raw[:slots[0].start()].strip() or None
    values = set()
    for m in slots:
        content = m.group(1).strip().strip("*_`").strip().rstrip(".").strip()
        vm = _SCORE_VALUE.match(content)
        if vm is None:
            numbers = _NUMBER.findall(content)
            if len(set(numbers)) > 1:
                return Parsed(INVALID, f"two different numbers in the score slot: {content[:40]!r}", rationale)
            return Parsed(INVALID, f"score {content[:40]!r} is not an integer from 1 to 5", rationale)
        n = int(vm.group(1))
        if not 1 <= n <= 5:
            return Parsed(INVALID, f"score {n} is outside 1..5", rationale)
        values.add(n)
    if len(values) > 1:
        return Parsed(INVALID, f"score slots disagree: {sorted(values)}", rationale)
    return Parsed(str(values.pop()), None, rationale)


# ---------------------------------------------------------------- ideation: pairwise, both orders

_PAIRWISE_HEAD = """You are an expert reviewer of research ideas. Compare the two ideas below on one criterion.

Research question:
<question>
{QUESTION}
</question>

First idea:
<idea_first>
{IDEA_FIRST}
</idea_first>

Second idea:
<idea_second>
{IDEA_SECOND}
</idea_second>

Criterion: {CRITERION}
{CRITERION_DEFINITION}

Judge only this criterion; the order in which the ideas are shown does not matter. Write a short rationale (at \
most five sentences), then end your reply with a final line of exactly this form:
"""

IDEATION_PAIRWISE_PROMPT = _PAIRWISE_HEAD + """WINNER: <FIRST, SECOND or TIE>
Answer TIE only if neither idea is better on this criterion."""

IDEATION_PAIRWISE_NO_TIE_PROMPT = _PAIRWISE_HEAD + """WINNER: <FIRST or SECOND>
You must pick one idea; a tie is not allowed."""

IDEATION_PAIRWISE = PromptTemplate("ideation-pairwise", IDEATION_PAIRWISE_PROMPT)
IDEATION_PAIRWISE_NO_TIE = PromptTemplate("ideation-pairwise-no-tie", IDEATION_PAIRWISE_NO_TIE_PROMPT)
IDEATION_PAIRWISE_PROMPT_HASH = IDEATION_PAIRWISE.version
IDEATION_PAIRWISE_NO_TIE_PROMPT_HASH = IDEATION_PAIRWISE_NO_TIE.version


def pairwise_prompts(question: str, idea_a: str, idea_b: str, criterion: str, *, allow_tie: bool = True,
                     definition: str | None = None) -> tuple[str, str]:
    """The two prompts for one unordered pair: (a shown first, b shown first)."""
    if definition is None:
        if criterion not in CRITERIA:
            raise KeyError(f"unknown criterion {criterion!r}; expected one of {', '.join(CRITERIA)} "
                           "or pass a definition")
        definition = CRITERIA[criterion]
    template = IDEATION_PAIRWISE if allow_tie else IDEATION_PAIRWISE_NO_TIE

    def render(first: str, second: str) -> str:
        return template.render(QUESTION=question, IDEA_FIRST=first, IDEA_SECOND=second, CRITERION=criterion,
                               CRITERION_DEFINITION=definition)

    return render(idea_a, idea_b), render(idea_b, idea_a)


_WINNER_SLOT = re.compile(r"^[\s*_#>`-]*winner[\s*_`]*:(.*)$", re.I | re.M)
_WINNER_WORDS = {"first": FIRST, "second": SECOND, "tie": TIE, "1": FIRST, "2": SECOND}


def parse_pairwise_winner(raw: str | None, *, allow_tie: bool = True, truncated: bool = False) -> Parsed:
    """Read `FIRST`, `SECOND` or `TIE` from the `WINNER:` slot only (ideation.md sections 3-4).

    Invalid: no slot, an unknown word, slots that disagree, or `TIE` when the prompt did not allow ties
    (ideation.md section 4: then a tie is invalid, not a tie).
    """
    if not raw or not raw.strip():
        return Parsed(INVALID, "empty answer")
    slots = list(_WINNER_SLOT.finditer(raw))
    if not slots:
        why = "no 'WINNER:' line"
        return Parsed(INVALID, why + (" (reply cut off at the token limit)" if truncated else ""))
    rationale = raw[:slots[0].start()].strip() or None
    values = set()
    for m in slots:
        word = m.group(1).strip().strip("*_`<>[]").strip().rstrip(".").strip().lower()
        if word not in _WINNER_WORDS:
            return Parsed(INVALID, f"winner {word[:40]!r} is not FIRST, SECOND or TIE", rationale)
        values.add(_WINNER_WORDS[word])
    if len(values) > 1:
        return Parsed(INVALID, f"winner slots disagree: {sorted(values)}", rationale)
    value = values.pop()
    if value == TIE and not allow_tie:
        return Parsed(INVALID, "TIE given but the prompt does not allow ties", rationale)
    return Parsed(value, None, rationale)


def winner_of_pair(order_ab: str, order_ba: str) -> tuple[str | None, str | None]:
    """Map the two slot verdicts of a pair asked in both orders to which idea won each call.

    `order_ab` is the verdict with idea a shown first, `order_ba` with b first. Returns ("a"|"b"|"tie"|None,
    same for the second call); None where the verdict is invalid.
    """
    def idea(verdict: str, first: str, second: str) -> str | None:
        return {FIRST: first, SECOND: second, TIE: "tie"}.get(verdict)

    return idea(order_ab, "a", "b"), idea(order_ba, "b", "a")


TEMPLATES = {t.name: t for t in (CHIMERA_SPAN, IDEATION_ABSOLUTE, IDEATION_PAIRWISE, IDEATION_PAIRWISE_NO_TIE)}
"""Every template by name (name -> PromptTemplate; `.version` is its hash)."""
