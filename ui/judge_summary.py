"""The run's judge statistics in words (the overview's "Judge requests" panel): what was asked, sent, cached,
retried, unreadable and missing, worded for the kind of judge that answered (a replay log or a live server)."""

from __future__ import annotations


def _is_replay(spec: str) -> bool:
    return spec.strip().partition(":")[0] == "replay"


def _n(count: int, one: str, many: str) -> str:
    return f"{count:,} {one if count == 1 else many}"


def judge_requests_text(judge: dict, spec: str = "") -> str:
    """The run's judge statistics (`JudgeStats.as_dict`, as stored in the run's summary) in words.

    Retries are counted twice over: the requests that needed one (`retried`) and the retries in all (`retries`);
    a run stored before `retried` was counted says only the latter. A missing answer is "not in the judge log"
    for a replay judge, "no answer from the server" for a live one.
    """
    asked, sent, cached = judge.get("distinct_queries", 0), judge.get("requests", 0), judge.get("cached", 0)
    parts = [f"The scorer needed {asked:,} distinct judge questions (each span order counts as one question). "
             f"{cached:,} answers came from the cache (an earlier run with the same judge and prompt) and "
             f"{_n(sent, 'request was', 'requests were')} sent to the judge."]
    if judge.get("paper_calls"):
        parts.append(f"The paper's scorer, which asks again for every repeated pair, would have made "
                     f"{judge['paper_calls']:,} calls.")
    retries, retried = judge.get("retries", 0), judge.get("retried")
    if retries and retried:
        parts.append(f"{_n(retried, 'request was', 'requests were')} retried after a transient error "
                     f"({_n(retries, 'retry', 'retries')} in all).")
    elif retries:
        parts.append(f"{_n(retries, 'retry', 'retries')} after transient errors.")
    if judge.get("failed"):
        parts.append(f"{_n(judge['failed'], 'request', 'requests')} failed after every retry.")
    first = judge.get("invalid_before_reask", 0)
    if first:
        parts.append(f"{_n(first, 'first reply', 'first replies')} could not be read and "
                     f"{'was' if first == 1 else 'were'} asked once more; {judge.get('invalid', 0):,} still could "
                     "not be read after that (labelled 'invalid').")
    elif judge.get("invalid"):
        parts.append(f"{_n(judge['invalid'], 'question', 'questions')} gave an answer that could not be read "
                     "(labelled 'invalid').")
    if judge.get("missing"):
        where = "not in the judge log" if _is_replay(spec) else "without an answer from the server"
        parts.append(f"{_n(judge['missing'], 'question was', 'questions were')} {where} (labelled 'invalid').")
    if judge.get("cancelled"):
        parts.append("Scoring was cancelled before every question was answered.")
    return " ".join(parts)
