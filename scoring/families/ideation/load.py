"""Loading ideation inputs (JSON lines), validated with FILE:LINE: reason errors.

- ideas: `{"question_id", "question", "system", "idea"}` (other fields are kept as `Idea.extra`);
- absolute ratings: `{"question_id", "system", "criterion", "score": 1..5 | null, "rationale"?, "raw"?}`;
- pairwise verdicts: `{"question_id", "criterion", "first", "second", "verdict": first|second|tie|invalid,
  "rationale"?, "raw"?}`, `first`/`second` being system names in the order the judge saw the ideas.

A judge log (`judge_log`, `replay:PATH`) mixes both rating kinds: a line with `score` is a rating, a line with
`verdict` a pairwise call (`load_judge_log`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from scoring.errors import InputError, is_blank
from scoring.families.ideation.model import CRITERIA, MAX_INPUT_BYTES, VERDICTS, Idea, Question, Rating, Verdict
from scoring.jsonl import json_type, read_records
from scoring.limits import MAX_ID_CHARS, MAX_ITEM_TEXT_CHARS, MAX_SYSTEM_NAME_CHARS
from scoring.nouns import Noun

Pools = Mapping[str, Sequence[str]]


def _lines(path: str | Path) -> Iterator[tuple[int, dict]]:
    """(line number, JSON object) for every non-blank line (`scoring.jsonl`); InputError on anything else."""
    yield from read_records(path, limit=MAX_INPUT_BYTES)  # type: ignore[misc] (read_records: objects)


def _text(rec: Mapping, key: str, path: str, line: int, *, optional: bool = False) -> str | None:
    if key not in rec or rec[key] is None:
        if optional:
            return None
        raise InputError(path, line, f"missing field '{key}'")
    v = rec[key]
    if not isinstance(v, str):
        raise InputError(path, line, f"field '{key}' must be a string, got {json_type(v)}")
    if not optional and is_blank(v):
        raise InputError(path, line, f"field '{key}' is empty" + (
            "" if not v.strip() else " (only invisible characters such as zero-width spaces)"))
    if len(v) > MAX_ITEM_TEXT_CHARS:
        raise InputError(path, line, f"field '{key}' is {len(v):,} characters long; the limit is "
                                     f"{MAX_ITEM_TEXT_CHARS:,} (scoring.limits)")
    return v


SYSTEM_FIELDS = ("system", "first", "second")


def _id(rec: Mapping, key: str, path: str, line: int) -> str:
    v = _text(rec, key, path, line)
    assert v is not None
    limit = MAX_SYSTEM_NAME_CHARS if key in SYSTEM_FIELDS else MAX_ID_CHARS
    if len(v.strip()) > limit:
        raise InputError(path, line, f"field '{key}' is {len(v.strip()):,} characters long; the limit is {limit:,}"
                                     " (scoring.limits)")
    return v.strip()


IDEA_FIELDS = ("question_id", "question", "system", "idea")


def load_ideas(path: str | Path) -> list[Question]:
    """Read the ideas file into questions (input order of first appearance), one idea per system.

    Raises:
        InputError: malformed JSON, a missing or non-string field, the same (question, system) twice, or one
            question id given two different question texts.
    """
    path = str(path)
    questions: dict[str, tuple[str, int, list[Idea]]] = {}
    for line, rec in _lines(path):
        qid = _id(rec, "question_id", path, line)
        system = _id(rec, "system", path, line)
        question = _text(rec, "question", path, line)
        idea = _text(rec, "idea", path, line)
        assert question is not None and idea is not None
        extra = {k: v for k, v in rec.items() if k not in IDEA_FIELDS}
        if qid not in questions:
            questions[qid] = (question, line, [])
        text, first_line, ideas = questions[qid]
        if text != question:
            raise InputError(path, line, f"question {qid!r} has a different question text than on line {first_line}")
        dup = next((i for i in ideas if i.system == system), None)
        if dup is not None:
            raise InputError(path, line, f"duplicate idea: question {qid!r} already has an idea from system "
                                         f"{system!r} (line {dup.line}); give one idea per system and question")
        ideas.append(Idea(qid, system, idea, line, extra))
    if not questions:
        raise InputError(path, None, "no ideas in the file")
    return [Question(qid, text, tuple(ideas)) for qid, (text, _, ideas) in questions.items()]


def _pool(pools: Pools, qid: str, path: str, line: int) -> Sequence[str]:
    if qid not in pools:
        raise InputError(path, line, f"unknown question {qid!r} (not in the ideas file)")
    return pools[qid]


def _criterion(rec: Mapping, path: str, line: int) -> str:
    """One of `CRITERIA`, exactly: another spelling would be a criterion of its own, its ratings matching none."""
    c = _id(rec, "criterion", path, line)
    if c not in CRITERIA:
        near = [k for k in CRITERIA if k == c.casefold()]
        raise InputError(path, line, f"unknown criterion {c[:40]!r}; expected one of {', '.join(CRITERIA)}"
                                     + (f" (written {near[0]!r})" if near else ""))
    return c


def _rating(rec: Mapping, pools: Pools, path: str, line: int) -> Rating:
    qid = _id(rec, "question_id", path, line)
    pool = _pool(pools, qid, path, line)
    system = _id(rec, "system", path, line)
    if system not in pool:
        raise InputError(path, line, f"unknown system {system!r} for question {qid!r}; its ideas come from "
                                     f"{', '.join(pool)}")
    criterion = _criterion(rec, path, line)
    if "score" not in rec:
        raise InputError(path, line, "missing field 'score' (an integer 1-5, or null for an unreadable answer)")
    score: Any = rec["score"]
    if score is not None:
        if isinstance(score, bool) or not isinstance(score, int):
            raise InputError(path, line, f"score must be an integer 1-5 or null, got {json_type(score)} {score!r}")
        if not 1 <= score <= 5:
            raise InputError(path, line, f"score {score} is outside 1-5")
    return Rating(qid, system, criterion, score, _text(rec, "rationale", path, line, optional=True),
                  _text(rec, "raw", path, line, optional=True), line)


def _verdict(rec: Mapping, pools: Pools, path: str, line: int) -> Verdict:
    qid = _id(rec, "question_id", path, line)
    pool = _pool(pools, qid, path, line)
    criterion = _criterion(rec, path, line)
    first, second = _id(rec, "first", path, line), _id(rec, "second", path, line)
    for slot, system in (("first", first), ("second", second)):
        if system not in pool:
            raise InputError(path, line, f"'{slot}' names {system!r}, which has no idea in the pool of question "
                                         f"{qid!r} ({', '.join(pool)})")
    if first == second:
        raise InputError(path, line, f"an idea cannot be compared with itself ({first!r} is first and second)")
    verdict = _text(rec, "verdict", path, line)
    assert verdict is not None
    # Read in any case (documented): the four words are all a verdict can be, so `First` can only mean first.
    if verdict.strip().lower() not in VERDICTS:
        raise InputError(path, line, f"verdict {verdict[:40]!r} is not one of {', '.join(VERDICTS)}")
    return Verdict(qid, criterion, first, second, verdict.strip().lower(),
                   _text(rec, "rationale", path, line, optional=True), _text(rec, "raw", path, line, optional=True),
                   line)


def _check_unique(key: tuple, seen: dict[tuple, int], path: str, line: int, what: str) -> None:
    if key in seen:
        raise InputError(path, line, f"duplicate {what} (same as line {seen[key]})")
    seen[key] = line


def load_absolute(path: str | Path, pools: Pools) -> list[Rating]:
    """Read absolute ratings, checked against the pools of the ideas file.

    Raises:
        InputError: malformed JSON, wrong types, unknown question or system, a score outside 1-5, or the same
            (question, system, criterion) twice.
    """
    path = str(path)
    seen: dict[tuple, int] = {}
    out = []
    for line, rec in _lines(path):
        r = _rating(rec, pools, path, line)
        _check_unique((r.question_id, r.system, r.criterion), seen, path, line,
                      f"rating of {r.system!r} on {r.criterion!r} for question {r.question_id!r}")
        out.append(r)
    if not out:
        raise InputError(path, None, "no ratings in the file (an empty absolute file scores nothing; leave "
                                     "--absolute out to score the pairwise calls alone)")
    return out


def load_pairwise(path: str | Path, pools: Pools) -> list[Verdict]:
    """Read pairwise verdicts, checked against the pools of the ideas file.

    Raises:
        InputError: malformed JSON, wrong types, unknown question, a verdict naming an idea not in the pool, an
            unknown verdict word, or the same (question, criterion, first, second) twice.
    """
    path = str(path)
    seen: dict[tuple, int] = {}
    out = []
    for line, rec in _lines(path):
        v = _verdict(rec, pools, path, line)
        _check_unique((v.question_id, v.criterion, v.first, v.second), seen, path, line,
                      f"call {v.first!r} first vs {v.second!r} on {v.criterion!r} for question {v.question_id!r}")
        out.append(v)
    if not out:
        raise InputError(path, None, "no pairwise calls in the file (an empty pairwise file scores nothing; leave "
                                     "--pairwise out to score the ratings alone)")
    return out


def load_judge_log(path: str | Path, pools: Pools) -> tuple[list[Rating], list[Verdict]]:
    """Read a mixed judge log: lines with `score` are ratings, lines with `verdict` pairwise calls.

    Raises:
        InputError: as `load_absolute` / `load_pairwise`, or a line with neither `score` nor `verdict`.
    """
    path = str(path)
    seen_r: dict[tuple, int] = {}
    seen_v: dict[tuple, int] = {}
    ratings, verdicts = [], []
    for line, rec in _lines(path):
        if "verdict" in rec:
            v = _verdict(rec, pools, path, line)
            _check_unique((v.question_id, v.criterion, v.first, v.second), seen_v, path, line, "pairwise call")
            verdicts.append(v)
        elif "score" in rec:
            r = _rating(rec, pools, path, line)
            _check_unique((r.question_id, r.system, r.criterion), seen_r, path, line, "rating")
            ratings.append(r)
        else:
            raise InputError(path, line, "a judge-log line needs 'score' (a rating) or 'verdict' (a pairwise call)")
    return ratings, verdicts


_MIRROR = {"first": "second", "second": "first", "tie": "tie"}


def check_orientation(log: Sequence[Verdict], calls: Sequence[Verdict], path: str | Path) -> None:
    """Refuse a judge log whose first/second read swapped against the pairwise verdicts of the run (the calls
    being scored): when more of the calls both name agree once each log line's order is turned round (its winner
    the same system) than as written. A log that agrees as written, or shares no decided call, passes.

    Raises:
        InputError: at the log's first swapped line, with both counts.
    """
    given = {(v.question_id, v.criterion, v.first, v.second): v.verdict for v in calls
             if v.verdict in _MIRROR}
    as_written = swapped = 0
    first_swapped: int | None = None
    for v in log:
        if v.verdict not in _MIRROR or v.verdict == "tie":
            continue
        same = given.get((v.question_id, v.criterion, v.first, v.second))
        turned = given.get((v.question_id, v.criterion, v.second, v.first))
        # Read with first/second exchanged, the line (b first, a second, "first") says a won shown first.
        if same is not None:
            as_written += same == v.verdict
        if turned is not None and turned == v.verdict and same != v.verdict:
            swapped += 1
            first_swapped = v.line if first_swapped is None else first_swapped
    if swapped > as_written:
        agree = f"{Noun('decided call').count(swapped)} {'agrees' if swapped == 1 else 'agree'}"
        raise InputError(str(path), first_swapped, f"the judge log's first/second look swapped against the pairwise "
                                                   f"verdicts: {agree} with them only read "
                                                   f"the other way round, {as_written} as written. Write each line "
                                                   "with the systems in the order the judge saw them (or leave "
                                                   "--pairwise out if the log is another judge's)")
