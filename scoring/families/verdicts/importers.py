"""What an importer of a framework's log gives back, and the one place errors of a record are worded.

An importer reads a framework's own file (through the framework's own API where it has one) and returns judged
items (`model.ITEMS_FORMAT` records), the records it skipped with why, and the aggregate the framework itself
reported, so the shell can store the run all at once and compare.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from scoring.errors import InputError
from scoring.families.verdicts.model import SCORE, item_from_json, verdict_from_json


class ImportRefused(ValueError):
    """The whole file cannot be imported (not the framework's log, its library missing, no record usable)."""


@dataclass
class Imported:
    """A framework log read into judged items."""

    items: list[dict]
    """Items-file records (`scoring.families.verdicts.model.ITEMS_FORMAT`), in the log's order."""
    records: int
    """Records (samples × epochs) the log holds."""
    errors: list[str] = field(default_factory=list)
    """`FILE: record N: reason`, one per record skipped (or scorer of a record skipped)."""
    reported: dict[str, float] = field(default_factory=dict)
    """The framework's own aggregate per scorer (its headline metric, e.g. Inspect's `accuracy`)."""
    source: dict = field(default_factory=dict)
    """Which framework, version, task and model made the log (shown with the run)."""
    skipped_records: int | None = None
    """Records that gave no verdict; None: `records` less the items (one item per record)."""
    warnings: list[str] = field(default_factory=list)
    """Where the run's numbers will differ from the framework's own, and why (said with the run)."""

    @property
    def skipped(self) -> int:
        return self.records - len(self.items) if self.skipped_records is None else self.skipped_records


def _short(value: object, limit: int = 80) -> object:
    """A value as a message quotes it: text over `limit` characters cut, with its length (an id of 200,000
    characters made the line saying so as long)."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]}… ({len(value):,} characters)"
    return value


def keep_readable(got: Imported, path: str) -> Imported:
    """`got` without the items the items format refuses (a scorer twice in one record, an empty id, ...) and
    without a later record whose item id repeats an earlier one's (a line given twice, two promptfoo providers
    with one label), each listed like a record that cannot be read, with the log's own ids: the items file an
    import writes is the importer's, so its refusal named a temporary file nobody can open, and refused the whole
    log."""
    kept, seen = [], set()
    for item in got.items:
        where = {k: _short(v) for k, v in (item.get("source") or {}).items() if k != "framework" and v is not None}
        ids = json.dumps(where, ensure_ascii=False, default=str)
        try:
            item_from_json(item, path, None)
        except InputError as e:
            got.errors.append(f"{path}: {_short(e.reason, 300)} ({ids}); the record is skipped")
            _skip(got, item)
            continue
        if str(item.get("id")) in seen:
            got.errors.append(f"{path}: item id {_short(str(item.get('id')))!r} repeats an earlier record's; the "
                              f"later record ({ids}) is skipped")
            _skip(got, item)
            continue
        seen.add(str(item.get("id")))
        kept.append(item)
    got.items[:] = kept
    return got


def _skip(got: Imported, item: dict) -> None:
    """Count a dropped item's records where the importer counts them itself (`skipped_records`: Every Eval Ever
    writes one line per verdict of an item)."""
    if got.skipped_records is not None:
        got.skipped_records += max(len(item.get("verdicts") or []), 1)


def reported_differs(got: Imported) -> list[str]:
    """A sentence per scorer whose imported verdicts' mean (the run's number before any review) is not the
    aggregate the framework reported: skipped records, or a framework that aggregates otherwise (an Inspect
    epoch reducer other than the mean) would otherwise pass unseen."""
    values: dict[str, list[float]] = {}
    for item in got.items:
        for v in item["verdicts"]:
            values.setdefault(v["scorer"], []).append(verdict_from_json(v, ("", None)).number)
    out = []
    for scorer, reported in got.reported.items():
        mine = values.get(scorer)
        if not mine:
            continue
        mean = sum(mine) / len(mine)
        if not math.isclose(mean, reported, rel_tol=1e-9, abs_tol=1e-9):
            out.append(f"{scorer}: the framework reports {reported:.4g}, the mean of the {len(mine)} verdicts "
                       f"imported is {mean:.4g}" + ("; some records were skipped" if got.errors else ""))
    return out


def outside_unit_range(got: Imported) -> list[str]:
    """A sentence per scorer with scores outside [0, 1]: an overrule gives such a verdict 0 or 1 (`model.Verdict.
    worth`), the ends of [0, 1], so its audited mean mixes two scales."""
    outside: dict[str, list[float]] = {}
    for item in got.items:
        for v in item["verdicts"]:
            value = v.get("value")
            if v.get("scheme") == SCORE and isinstance(value, int | float) and not 0 <= value <= 1:
                outside.setdefault(v["scorer"], []).append(float(value))
    return [f"{scorer}: {len(vs)} score{'s' if len(vs) != 1 else ''} outside [0, 1] (e.g. {vs[0]:g}); a reviewer's "
            "overrule counts the passing or the failing end of [0, 1], so the audited mean of this scorer mixes the "
            "two scales" for scorer, vs in outside.items()]


def id_text(value: object, field: str) -> str:
    """A record's id as text: a string or a whole number, as the frameworks write them (a null or an object became
    ids such as 'None' and "{'a': 1}").

    Raises:
        ValueError: naming the field and what it holds.
    """
    if isinstance(value, bool) or not isinstance(value, str | int):
        shown = "null" if value is None else type(value).__name__
        raise ValueError(f"{field} is {shown}, not a string or a whole number")
    return str(value)


def record_error(path: str, n: int, reason: str) -> str:
    """`FILE: record N: reason` (N counted from 1 in the log's order)."""
    return f"{path}: record {n}: {reason}"


Reader = Callable[[str, Mapping[str, str]], Imported]
WriteBack = Callable[[str, str, Sequence[Mapping]], int]
"""(log path, output path, reviewed decisions) -> edits written. Each reviewed decision is a mapping with
`payload` (its item), `kind`, `type`, `label` (the effective label), `reviewer` and `note`."""


@dataclass(frozen=True)
class Importer:
    """One framework's log reader (and writer of reviewed verdicts back into its log, where it has one)."""

    framework: str
    """CLI name: `python -m audit import FRAMEWORK LOG`."""
    title: str
    family: str
    """The family whose run the items become (its registry name)."""
    input: str
    """The family's input the items file is given as."""
    judge: str
    """The judge spec the run is scored with (the recorded verdicts)."""
    read: Reader
    options: Mapping[str, str] = field(default_factory=dict)
    """Importer options (`--NAME`) and their help."""
    write_back: WriteBack | None = None
    reported_from: str | None = None
    """Where the framework's own aggregate is read when not in the log itself (said in `--help`, and in a warning
    when it is not found)."""

    def load(self, path: str, options: Mapping[str, str]) -> Imported:
        """`read`, keeping only the items the items format accepts (`keep_readable`), with a warning where the
        imported verdicts' mean is not the framework's reported aggregate (`reported_differs`) and where scores lie
        outside the scale an overrule assumes (`outside_unit_range`)."""
        got = keep_readable(self.read(path, options), path)
        got.warnings += reported_differs(got) + outside_unit_range(got)
        if not got.reported and got.items:
            got.warnings.append("no aggregate of the framework's own was found to compare the run with"
                                + (f" ({self.reported_from})" if self.reported_from else ""))
        return got
