"""Which of two judges the human reviewers agreed with more, per decision type.

Two runs of the same inputs with different judges make the same decisions (same document, kind, type, spans);
reviewers may have labelled some of them in either run. Each reviewer's current label on a shared decision (their
label in run A, else in run B) is compared with judge A's and judge B's label.
"""

from __future__ import annotations

from collections import defaultdict

from sqlite_utils import Database

from audit.views import RunRef, as_view


def _key(d: dict) -> tuple:
    return (d["doc"], d["kind"], d["type"], d["left"], d["right"])


def humans_vs_judges(db: Database, run_a: RunRef, run_b: RunRef) -> list[dict]:
    """Rows per (kind, type) and one `all` row, only where humans labelled shared decisions:
    `kind`, `type`, `decisions` (shared decisions with a human label), `labels` (reviewer × decision pairs),
    `agree_a` / `agree_b` (labels equal to judge A's / B's), `rate_a` / `rate_b` (shares), `diff` (rate A − rate B)
    and `closer` (`A`, `B` or `even`)."""
    da = {_key(d): d for d in as_view(db, run_a).decisions()}
    db_ = {_key(d): d for d in as_view(db, run_b).decisions()}
    groups: dict[tuple[str, str], dict] = defaultdict(lambda: {"decisions": 0, "labels": 0, "agree_a": 0,
                                                               "agree_b": 0})
    for k, a in da.items():
        b = db_.get(k)
        if b is None:
            continue
        humans = {**b["human"], **a["human"]}
        if not humans:
            continue
        for g in ((a["kind"], a["type"]), ("all", "")):
            c = groups[g]
            c["decisions"] += 1
            c["labels"] += len(humans)
            c["agree_a"] += sum(lab == a["judge"] for lab in humans.values())
            c["agree_b"] += sum(lab == b["judge"] for lab in humans.values())
    rows = []
    for (kind, typ), c in sorted(groups.items(), key=lambda kv: (kv[0][0] == "all", kv[0])):
        ra, rb = c["agree_a"] / c["labels"], c["agree_b"] / c["labels"]
        rows.append({"kind": kind, "type": typ, **c, "rate_a": ra, "rate_b": rb, "diff": ra - rb,
                     "closer": "A" if ra > rb else "B" if rb > ra else "even"})
    return rows
