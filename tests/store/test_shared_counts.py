"""Documents with equal original counts share one decoded dict and one count vector (#38: 100,000 CHIMERA
abstracts have 114 distinct counts; decoding and flattening each held 800 MB and took 10 s in `queue`), and the
partial audit's numbers are those of decoding and flattening every document on its own."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import audit.review.sampling as sampling
from audit.rescoring import original_counts
from audit.review.count_vectors import flatten
from audit.review.sampling import _blocks_state, create_plan, estimate, load_plan, next_sample
from audit.store.database import open_db
from audit.views import load_view
from tests.conftest import copy_of
from tests.store.test_sampling_reads import _one_per_family_and_judge, _plannable, _review_mix


@pytest.fixture(scope="module")
def demo_db(demo_template, tmp_path_factory):
    db = open_db(copy_of(demo_template, tmp_path_factory.mktemp("shared") / "demo.db"))
    yield db
    db.conn.close()


def _decoded_one_by_one(db, run_id: int) -> list[tuple[str, dict]]:
    """`original_counts` before #38's sharing: every document's counts decoded on its own."""
    return [(doc, json.loads(c)) for doc, c in
            db.execute("SELECT doc_id, counts FROM documents WHERE run_id = ? ORDER BY idx", [run_id])]


def test_documents_with_equal_counts_share_one_decoded_dict(demo_db):
    run = next(r for r in _plannable(demo_db) if load_view(demo_db, r).task.name == "chimera")
    view = load_view(demo_db, run)
    rows = original_counts(demo_db, view.id)
    texts = dict(demo_db.execute("SELECT doc_id, counts FROM documents WHERE run_id = ?", [view.id]).fetchall())
    assert len(set(texts.values())) < len(texts)  # the demo run has equal counts (true negatives)
    by_text: dict[str, dict] = {}
    for doc, counts in rows:
        assert counts == json.loads(texts[doc])
        assert by_text.setdefault(texts[doc], counts) is counts, doc  # one object per distinct text
    assert [(d, c) for d, c in rows] == _decoded_one_by_one(demo_db, view.id)


def test_shared_count_vectors_are_read_only(demo_db):
    """A vector stands for every document with those counts: writing into one would change them all."""
    run = next(r for r in _plannable(demo_db) if load_view(demo_db, r).task.name == "chimera")
    view = load_view(demo_db, run)
    if load_plan(demo_db, run) is None:
        create_plan(demo_db, run, seed=3)
    judge = _blocks_state(view, load_plan(demo_db, run)).judge
    vectors = list(judge.values())
    assert len({id(v) for v in vectors}) < len(vectors)
    with pytest.raises(ValueError):
        vectors[0][0] += 1


def test_estimate_and_queue_equal_decoding_and_flattening_every_document(demo_db, monkeypatch):
    for n, run in enumerate(_one_per_family_and_judge(demo_db)):
        if load_plan(demo_db, run) is None:
            create_plan(demo_db, run, seed=11 + n)
        _review_mix(demo_db, load_view(demo_db, run), random.Random(20 + n))
        new = (estimate(demo_db, run), next_sample(demo_db, run))
        with monkeypatch.context() as m:
            m.setattr(sampling, "original_counts", _decoded_one_by_one)
            m.setattr(sampling, "_shared_flatten",
                      lambda task, paths: lambda counts: flatten(task.sampling_counts(counts), paths))
            old = (estimate(demo_db, run), next_sample(demo_db, run))
        assert json.dumps(new, sort_keys=True, default=_plain) == json.dumps(old, sort_keys=True, default=_plain), run


def _plain(v: object) -> object:
    return v.tolist() if isinstance(v, np.ndarray) else str(v)
