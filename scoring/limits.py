"""Size limits of single input values, one place for every family's loader (issue 34).

A file's byte limit stays with its reader (`scoring.jsonl.MAX_BYTES`, each family's `MAX_INPUT_BYTES`); these bound
one value inside a file, so a 10 MB span or query is refused at its line instead of reaching the judge's prompt,
the database and every page.
"""

MAX_SPAN_CHARS = 10_000
"""Longest CHIMERA span (gold or predicted entity; the demo's longest is 245 characters, an abstract ~2,000)."""

MAX_QUERY_CHARS = 100_000
"""Longest retrieval query, context, anchor, positive or candidate text (the demo's longest query is 204 characters)."""

MAX_SYSTEM_NAME_CHARS = 200
"""Longest system name (ideation's `system`, `first`, `second`): it names a row of every table and chart."""

MAX_ID_CHARS = 1_000
"""Longest document or query id (a paper id, a retrieval query id, an ideation question id, a judged item's id)."""

MAX_ITEM_TEXT_CHARS = 1_000_000
"""Longest text of a judged item (an input, an output, a reference, a judge's explanation or prompt: an eval
framework's log may keep long transcripts; a 30 MB field made every export of its run 90 MB), and of any free text
field of the other families' inputs (an idea, a rationale, a LitXBench description: a 50 MB description took a
LitXBench `score` 89 s and 3.7 GB, and was never scored)."""
