"""Process chains: expand a material's steps into events, normalise, and align two chains (official eval.py
`resolve_process_events`, `normalize_process_events`, `align_process_events`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from scoring.families.litxbench.load import substitute
from scoring.families.litxbench.model import Material, ProcessEvent, ProcessKind


def resolve_events(material: Material) -> list[ProcessEvent]:
    """The material's events in order, template variables filled in (unknown groups skipped, as officially)."""
    if material.steps is None:
        return []
    out: list[ProcessEvent] = []
    for step in material.steps:
        g = material.groups.get(step.base_name)
        if g is None:
            continue
        events = substitute(g, step.variables) if g.template_vars and step.variables else list(g.events)
        if step.inputs and events:
            events[0] = replace(events[0], inputs=events[0].inputs + step.inputs)
        out.extend(events)
    return out


def normalise_events(events: Sequence[ProcessEvent]) -> list[ProcessEvent]:
    """Drop `Cut` events and prepend an implicit `Mixing` unless the chain starts with one."""
    kept = [e for e in events if e.kind != ProcessKind.Cut]
    if kept and kept[0].kind == ProcessKind.Mixing:
        return kept
    return [ProcessEvent(ProcessKind.Mixing)] + kept


@dataclass
class Alignment:
    """Levenshtein alignment of two event chains on kinds only."""

    matched: list[tuple[int, int]]
    """(gold index, predicted index) of aligned same-kind events, in chain order."""
    unmatched_gold: list[int]
    unmatched_pred: list[int]
    distance: int
    steps: list[tuple[int | None, int | None]]
    """The full alignment (substitutions appear as a pair of different kinds)."""


def align(gold: Sequence[ProcessEvent], pred: Sequence[ProcessEvent]) -> Alignment:
    """`align_process_events`: unit-cost Levenshtein on kind values; backtrace prefers match, substitution,
    deleting the gold event, then inserting the predicted one (so the result is not always maximal, spec §10.1)."""
    a = [e.kind.value for e in gold]
    b = [e.kind.value for e in pred]
    n, m = len(a), len(b)
    dp = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        dp[i][0] = i
    for j in range(m + 1):
        dp[0][j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if a[i - 1] == b[j - 1]:
                dp[i][j] = dp[i - 1][j - 1]
            else:
                dp[i][j] = 1 + min(dp[i - 1][j], dp[i][j - 1], dp[i - 1][j - 1])
    matched: list[tuple[int, int]] = []
    ug: list[int] = []
    up: list[int] = []
    steps: list[tuple[int | None, int | None]] = []
    i, j = n, m
    while i > 0 or j > 0:
        if i > 0 and j > 0 and a[i - 1] == b[j - 1]:
            matched.append((i - 1, j - 1))
            steps.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif i > 0 and j > 0 and dp[i][j] == dp[i - 1][j - 1] + 1:
            ug.append(i - 1)
            up.append(j - 1)
            steps.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif i > 0 and dp[i][j] == dp[i - 1][j] + 1:
            ug.append(i - 1)
            steps.append((i - 1, None))
            i -= 1
        else:
            up.append(j - 1)
            steps.append((None, j - 1))
            j -= 1
    for lst in (matched, ug, up, steps):
        lst.reverse()
    return Alignment(matched, ug, up, dp[n][m], steps)
