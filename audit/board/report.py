"""The audit report's board section: for each board a run belongs to, the systems side by side — a dot-and-interval
chart per system (judge only vs audited or estimated), the rank sets, and in words which pairs of the ranking hold.

Numbers come from `audit.board.export.board_rows` (the row rule of every board export) over `board_table`, so the
report shows what `board export` writes; they print by the number rule (`audit.numbers.format_value`) and every
text is escaped (`html.escape`). `audit.outputs.report` wraps each part as one of its sections: this module does
not import it (the report imports this one).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from sqlite_utils import Database

from audit.board.export import board_rows, caption_parts, ranked_value_title
from audit.board.store import boards_of_run
from audit.board.table import board_table
from audit.numbers import EMPTY, format_value
from audit.outputs import figures
from audit.views import RunView


class BoardPart(NamedTuple):
    title: str
    body: list[str]
    """HTML fragments, every text escaped."""
    figures: list[tuple[str, str, dict, str]]
    """(slug, title, Vega-Lite spec, caption) per chart."""


def _esc(v: object) -> str:
    return html.escape("" if v is None else str(v), quote=True)


def _interval(lo: float | None, hi: float | None, unit: str) -> str:
    return EMPTY if lo is None or hi is None else f"[{format_value(lo, unit)}, {format_value(hi, unit)}]"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_esc(v)}</td>" for v in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def board_points(table_json: Mapping) -> list[dict]:
    """The chart's points: per system its judge-only value and the value its second rank ranks (audited,
    estimated or reviewed so far: `ranked_value_title`) with the interval (none where no interval is valid)."""
    out = []
    for r in board_rows(table_json):
        out.append({"label": r["system"], "series": "judge only", "value": r["judge_only"], "low": None,
                    "high": None, "n": None})
        series = ranked_value_title(table_json)  # the table's column and its rank say the same word
        out.append({"label": r["system"], "series": series, "value": r["value"], "low": r["lo"], "high": r["hi"],
                    "n": None})
    return [p for p in out if p["value"] is not None]


def board_part(view: RunView, name: str, index: int) -> BoardPart:
    """One board's part of the run's report, under the view's policy."""
    t = board_table(view.db, name, policy=view.policy)
    parts = caption_parts(t)
    unit = next(m["unit"] for m in t["metrics"] if m["key"] == t["metric"])
    body = [f"<p>{_esc(parts['metric'])}, {len(t['systems'])} systems ({_esc(t['family'])}); "
            f"{_esc(parts['reviewed'])}; {t['shared_questions']} questions shared between runs (one review settles "
            f"each in all); effective labels: {_esc(parts['policy'])} policy. Interval: {_esc(parts['interval'])}.</p>"]
    if t.get("judges_differ"):
        body.append(f"<p><strong>Judges differ:</strong> {_esc(t['judges_differ'])}.</p>")
    rows = []
    for r in board_rows(t):
        rank_set = EMPTY if r["rank_best"] is None else (
            str(r["rank_best"]) if r["rank_best"] == r["rank_worst"] else f"{r['rank_best']}–{r['rank_worst']}")
        bias = EMPTY if r["bias"] is None else (f"{format_value(r['bias'], unit)} "
                                                f"{_interval(r['bias_lo'], r['bias_hi'], unit)}")
        rows.append([r["system"] + ("" if r["system"] == r["run"] else f" ({r['run']})"),
                     format_value(r["judge_only"], unit), format_value(r["value"], unit), r["value_is"],
                     _interval(r["lo"], r["hi"], unit), bias, format_value(r["rank_judge"], "rank"),
                     format_value(r["rank_audited"], "rank"), rank_set])
    body.append(_table(["system", "judge only", ranked_value_title(t), "which", "95% interval", "judge bias",
                        "rank (judge)", f"rank ({ranked_value_title(t)})", "rank set"], rows))
    body.append("<ul>" + "".join(f"<li>{_esc(w)}</li>" for w in t["settled"]) + "</ul>")
    charts = []
    points = board_points(t)
    if points:
        against = ranked_value_title(t)
        charts.append((f"board-{index}", f"Board {name}",
                       figures.board_intervals(points, metric=parts["metric"]).to_dict(),
                       f"Board {name}: {parts['metric']} per system, judge only vs {against}"
                       + ("" if t["interval"] == "none" else " with 95% intervals")))
    return BoardPart(f"Board {name}: the systems side by side", body, charts)


def board_parts(view: RunView) -> list[BoardPart]:
    """A part per board the run belongs to, by board name."""
    return [board_part(view, name, i) for i, name in enumerate(boards_of_run(view.db, view.name))]


def boards_estimating(db: Database, run: str) -> list[str]:
    """The boards holding `run` whose one sample is drawn: each estimates the run's numbers (the Leaderboard, the
    report's board section), also when the run has no sampling plan of its own."""
    return [b for b in boards_of_run(db, run)
            if db.execute("SELECT 1 FROM board_plans WHERE board = ?", [b]).fetchone()]


def boards_estimating_text(boards: Sequence[str]) -> str:
    """What a run's own pages say of `boards_estimating` where they would say the run has no estimate ('' for none):
    the Scores page and the report said "no sampling plan, so no estimate" beside a board's estimate of the run."""
    if not boards:
        return ""
    return (f"a board's sample holds this run ({', '.join(boards)}): its estimate of this run's numbers is on the "
            "Leaderboard and in the report's board section")
