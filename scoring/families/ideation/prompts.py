"""Ideation judge questions: absolute 1-5 ratings and pairwise comparisons asked in both orders.

- `IDEATION_ABSOLUTE`: rate one idea 1-5 on one criterion, answer in a final `SCORE: <n>` line;
  parsed by `parse_absolute_score` (docs: ideation.md section 2).
- `IDEATION_PAIRWISE` / `IDEATION_PAIRWISE_NO_TIE`: which of two ideas is better on one criterion, answer in a
  final `WINNER: FIRST|SECOND|TIE` line, asked in both orders (`pairwise_prompts`); parsed by
  `parse_pairwise_winner` (ideation.md section 3). The wording is ours: the target paper's prompts
  could not be obtained, so runs using them do not claim to reproduce its numbers.
"""

from __future__ import annotations

import re

from scoring.families.ideation.model import SCORE_LABELS
from scoring.judges.answer import INVALID
from scoring.judges.prompts import Parsed, PromptTemplate, register_template

FIRST, SECOND, TIE = "first", "second", "tie"

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

IDEATION_ABSOLUTE = register_template(PromptTemplate("ideation-absolute", IDEATION_ABSOLUTE_PROMPT, SCORE_LABELS))
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

IDEATION_PAIRWISE = register_template(PromptTemplate("ideation-pairwise", IDEATION_PAIRWISE_PROMPT,
                                                    (FIRST, SECOND, TIE)))
IDEATION_PAIRWISE_NO_TIE = register_template(
    PromptTemplate("ideation-pairwise-no-tie", IDEATION_PAIRWISE_NO_TIE_PROMPT, (FIRST, SECOND)))
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


PAIRWISE_FORMAT_REMINDER = ("Your previous reply could not be read. Reply again, ending with a final line of "
                            "exactly this form:\nWINNER: <FIRST, SECOND or TIE>")
"""Sent with a re-ask after an unreadable pairwise verdict (same policy as `ABSOLUTE_FORMAT_REMINDER`)."""
PAIRWISE_NO_TIE_FORMAT_REMINDER = ("Your previous reply could not be read. Reply again, ending with a final line "
                                   "of exactly this form:\nWINNER: <FIRST or SECOND>")


def winner_of_pair(order_ab: str, order_ba: str) -> tuple[str | None, str | None]:
    """Map the two slot verdicts of a pair asked in both orders to which idea won each call.

    `order_ab` is the verdict with idea a shown first, `order_ba` with b first. Returns ("a"|"b"|"tie"|None,
    same for the second call); None where the verdict is invalid.
    """
    def idea(verdict: str, first: str, second: str) -> str | None:
        return {FIRST: first, SECOND: second, TIE: "tie"}.get(verdict)

    return idea(order_ab, "a", "b"), idea(order_ba, "b", "a")

