"""The judge kinds, listed once: `KINDS` names each spec form with its one-line help and the module that builds
it (imported on first use, so `openai` and `embed` load only when asked for). The spec error message, the
new-run form's choices, the CLI's help and docs/judges.md's table are all derived from it.

`parse_judge_spec` builds a judge from its spec string with the user's `JudgeOptions` (endpoint, key,
concurrency, prices, temperature: they never change which judge a spec names) and the family's replay-log
reader. Families call it in their `make_judge`, which every caller goes through.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scoring.errors import JudgeSpecError

if TYPE_CHECKING:  # the kinds' table is read by the CLI's --help and `runs`: the judges' modules load on use (#38)
    from scoring.judges.replay import LogLineReader
    from scoring.judges.transport import Judge


@dataclass(frozen=True)
class JudgeOptions:
    """How to reach and run a judge, as the user sets it (CLI environment, the new-run form): never part of the
    judge's spec. Each transport takes what applies to it; None keeps its default (the environment's).

    The API key is held in memory only: it is not in `repr`, and no judge records it.
    """

    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    concurrency: int | None = None
    prices: Mapping[str, tuple[float, float]] | None = None
    temperature: float | None = None


JudgeFactory = Callable[[str, JudgeOptions, "LogLineReader | None"], "Judge"]
"""(the spec's argument, options, the family's replay-log reader) -> judge."""


@dataclass(frozen=True)
class JudgeKind:
    """One kind of judge spec: `name[:ARG]`."""

    name: str
    """What the spec starts with, e.g. `fuzzy`."""
    form: str
    """How the spec is written, e.g. `fuzzy[:T]`."""
    help: str
    """One line: what answers."""
    module: str
    """The module that builds it (imported when a spec of this kind is parsed)."""
    factory: str
    """The `JudgeFactory` in that module."""
    llm: bool = False
    """An LLM is asked (cached, batchable)."""

    def build(self, arg: str, options: JudgeOptions, read_log_line: LogLineReader | None) -> Judge:
        make: JudgeFactory = getattr(importlib.import_module(self.module), self.factory)
        return make(arg, options, read_log_line)


KINDS: tuple[JudgeKind, ...] = (
    JudgeKind("exact", "exact", "case/whitespace-insensitive equality", "scoring.judges.local", "exact_from_spec"),
    JudgeKind("fuzzy", "fuzzy[:T]", "RapidFuzz ratio ≥ T (default 85)", "scoring.judges.local", "fuzzy_from_spec"),
    JudgeKind("embed", "embed[:T]", "offline embedding cosine ≥ T (default 0.9)", "scoring.judges.embed",
              "embed_from_spec"),
    JudgeKind("openai", "openai:MODEL", "any OpenAI-compatible endpoint", "scoring.judges.openai_compat",
              "text_judge_from_spec", llm=True),
    JudgeKind("openai-json", "openai-json:MODEL", "any OpenAI-compatible endpoint, structured JSON answers",
              "scoring.judges.openai_compat", "json_judge_from_spec", llm=True),
    JudgeKind("replay", "replay:PATH", "answers from a judge log", "scoring.judges.replay", "replay_from_spec"),
)
"""Every judge kind the transports provide (families add their own specs, e.g. `gold-only`, in `make_judge`)."""

_EXTRA: dict[str, JudgeKind] = {}


def register_judge(kind: JudgeKind) -> None:
    """Add a judge kind (a plug-in, or a test's judge) after the built-in ones."""
    _EXTRA[kind.name] = kind


def kinds() -> tuple[JudgeKind, ...]:
    """The built-in kinds, then the registered ones."""
    return KINDS + tuple(k for k in _EXTRA.values() if k.name not in {b.name for b in KINDS})


def kind_of(spec: str) -> JudgeKind | None:
    """The kind a spec names, or None.

    >>> kind_of("fuzzy:90").form, kind_of("nope")
    ('fuzzy[:T]', None)
    """
    name = spec.strip().partition(":")[0]
    return next((k for k in kinds() if k.name == name), None)


def spec_forms() -> str:
    """The spec forms, for messages and help: `exact, fuzzy[:T], ...`."""
    return ", ".join(k.form for k in kinds())


def describe(kind: JudgeKind) -> str:
    """`form — help`: one choice of the new-run form, one line of `--help`."""
    return f"{kind.form} — {kind.help}"


def markdown_table() -> str:
    """The judge kinds as the Markdown table docs/judges.md shows."""
    rows = ["| spec | what answers | LLM |", "|---|---|---|"]
    rows += [f"| `{k.form}` | {k.help} | {'yes' if k.llm else 'no'} |" for k in KINDS]
    return "\n".join(rows) + "\n"


def parse_judge_spec(spec: str, *, read_log_line: LogLineReader | None = None,
                     options: JudgeOptions | None = None) -> Judge:
    """Build a judge from its spec string (see `KINDS`).

    Args:
        read_log_line: the family's replay-log line reader (required for `replay:PATH`).
        options: endpoint, key, concurrency, prices, temperature for the transports that take them.

    Raises:
        JudgeSpecError: the spec names no known judge or has a bad parameter.
        InputError: a replay log cannot be read.
    """
    spec = spec.strip()
    kind = kind_of(spec)
    if kind is None:
        raise JudgeSpecError(f"unknown judge spec {spec!r}; expected one of {spec_forms()}")
    return kind.build(spec.partition(":")[2], options or JudgeOptions(), read_log_line)
