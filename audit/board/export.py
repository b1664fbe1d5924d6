"""The paper's table of a board: one row per system, rendered as JSON, CSV or a booktabs LaTeX table.

One row rule (`board_rows`) makes the numbers; every format renders those rows and nothing else, so JSON, CSV
and LaTeX carry the same numbers. A row holds the primary metric's judge-only value, the audited value (exact
after a full review, the estimate under a board plan or an ideation run's own plan, else reviewed so far) with its
fixed-n and anytime intervals, the judge's bias with its interval, the judge-only and audited ranks and the rank
set. Text reaches CSV through `csv_cell`
(`write_csv`) and LaTeX through `tex` and `ascii_tex`, the product's one escaping of each.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from sqlite_utils import Database

from audit.board import BOARD_FORMATS
from audit.board.table import EXACT, JOINT, NONE, NONE_ONE_RUN, RUN_PLAN, SAMPLED, board_table, conflicted_text
from audit.effective import DEFAULT_POLICY, POLICIES
from audit.errors import AuditError
from audit.outputs.cells import rejudge_version, tex, tex_metric_number, write_csv
from audit.outputs.tex_ascii import ascii_tex
from scoring.families import get_task
from scoring.families.base import MetricCell

COLUMNS = ("system", "run", "metric", "judge_only", "value", "value_is", "lo", "hi", "anytime_lo", "anytime_hi",
           "bias", "bias_lo", "bias_hi", "rank_judge", "rank_audited", "rank_best", "rank_worst")
VALUE_IS = {EXACT: "exact", JOINT: "estimate", RUN_PLAN: "estimate", NONE: "reviewed so far"}
RANKED_VALUE = {EXACT: "audited", JOINT: "estimated", RUN_PLAN: "estimated", NONE: "reviewed so far"}


def ranked_value_title(table: Mapping) -> str:
    """What the board's second rank ranks (`rank_audited`: the audited value, the estimate with a sample, the value
    reviewed so far without one), in words every surface heads its column and its rank with."""
    return RANKED_VALUE[table["interval"]]


def _ci(entry: Mapping | None) -> tuple[float | None, float | None]:
    ci = (entry or {}).get("ci")
    return (ci[0], ci[1]) if ci else (None, None)


def board_rows(table: Mapping) -> list[dict]:
    """The row rule: per system, the primary metric's numbers (`COLUMNS`; None where there is none)."""
    key, mode = table["metric"], table["interval"]
    rows = []
    for s in table["systems"]:
        est = (s["estimate"] or {}).get(key)
        bias = (s["bias"] or {}).get(key)
        value = est["value"] if mode in SAMPLED and est else s["audited"].get(key)
        lo, hi = _ci(est)
        any_lo, any_hi = _ci((est or {}).get("anytime"))
        b_lo, b_hi = _ci(bias)
        rank_set = s["rank_set"] or [None, None]
        rows.append({"system": s["system"], "run": s["run"], "metric": key, "judge_only": s["judge_only"].get(key),
                     "value": value, "value_is": VALUE_IS[mode], "lo": lo, "hi": hi,
                     "anytime_lo": any_lo, "anytime_hi": any_hi,
                     "bias": (bias or {}).get("value"), "bias_lo": b_lo, "bias_hi": b_hi,
                     "rank_judge": s["rank_judge"], "rank_audited": s["rank_audited"], "rank_best": rank_set[0],
                     "rank_worst": rank_set[1]})
    return rows


def _primary(table: Mapping) -> MetricCell:
    """The primary metric as a cell (how its numbers print: a P / R / F1 in percent, as the run's table does)."""
    m = next(m for m in table["metrics"] if m["key"] == table["metric"])
    return MetricCell(tuple(m["key"].split("/")), m["label"], higher_is_better=m["higher_is_better"], unit=m["unit"])


def caption_parts(table: Mapping) -> dict:
    """What the caption states, in plain words: metric, policy, what was reviewed, which interval."""
    rv = table["reviewed"]
    cell = _primary(table)
    interval = {EXACT: "every decision reviewed, so values are exact (intervals of zero width; a rank set is one rank, "
                       "or the ranks tied systems share)",
                JOINT: "95% intervals from the board's sampling plan, fixed-n (valid for a sample size fixed in "
                       "advance) and anytime (valid whenever reviewing stops); rank sets at 95% simultaneous "
                       "confidence (Bonferroni over the pairs)",
                RUN_PLAN: "95% intervals from the run's own sampling plan (the systems are compared inside one run), "
                          "fixed-n (valid for a sample size fixed in advance) and anytime (valid whenever reviewing "
                          "stops); rank sets at 95% simultaneous confidence (Bonferroni over the pairs)",
                NONE: f"none, since the {'run' if table.get('interval_explained') == NONE_ONE_RUN else 'board'} has "
                      "no sampling plan and not every decision is reviewed, so the audited values are reviewed so "
                      "far (the judge's labels elsewhere) and no interval is valid"}
    return {"metric": cell.label, "policy": table["policy"],
            "reviewed": f"{rv['decisions']} of {rv['of_decisions']} decisions reviewed{conflicted_text(rv)} "
                        f"({rv['documents']} of {rv['of_documents']} documents fully)",
            "interval": interval[table["interval"]] + (f"; {table['waiting_note']}" if table.get("waiting_note")
                                                       else "")}


def board_json(table: Mapping) -> dict:
    return {"board": table["board"], "family": table["family"], "runs": table["runs"],
            "rejudge_version": rejudge_version(), "metric": table["metric"],
            "effective_label_policy": {"name": table["policy"], "rule": POLICIES[table["policy"]]},
            "reviewed": table["reviewed"], "interval": table["interval"], "caption": caption_parts(table),
            "settled": table["settled"], "rows": board_rows(table)}


def board_csv(table: Mapping) -> str:
    return write_csv(list(COLUMNS), [[("" if r[c] is None else r[c]) for c in COLUMNS] for r in board_rows(table)])


def _interval(cell: MetricCell, lo: float | None, hi: float | None) -> str:
    if lo is None or hi is None:
        return "--"
    return f"[{tex_metric_number(cell, lo)}, {tex_metric_number(cell, hi)}]"


def _signed(cell: MetricCell, v: float | None) -> str:
    if v is None:
        return "--"
    text = tex_metric_number(cell, abs(v))
    return ("$-$" if v < 0 and text.strip("0.") else "$+$") + text


def board_latex(table: Mapping) -> str:
    """A booktabs table, one row per system: judge only, audited or estimated, its 95% interval, the judge's bias
    (judge only minus audited) with its interval, the rank by the judge and by the audited value (the CSV's two
    ranks) and the rank set; the caption states the metric, the policy, what was reviewed and which interval, and
    defines the bias only where a bias is shown. ASCII only; needs \\usepackage{booktabs}."""
    cell = _primary(table)
    parts = caption_parts(table)
    head = ranked_value_title(table).capitalize()
    lines = [r"% Rejudge board export. Needs \usepackage{booktabs}.", r"\begin{table}[t]", r"\centering", r"\small",
             r"\begin{tabular}{lrrrrrrrrr}", r"\toprule",
             f"System & Judge only & {head} & 95\\% fixed-n & 95\\% anytime & Bias & Bias 95\\% & Rank (judge) & "
             f"Rank ({head.lower()}) & Rank set \\\\",
             r"\midrule"]
    rows = board_rows(table)
    for r in rows:
        rank_set = "--" if r["rank_best"] is None else (
            str(r["rank_best"]) if r["rank_best"] == r["rank_worst"] else f"{r['rank_best']}--{r['rank_worst']}")
        lines.append(" & ".join([tex(r["system"]), tex_metric_number(cell, r["judge_only"]),
                                 tex_metric_number(cell, r["value"]), _interval(cell, r["lo"], r["hi"]),
                                 _interval(cell, r["anytime_lo"], r["anytime_hi"]),
                                 _signed(cell, r["bias"]), _interval(cell, r["bias_lo"], r["bias_hi"]),
                                 "--" if r["rank_judge"] is None else str(r["rank_judge"]),
                                 "--" if r["rank_audited"] is None else str(r["rank_audited"]), rank_set]) + r" \\")
    percent = " (in percent)" if cell.path[-1] in ("precision", "recall", "f1") else ""
    caption = (f"{tex(get_task(table['family']).title)}, board {tex(table['board'])}: {tex(parts['metric'])}"
               f"{percent} per system, judge only vs {head.lower()}; effective labels: {tex(parts['policy'])} policy; "
               f"{tex(parts['reviewed'])}; interval: {tex(parts['interval'])}"
               + (f"; bias = judge only minus {head.lower()}." if any(r["bias"] is not None for r in rows) else
                  "; no bias is shown without an estimate of a full review."))
    label = "tab:rejudge-board-" + "".join(c if c.isascii() and c.isalnum() else "-" for c in table["board"])[:60]
    lines += [r"\bottomrule", r"\end{tabular}", f"\\caption{{{caption}}}", f"\\label{{{label}}}", r"\end{table}"]
    return ascii_tex("\n".join(lines) + "\n")


def export_board(db: Database, name: str, fmt: str, *, policy: str = DEFAULT_POLICY) -> str:
    """Board `name` in format `fmt` (`BOARD_FORMATS`) under the effective-label `policy`."""
    if fmt not in BOARD_FORMATS:
        raise AuditError(f"unknown board export format {fmt!r}; use one of {', '.join(BOARD_FORMATS)}")
    table = board_table(db, name, policy=policy)
    if fmt == "json":
        return json.dumps(board_json(table), indent=1, ensure_ascii=False) + "\n"
    if fmt == "csv":
        return board_csv(table)
    return board_latex(table)
