"""CHIMERA's judge question: the paper's span-comparison prompt, verbatim, and the rule that reads its answer.

`CHIMERA_SPAN`: verbatim from the paper's scorer (noy-sternlicht/CHIMERA-KB, `src/eval.py`,
`SPAN_COMPARISON_PROMPT`); parsed by `parse_span_answer`. The default, for parity with the paper.

`CHIMERA_SPAN_JSON`: our structured-answer form of the same question (`openai-json:MODEL`): the same
instructions, but the reply is a JSON object `{"justification": ..., "answer": "yes"|"no"}` that the server
enforces through `response_format` (`CHIMERA_SPAN_SCHEMA`); parsed by `parse_span_json`. It has its own
version hash, so its answers never mix with the paper prompt's in the cache or in a run's identity.
"""

from __future__ import annotations

import json
import re

from scoring.judges.answer import INVALID, NO, YES
from scoring.judges.prompts import Parsed, PromptTemplate, between, register_template
from scoring.judges.question import Structured

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

CHIMERA_SPAN = register_template(PromptTemplate("chimera-span-comparison", CHIMERA_SPAN_PROMPT, (YES, NO)))
CHIMERA_SPAN_PROMPT_HASH = CHIMERA_SPAN.version


def render_span_prompt(entity_type: str, text: str, span1: str, span2: str) -> str:
    """The CHIMERA prompt for one ordered span pair (the paper fills it with `str.format` the same way)."""
    return CHIMERA_SPAN.render(ENTITY_TYPE=entity_type, TEXT=text, SPAN1=span1, SPAN2=span2)


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
    justification = between(raw or "", "<justification>", "</justification>")
    rationale = justification.strip() if justification is not None else None
    if not raw or not raw.strip():
        return Parsed(INVALID, "empty answer")
    inner = between(raw, "<answer>", "</answer>")
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



CHIMERA_SPAN_JSON_PROMPT = """You are tasked with comparing two spans extracted from a scientific text to determine if \
they discuss the same {ENTITY_TYPE}.

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

3. Determine if the two spans discuss the same {ENTITY_TYPE}. The idea the spans discuss should be exactly the \
same, up to minor lexical or semantic variations. Consider the main topic or idea presented in each span, the \
context in which they appear in the full text, and any potential contradictions between them.

4. Reply with a JSON object only: a short justification of your determination (one or two sentences), then \
"yes" or "no" to whether the spans discuss the same {ENTITY_TYPE}:
{{"justification": "...", "answer": "yes"}}"""
"""Our JSON-answer wording of the paper's question (not the paper's text: the paper asks for tags)."""

CHIMERA_SPAN_JSON = register_template(PromptTemplate("chimera-span-comparison-json", CHIMERA_SPAN_JSON_PROMPT,
                                                     (YES, NO)))
CHIMERA_SPAN_JSON_PROMPT_HASH = CHIMERA_SPAN_JSON.version

JUSTIFICATION_MAX_CHARS = 500
"""Cap on the justification in the schema: a constrained small model otherwise rambles to the token limit and
the answer after it is cut off (500 characters are about 120 tokens, well inside the 400-token cap)."""

CHIMERA_SPAN_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "justification": {"type": "string", "maxLength": JUSTIFICATION_MAX_CHARS},
        "answer": {"type": "string", "enum": [YES, NO]},
    },
    "required": ["justification", "answer"],
    "additionalProperties": False,
}
"""JSON schema of a structured CHIMERA answer (key order = generation order: the justification comes first)."""

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


def parse_span_json(raw: str | None, *, truncated: bool = False) -> Parsed:
    """Read a structured CHIMERA reply: a JSON object whose `answer`, stripped and lower-cased, is `yes` or `no`;
    its `justification` (a string, optional here) is the rationale.

    A reply inside a Markdown code fence is accepted (servers without constrained decoding add one). Anything else
    is `invalid` with the reason: empty, not JSON (named as cut off when `truncated`), not an object, no `answer`
    string, or another word.
    """
    if not raw or not raw.strip():
        return Parsed(INVALID, "empty answer")
    text = raw.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, RecursionError, ValueError):
        why = "not a JSON object" + (" (reply cut off at the token limit)" if truncated else "")
        return Parsed(INVALID, why)
    if not isinstance(obj, dict):
        return Parsed(INVALID, f"JSON {type(obj).__name__}, not an object")
    justification = obj.get("justification")
    rationale = justification.strip() if isinstance(justification, str) else None
    answer = obj.get("answer")
    if not isinstance(answer, str):
        return Parsed(INVALID, "no 'answer' string in the JSON object", rationale)
    value = answer.strip().lower()
    if value not in (YES, NO):
        return Parsed(INVALID, f"answer is {answer.strip()[:40]!r}, not yes or no", rationale)
    return Parsed(value, None, rationale)


SPAN_JSON = Structured(CHIMERA_SPAN_JSON, CHIMERA_SPAN_SCHEMA, parse_span_json)
"""The structured form every CHIMERA question offers (`Question.structured()`)."""

