"""The library battery (`scoring.families.checks`) is tested by what it refuses: each planted family bug, a
subclass of a real family that breaks one rule the way a family author plausibly would, must fail its check."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from audit.demo import DATA
from audit.rescoring import run_options
from audit.store.database import open_db, run_row
from audit.views import decisions
from scoring.families import TASKS
from scoring.families.checks import (
    ContractError,
    DocCase,
    check_aggregate_is_a_fold,
    check_board_cells,
    check_family,
    check_label_from_answers,
    check_reviews_can_move_the_score,
    check_stratum_reads_judge_side_only,
    check_totals_cells_need_only_totals,
    check_trivial_is_certain,
)
from tests.conftest import copy_of

BASE = type(TASKS["chimera"])
MATCH, NO_MATCH = TASKS["chimera"].label_schemes["entity_pair"].labels


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, demo_template: Path) -> tuple[list[DocCase], Mapping]:
    fam = TASKS["chimera"]
    demo = fam.demo_runs(DATA)[0]
    db = open_db(copy_of(demo_template, tmp_path_factory.mktemp("plants") / "plants.db"))
    row = run_row(db, demo.name)
    by_doc: dict[str, list[dict]] = {}
    for d in decisions(db, demo.name):
        by_doc.setdefault(d["doc"], []).append({k: d[k] for k in ("kind", "type", "left", "right", "judge",
                                                                   "detail")})
    docs = [DocCase(r["doc_id"], json.loads(r["payload"]), by_doc.get(r["doc_id"], []))
            for r in db.query("SELECT doc_id, payload FROM documents WHERE run_id = ? ORDER BY idx", [row["id"]])]
    return docs, run_options(row)


class NotAFold(BASE):
    """Averages each document's metrics instead of taking the metrics of the summed counts."""

    def aggregate(self, per_doc, options=None, *, total=None):
        docs = list(per_doc() if callable(per_doc) else per_doc)
        first = self.metrics(docs[0], None, options)
        return first


class KeepsState(BASE):
    """Metrics computed from the first counts it ever saw (state kept outside the counts)."""

    def metrics(self, total, per_doc=None, options=None):
        if not hasattr(self, "_seen"):
            self._seen = total
        return super().metrics(self._seen, per_doc, options)


class EverythingCertain(BASE):
    """Calls every decision certain."""

    def certain_label(self, decision: Mapping) -> str | None:
        return MATCH


class CertainByTheJudge(BASE):
    """Calls a decision certain when the judge matched it (the judge's answer is not the question)."""

    def certain_label(self, decision: Mapping) -> str | None:
        return MATCH if decision["judge"] == MATCH else None


class SkipsWhatTheJudgeContradicted(BASE):
    """Identical strings are trivial whatever the judge said (the rule before issue 40.1: the queue then hid the
    judge's worst errors)."""

    def trivial(self, decision: Mapping) -> bool:
        return self.certain_label(decision) is not None


class EitherOrder(BASE):
    """A match when either span order says yes, where the paper requires both."""

    def label_from_answers(self, decision: Mapping, answers: Sequence[str]) -> str:
        return MATCH if "yes" in answers else NO_MATCH


class StratumReadsHumans(BASE):
    def sampling_stratum(self, decisions: Sequence[Mapping]) -> str:
        if any(d.get("effective") not in (None, d["judge"]) for d in decisions):
            return "overruled"
        return super().sampling_stratum(decisions)


class ReviewsCannotMove(BASE):
    """Counts that read the judge's labels kept on the payload, whatever the reviews say."""

    def counts(self, payload: Mapping, labels):
        return super().counts(payload, {k: MATCH for k in labels})


class TotalsFromDocuments(BASE):
    """Claims its headline is a function of the totals, but reads the documents (macro over documents)."""

    needs_doc_counts = True

    def sampled_by(self, cell):
        return "totals"

    def metrics(self, total, per_doc=None, options=None):
        out = super().metrics(total, per_doc, options)
        if per_doc:
            out = json.loads(json.dumps(out))
            for cell in self.headline:
                parent = out
                for p in cell.path[:-1]:
                    parent = parent[p]
                parent[cell.path[-1]] = len(per_doc) / 1000
        return out


class BoardCellOfAnotherFamily(BASE):
    """Shows on a board a cell its metrics never hold (a path copied from another family's headline)."""

    def board_cells(self, metrics):
        return (*self.headline, TASKS["retrieval"].headline[0])


PLANTS = [
    (BoardCellOfAnotherFamily, check_board_cells, True),
    (NotAFold, check_aggregate_is_a_fold, True),
    (KeepsState, check_aggregate_is_a_fold, True),
    (TotalsFromDocuments, check_totals_cells_need_only_totals, True),
    (EverythingCertain, check_trivial_is_certain, False),
    (CertainByTheJudge, check_trivial_is_certain, False),
    (SkipsWhatTheJudgeContradicted, check_trivial_is_certain, False),
    (EitherOrder, check_label_from_answers, False),
    (StratumReadsHumans, check_stratum_reads_judge_side_only, False),
    (ReviewsCannotMove, check_reviews_can_move_the_score, False),
]


@pytest.mark.parametrize(("plant", "check", "with_options"), PLANTS, ids=[p.__name__ for p, _, _ in PLANTS])
def test_a_planted_family_bug_fails_its_check(run, plant, check, with_options) -> None:
    docs, options = run
    fam = plant()
    with pytest.raises(ContractError, match=check.__name__.removeprefix("check_").split("_")[0]):
        check(fam, docs, options) if with_options else check(fam, docs)
    assert check_family(plant(), docs, options), f"check_family passed {plant.__name__}"


def test_the_unplanted_family_passes_every_check(run) -> None:
    docs, options = run
    assert check_family(BASE(), docs, options) == []
