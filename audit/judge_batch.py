"""Judge work at scale on engines built for it: Batch API request files out, result files in, the cache between.

`export_requests` writes every question of a run that the cache cannot answer as one OpenAI Batch API request line
`{"custom_id": <the question's cache key>, "method": "POST", "url": "/v1/chat/completions", "body": <exactly the
body the live judge would POST>}`. The same file runs on the OpenAI Batch API and on vLLM's offline
`python -m vllm.entrypoints.openai.run_batch -i requests.jsonl -o results.jsonl --model ...`.

`import_results` reads a results file in that output format (`{"custom_id", "response": {"status_code", "body":
<chat completion>}, "error"}`), reads each reply with the question's own parser, and caches the answers under
their custom_id by the one rule the live cache uses (`is_kept`: every answer but `missing`, so an unreadable
reply is cached `invalid`, as a live one is); `score` with the same judge spec and endpoint then sends 0
requests. A line that is not JSON (a truncated file), names an unknown custom_id, carries an error or a non-200
status, has no reply text, or gives an answer outside its question's vocabulary (`Question.answers`) is reported
and never cached.

Only a family whose judge is an LLM (a `batchable` judge: `openai:` / `openai-json:`) has requests to export;
for the others the command says so instead of writing an empty file.

Both rebuild the run's questions from its inputs with the family's own `decide`, driven by a transport that
records questions instead of asking them, so the questions (and keys) are exactly those of a live run.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from sqlite_utils import Database

from audit.errors import AuditError
from audit.judge_batch_args import LLM_FORMS, add_arguments  # noqa: F401 (re-exported)
from audit.output_paths import OutputRule
from audit.runs import plan_run
from audit.store.database import SqliteAnswerCache
from scoring.errors import InputError, JudgeSpecError, parse_json
from scoring.jsonl import read_lines
from scoring.judges.answer import CANCELLED, MISSING, Answer, JudgeStats, is_kept, token_count
from scoring.judges.openai_compat import same_model
from scoring.judges.question import Question, answer_problem
from scoring.judges.redact import public_text
from scoring.judges.registry import JudgeOptions
from scoring.judges.transport import AnswerCallback, Judge, Progress

BATCH_URL = "/v1/chat/completions"
UNSENT_KEY = "judge-batch-sends-no-request"
"""The key judge-batch builds the judge with when none is set: the request files carry no key, nothing is sent."""
MAX_PROBLEMS_SHOWN = 50


class _Recorder(Judge):
    """A transport that asks nothing: it records the questions it is given (the ones the cache lacks) and answers
    each `missing` / cancelled, so `decide` finishes without a request and without raising."""

    cacheable = True

    def __init__(self, inner: Judge) -> None:
        self.inner = inner
        self.spec = inner.spec
        self.asked: list[Question] = []

    def identity(self) -> dict:
        return self.inner.identity()

    def cache_key(self, query: Question) -> str:
        return self.inner.cache_key(query)

    def ask_many(self, queries: Sequence[Question], progress: Progress | None = None,  # noqa: ARG002
                 on_answer: AnswerCallback | None = None) -> list[Answer]:  # noqa: ARG002
        self.asked.extend(queries)
        return [Answer(MISSING, rationale=CANCELLED) for _ in queries]


def _questions(db: Database, task: str, inputs: Mapping[str, str], judge_spec: str, *,
               uncached_only: bool) -> tuple[Judge, SqliteAnswerCache, dict[str, Question], JudgeStats]:
    """The run's questions by cache key (only those the cache lacks, or all), with the live judge and the cache.

    Raises:
        AuditError: the family asks no LLM, or the spec names no LLM judge.
    """
    # Nothing is sent: no API key is needed (api.openai.com insists on one only for requests) and no local server
    # is probed for its slots (concurrency is no part of a cache key).
    options = JudgeOptions(api_key=os.environ.get("OPENAI_API_KEY") or UNSENT_KEY, concurrency=1)
    try:
        plan = plan_run(db, task, inputs, judge_spec, judge_options=options)
    except JudgeSpecError as e:  # e.g. a family that asks no model: its message says so
        raise AuditError(f"judge-batch cannot ask judge {judge_spec!r} for {task}: {e}") from None
    judge = plan.judge
    if not judge.batchable:
        raise AuditError(f"judge-batch needs an LLM judge ({LLM_FORMS}), not {judge.spec!r}")
    cache = SqliteAnswerCache(db, judge.spec, judge.identity())
    recorder = _Recorder(judge)
    _, stats = plan.task.decide(plan.loaded, recorder, cache if uncached_only else None, None)  # type: ignore[arg-type]
    by_key: dict[str, Question] = {}
    for q in recorder.asked:
        by_key.setdefault(judge.cache_key(q), q)
    # a new cache object: the judge's identity names its prompt only once it has seen the questions
    return judge, SqliteAnswerCache(db, judge.spec, judge.identity()), by_key, stats


def export_requests(db: Database, task: str, inputs: Mapping[str, str], judge_spec: str, out: str | Path,
                    rule: OutputRule | None = None) -> dict:
    """Write every uncached question of the run as a Batch API request line to `out`.

    Returns:
        {"questions" (distinct questions of the run), "cached", "exported", "out", "judge", "prompt_hash"}.
    Raises:
        InputError, JudgeSpecError: bad inputs or judge spec. AuditError: not an LLM judge, or `out` refused or
        not written (`audit.output_paths`: written whole or not at all).
    """
    rule = rule or OutputRule(inputs=tuple(inputs.values()), force=True)
    p = rule.check(out)
    judge, _, by_key, stats = _questions(db, task, inputs, judge_spec, uncached_only=True)
    lines = [json.dumps({"custom_id": k, "method": "POST", "url": BATCH_URL,
                         "body": judge.request_body(q)}, ensure_ascii=False)  # type: ignore[attr-defined]
             for k, q in by_key.items()]
    rule.write(p, "".join(line + "\n" for line in lines))
    ident = judge.identity()
    return {"questions": stats.distinct_queries, "cached": stats.cached, "exported": len(lines), "out": str(p),
            "judge": judge.spec, "prompt_hash": ident.get("prompt_hash")}


def _reply(rec: Mapping) -> tuple[str, str | None, int, int] | str:
    """(content, finish_reason, prompt tokens, completion tokens) of a result line, or why it has none."""
    err = rec.get("error")
    if err:
        return "error " + _error_text(err)
    resp = rec.get("response")
    if not isinstance(resp, Mapping):
        return "no response object"
    status = resp.get("status_code", 200)
    body = resp.get("body") if "body" in resp else resp
    if status != 200:
        msg = body.get("error", {}).get("message") if isinstance(body, Mapping) and \
            isinstance(body.get("error"), Mapping) else None
        return f"HTTP {status}" + (f": {str(msg)[:200]}" if msg else "")
    choices = body.get("choices") if isinstance(body, Mapping) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        return "malformed response: no choices"
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if not isinstance(content, str):
        return "malformed response: no message content"
    usage = body.get("usage") if isinstance(body.get("usage"), Mapping) else {}
    finish = choices[0].get("finish_reason")
    return (content, finish if isinstance(finish, str) else None, token_count(usage.get("prompt_tokens")),
            token_count(usage.get("completion_tokens")))


def _model_of(rec: Mapping) -> str | None:
    """The `model` a result line's response body names (which model answered), or None when it names none."""
    resp = rec.get("response")
    body = resp.get("body") if isinstance(resp, Mapping) and "body" in resp else resp
    model = body.get("model") if isinstance(body, Mapping) else None
    return model if isinstance(model, str) and model else None


def _error_text(err: object) -> str:
    """A result line's `error`, with its message: OpenAI's `{"code", "message"}`, vLLM's `ErrorResponse`
    (`{"object": "error", "message", "type", "code"}`, or the message nested in `{"error": {...}}`), or text.

    >>> _error_text({"object": "error", "message": "prompt too long", "type": "BadRequestError", "code": 400})
    '400 prompt too long'
    >>> _error_text({"error": {"message": "no such model", "code": 404}}), _error_text("boom")
    ('404 no such model', 'boom')
    """
    if isinstance(err, Mapping) and isinstance(err.get("error"), Mapping) and not err.get("message"):
        err = err["error"]
    if isinstance(err, Mapping):
        code, message = err.get("code"), err.get("message")
        if message is None:
            message = json.dumps({k: v for k, v in err.items() if k != "code"}, ensure_ascii=False, default=str)
        text = " ".join(str(x) for x in (code, message) if x not in (None, ""))
    else:
        text = str(err)
    text = " ".join(text.split())
    return text[:200] + ("…" if len(text) > 200 else "")


def import_results(db: Database, task: str, inputs: Mapping[str, str], judge_spec: str,
                   results: str | Path) -> dict:
    """Cache the answers of a Batch API / vLLM run-batch results file for the run's questions.

    Returns:
        {"lines", "imported", "values" (imported answers by value), "already_cached", "problems" (count),
         "problem_lines" (the first ones: line, custom_id, reason), "remaining" (questions still uncached)}.
    Raises:
        InputError: bad inputs, or a results line that is not UTF-8 (`FILE:LINE`). JudgeSpecError: bad judge spec.
        AuditError: results file missing, or a judge that is not an LLM.
    """
    p = Path(results)
    if not p.is_file():
        raise AuditError(f"{p}: results file not found")
    judge, cache, by_key, _ = _questions(db, task, inputs, judge_spec, uncached_only=False)
    cached = cache.get_many(list(by_key))
    answers: dict[str, Answer] = {}
    problems: list[dict] = []
    already = lines = 0
    seen: set[str] = set()

    def problem(lineno: int, cid: object, reason: str) -> None:
        # a batch error result may quote the request's credentials: reasons are printed and returned
        problems.append({"line": lineno, "custom_id": cid if isinstance(cid, str) else None,
                         "reason": public_text(reason)})

    for lineno, line in read_lines(p, what="results file"):
        if not line.strip():
            continue
        lines += 1
        try:
            rec = parse_json(line, str(p), lineno)
        except InputError:
            problem(lineno, None, "not valid JSON (a truncated or damaged file?)")
            continue
        cid = rec.get("custom_id") if isinstance(rec, dict) else None
        if not isinstance(cid, str):
            problem(lineno, None, "no custom_id")
            continue
        if cid not in by_key:
            problem(lineno, cid, "unknown custom_id: not a question of these inputs with this judge and endpoint")
            continue
        if cid in seen:
            problem(lineno, cid, "custom_id repeated; the first line was used")
            continue
        seen.add(cid)
        reply = _reply(rec)  # type: ignore[arg-type] (a dict: it has a custom_id)
        if isinstance(reply, str):
            problem(lineno, cid, reply)
            continue
        answered = _model_of(rec)  # type: ignore[arg-type]
        configured = getattr(judge, "model", None)
        if answered is not None and isinstance(configured, str) and not same_model(answered, configured):
            problem(lineno, cid, f"answered by model {answered[:80]!r}, not the judge's {configured!r}: not cached "
                                 "(the run would name a model that did not answer; import it with "
                                 f"--judge openai:{answered[:80]})")
            continue
        if cid in cached:
            already += 1
            continue
        content, finish, pt, ct = reply
        a = judge.answer_from_reply(by_key[cid], content, finish, pt, ct)  # type: ignore[attr-defined]
        if (why := answer_problem(by_key[cid], a)) is not None:
            problem(lineno, cid, why)
        elif is_kept(a):
            answers[cid] = a
    if not lines:
        raise AuditError(f"{p}: the results file has no result line: nothing was imported")
    if not answers and not already:
        shown = "; ".join(f"line {x['line']}: {x['reason']}" for x in problems[:3])
        raise AuditError(f"{p}: none of its {lines} result lines could be imported, nothing was cached ({shown}"
                         f"{'; …' if len(problems) > 3 else ''})")
    cache.put_many(answers)
    values: dict[str, int] = {}
    for a in answers.values():
        values[a.value] = values.get(a.value, 0) + 1
    return {"lines": lines, "imported": len(answers), "values": values, "already_cached": already,
            "problems": len(problems), "problem_lines": problems[:MAX_PROBLEMS_SHOWN],
            "remaining": len(by_key) - len(cached) - len(answers), "judge": judge.spec}


def run_command(db: Database, args: argparse.Namespace, input_names: Sequence[str],
                rule: OutputRule | None = None) -> dict:
    """`judge-batch export|import` with parsed arguments."""
    inputs = {n: getattr(args, n) for n in input_names if getattr(args, n, None)}
    if args.action == "export":
        if not args.out:
            raise AuditError("judge-batch export needs --out FILE")
        return export_requests(db, args.task, inputs, args.judge, args.out, rule)
    if not args.results:
        raise AuditError("judge-batch import needs the results file: judge-batch import RESULTS.jsonl --task ...")
    return import_results(db, args.task, inputs, args.judge, args.results)
