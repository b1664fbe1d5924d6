"""`replay:PATH`: a judge whose answers are read from a judge log.

The log's line format is the family's (a `LogLineReader` every family supplies: CHIMERA's span lines,
`scoring/families/chimera/questions.py`); this transport reads the JSON lines (`scoring.jsonl`), refuses
conflicting answers for one key and an empty log, and answers a question the log lacks `missing`, never an
invented answer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path

from scoring.errors import InputError, JudgeSpecError, loads_strict, refused_line
from scoring.jsonl import read_records
from scoring.judges.answer import INVALID, MISSING, Answer
from scoring.judges.question import Question
from scoring.judges.redact import public_field
from scoring.judges.transport import LocalJudge

MAX_LOG_BYTES = 512 * 1024 * 1024
MAX_META_BYTES = 64 * 1024
"""A `.meta.json` sidecar over this size is refused (the demo's is 2 KB): its fields reach the run and exports."""

LogLineReader = Callable[[Mapping, str, int], tuple[tuple[str, ...], Answer]]
"""(record, path, line number) -> (question key, answer); raises InputError naming path and line."""

SOURCE_FIELDS = ("judge_spec", "model", "prompt", "prompt_hash", "params", "dialect", "what")
"""What a replay judge's identity shows from the log's `.meta.json`: which judge, model and prompt answered."""
SIDECAR_NOTE = "as the judge log's .meta.json says (not verified: the answers were replayed from the log)"
"""Shown beside `source` in the identity: the sidecar is a claim of whoever wrote the log, not what answered."""


class ReplayJudge(LocalJudge):
    """`replay:PATH`: answers read from a judge log in the family's format (`read_line`).

    A sidecar `<log>.meta.json` beside the log (written by the tool that made it, e.g. scripts/real_judge_demo.py)
    names the judge that answered; its `SOURCE_FIELDS` are shown in `identity()["source"]`, so a replayed run
    still says which model and prompt. The sidecar is read only up to `MAX_META_BYTES`, and what is copied goes
    through `redact.public_field` (endpoints redacted, local paths reduced to file names, bounded).
    """

    def __init__(self, path: str | Path, read_line: LogLineReader) -> None:
        self.path = str(path)
        self.spec = f"replay:{self.path}"
        self.answers: dict[tuple[str, ...], Answer] = {}
        self.lines: dict[tuple[str, ...], int] = {}  # the line of each unreadable answer
        self.unreadable_asked: dict[int, None] = {}  # lines of the unreadable answers asked, in asking order
        self.file_hash = ""
        self.source: dict | None = None
        self._load(read_line)
        self._load_meta()

    def _load_meta(self) -> None:
        meta = Path(self.path).with_suffix(".meta.json")
        if not meta.exists():
            return
        if not meta.is_file():
            raise InputError(str(meta), None, "the judge log's metadata is not a file (a folder?); remove it or "
                                              "write the JSON object that names the judge")
        size = meta.stat().st_size
        if size > MAX_META_BYTES:
            raise InputError(str(meta), None, f"the judge log's metadata is {size:,} bytes; at most "
                                              f"{MAX_META_BYTES // 1024} KiB are read (it names the judge, "
                                              "model and prompt: remove the rest, or the file)")
        with meta.open("rb") as f:
            raw = f.read(MAX_META_BYTES + 1)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(str(meta), raw[:e.start].count(b"\n") + 1, "the judge log's metadata is not valid "
                                                                         "JSON (not UTF-8 text)") from None
        try:  # the input rules of every reader: no NaN or Infinity, no duplicate key, no over-long number
            data = loads_strict(text)
        except json.JSONDecodeError as e:
            raise InputError(str(meta), e.lineno, f"the judge log's metadata is not valid JSON: {e.msg}") from None
        except RecursionError:
            raise InputError(str(meta), None, "the judge log's metadata is nested too deeply") from None
        except ValueError as e:
            raise InputError(str(meta), refused_line(text, e), f"the judge log's metadata: {e}") from None
        if not isinstance(data, dict):
            raise InputError(str(meta), None, "the judge log's metadata must be a JSON object")
        # Copied into the run's identity and every export: endpoints, paths and keys redacted, each field bounded.
        self.source = {k: public_field(data[k]) for k in SOURCE_FIELDS if k in data}

    def _load(self, read_line: LogLineReader) -> None:
        h = hashlib.sha256()
        equal: dict[tuple[Answer, type], Answer] = {}
        for lineno, rec in read_records(self.path, limit=MAX_LOG_BYTES, what="judge log", digest=h):
            key, ans = read_line(rec, self.path, lineno)  # type: ignore[arg-type] (read_records: objects)
            ans = one_of_equal(equal, ans)
            old = self.answers.get(key)
            if old is not None and old.value != ans.value:
                raise InputError(self.path, lineno, f"conflicting answers for the same question: {old.value!r} "
                                                    f"and {ans.value!r}")
            self.answers[key] = ans
            if ans.value == INVALID:
                self.lines.setdefault(key, lineno)
        self.file_hash = h.hexdigest()
        if not self.answers:
            raise InputError(self.path, None, "the judge log has no answers")
        if all(a.value == INVALID for a in self.answers.values()):
            first = next(iter(self.answers.values()))
            raise InputError(self.path, None, f"none of the judge log's {len(self.answers):,} answers can be read "
                                              f"(e.g. {str(first.raw)[:40]!r}; expected one of the question's answer "
                                              "words): replayed, every decision would be 'invalid'")

    def identity(self) -> dict:
        out = {"spec": self.spec, "log_sha256": self.file_hash, "answers": len(self.answers)}
        if self.source is not None:
            out["source"] = self.source
            out["source_note"] = SIDECAR_NOTE
        return out

    def answer(self, query: Question) -> Answer:
        ans = self.answers.get(tuple(query.key))
        if ans is None:
            return Answer(MISSING, rationale=f"not in judge log {Path(self.path).name}")
        if ans.value == INVALID:
            self.unreadable_asked[self.lines[tuple(query.key)]] = None
        return ans

    def unreadable_where(self) -> str:
        lines = sorted(self.unreadable_asked)
        if not lines:
            return ""
        more = f" and {len(lines) - 3:,} more" if len(lines) > 3 else ""
        # the file's name, as the run's public judge spec gives it (a full path differs by machine, and is private)
        return f"{Path(self.path).name} line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines[:3]))}{more}"


def one_of_equal(equal: dict[tuple[Answer, type], Answer], answer: Answer) -> Answer:
    """One object for equal answers (frozen) of a log: 168,000 yes / no lines held an Answer and its raw text each
    (#38). The score's type is in the key: 1 and 1.0 are equal, but spell differently in JSON."""
    return equal.setdefault((answer, type(answer.score)), answer)


def replay_from_spec(arg: str, _options: object, read_log_line: LogLineReader | None) -> ReplayJudge:
    """The `replay:PATH` factory; the family names its log format.

    Raises:
        JudgeSpecError: no path, or the family reads no judge log of this kind.
        InputError: the log cannot be read.
    """
    if not arg:
        raise JudgeSpecError("replay needs a path: replay:PATH")
    if read_log_line is None:
        raise JudgeSpecError("this family reads no span judge log; it replays its own log format")
    return ReplayJudge(arg, read_log_line)
