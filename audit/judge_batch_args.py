"""The `judge-batch` command's arguments, apart from its work (`audit.judge_batch`), so that building the CLI's
parser (`--help`, `runs`) imports neither the store nor the runs module (#38)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from scoring.judges.registry import kinds

LLM_FORMS = " or ".join(k.form for k in kinds() if k.llm)
"""The LLM judge kinds, from the judge-kind table: `openai:MODEL or openai-json:MODEL`."""


def add_arguments(parser: argparse.ArgumentParser, input_names: Sequence[str], tasks: Sequence[str]) -> None:
    """The `judge-batch` command's arguments (every family's input flags; the task picks the ones it takes)."""
    parser.add_argument("action", choices=["export", "import"])
    parser.add_argument("results", nargs="?", help="import: the results file (OpenAI Batch API or vLLM run-batch)")
    parser.add_argument("--task", required=True, choices=list(tasks))
    parser.add_argument("--judge", required=True, help=f"the live judge's spec: {LLM_FORMS} (with the same "
                        "OPENAI_BASE_URL as `score`: the endpoint is part of the cache key)")
    parser.add_argument("--out", default=None, help="export: the requests file to write")
    for name in dict.fromkeys(input_names):
        parser.add_argument(f"--{name}", default=None, metavar="PATH", help=f"the run's {name} input")
