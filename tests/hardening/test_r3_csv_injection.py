"""CSV formula injection (issue #34, third round): every CSV export of the product, with a hostile string planted in
every text field that reaches it (spans, types, documents, reviewer names, notes, errata fields), comes out with no
cell a spreadsheet would run, including the forms that passed the second round's guard (behind a blank, behind an
invisible character, full-width); numbers stay numbers."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable

import pytest

from audit.outputs.cells import csv_cell
from audit.outputs.errata_export import export_errata_csv
from audit.outputs.export import export_csv
from audit.review.errata import add_erratum
from audit.review.reviews import add_review
from devtools.injection_oracles import runs_as_formula

HOSTILE = ["=1+1", " =HYPERLINK(\"http://evil.invalid\")", "\t=1", "\r=1", "\n=1", "\uff1dcmd|'/C calc'!A0",
           "\uff0b1+1", "\uff0d1+1", "\uff20SUM(A1)", "\u200b=1", "\u3000=1", "\ufe62x", "+1+1", "-1+1", "@SUM(A1)",
           "\u00a0@x"]
PROBLEM = "wrong item"


def test_the_oracle_sees_every_hostile_form() -> None:
    assert all(runs_as_formula(h) for h in HOSTILE)
    assert not any(runs_as_formula(h) for h in ("'=1+1", "a=b", "-0.16", "12"))


def test_csv_cell_keeps_numbers_and_neutralises_text() -> None:
    assert [csv_cell(v) for v in (-0.16, 3, "-0.16", "+2", "1e-5")] == [-0.16, 3, "-0.16", "+2", "1e-5"]
    assert all(str(csv_cell(h)).startswith("'") for h in HOSTILE)


def _plant(db) -> None:  # noqa: ANN001 (sqlite_utils Database)
    """A hostile string in every text field the CSV exports show."""
    run_id = db.execute("SELECT id FROM runs WHERE name = 'mixed'").fetchone()[0]
    ids = [r[0] for r in db.execute("SELECT id FROM decisions WHERE run_id = ? ORDER BY id", [run_id])]
    with db.conn:
        for i, d in enumerate(ids[:len(HOSTILE)]):
            h = HOSTILE[i]
            db.execute("UPDATE decisions SET left = ?, right = ?, type = ? WHERE id = ?",
                       [h + f" L{i}", h + f" R{i}", h + f" T{i}", d])
    doc = db.execute("SELECT doc_id FROM decisions WHERE id = ?", [ids[0]]).fetchone()[0]
    for i, h in enumerate(HOSTILE):
        name = f"rev{i}"
        add_review(db, "mixed", ids[i], "match", name, note=h)
        add_erratum(db, "mixed", doc, h + f" item{i}", PROBLEM, name, correction=h, note=h)
    with db.conn:  # names as a file import could carry them (the CSV header holds them too)
        for i, h in enumerate(HOSTILE):
            db.execute("UPDATE reviews SET reviewer = ? WHERE reviewer = ?", [h + f" r{i}", f"rev{i}"])
            db.execute("UPDATE errata SET reviewer = ? WHERE reviewer = ?", [h + f" r{i}", f"rev{i}"])


EXPORTS: dict[str, Callable] = {"decisions": lambda db: export_csv(db, "mixed"),
                                "errata": lambda db: export_errata_csv(db, "mixed")}


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_every_csv_export_neutralises_every_planted_text(name: str, db_with_run) -> None:
    _plant(db_with_run)
    text = EXPORTS[name](db_with_run)
    cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
    live = [c for c in cells if runs_as_formula(c)]
    assert live == []
    shown = "\n".join(cells)
    missing = [h for h in HOSTILE if h.strip("\r\n") not in shown]
    assert missing == []  # every hostile form reached the export (so the check above saw it)
