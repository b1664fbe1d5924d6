"""The bundled demo run (data/retrieval/demo_rankings.jsonl): built as SOURCE.md says, and reproducible."""

import importlib.util
import json
from collections import Counter
from pathlib import Path

import pytest

from scoring.families.retrieval.load import load_rankings
from tests.conftest import GOLD, ROOT

DEMO = ROOT / "data" / "retrieval" / "demo_rankings.jsonl"
SHARED = Path("/work/shared/data/chimera")
NAMES = {"analogy": "inspiration", "analogy-src": "inspiration-src", "analogy-target": "inspiration-target"}


@pytest.fixture(scope="module")
def demo():
    return load_rankings(DEMO)


def _eval_relations():
    import pandas as pd

    out = []
    for row in pd.read_csv(GOLD, dtype=str, keep_default_na=False).itertuples():
        for t, rels in json.loads(row.readable_relations).items():
            for rel in rels:
                out.append((row.paper_id, NAMES.get(t, t), {NAMES.get(k, k): v for k, v in rel.items()}))
    return out


def test_one_query_per_ordered_element_pair_and_inspiration(demo):
    # chimera.md §1: eval combinations of size 2:60, 3:12, 4:3 give k(k-1) ordered pairs each; 24 inspirations
    assert Counter(q.relation for q in demo.queries) == {"combination": 2 * 60 + 6 * 12 + 12 * 3, "inspiration": 24}
    assert demo.warnings == [] and DEMO.stat().st_size < 4_000_000


def test_queries_follow_the_annotated_relations(demo):
    rels = {(pid, t): ents for pid, t, ents in _eval_relations()}
    for q in demo.queries:
        pid, rtype, _ = q.id.split("/")
        ents = rels[(pid, rtype)]
        if rtype == "combination":
            assert {q.anchor_text, q.positive} <= set(ents["comb-element"]) and q.anchor_text != q.positive
        else:
            assert (q.anchor_text, q.positive) == (ents["inspiration-target"][0], ents["inspiration-src"][0])


def test_filtered_candidates_and_cut_lists(demo):
    rels = {(pid, t): ents for pid, t, ents in _eval_relations()}
    for q in demo.queries:
        pid, rtype, _ = q.id.split("/")
        assert q.anchor_text not in q.candidates_text
        if rtype == "combination":  # the relation's other elements are known answers: filtered out
            others = set(rels[(pid, rtype)]["comb-element"]) - {q.anchor_text, q.positive}
            assert not others & set(q.candidates_text)
        assert q.candidates_text[q.gold_position] == q.positive
        assert len(q.candidates) == 100 + (q.positive_index >= 100)  # top 100, plus the gold when lower
        assert 570 <= q.n_candidates <= 574


def test_demo_rebuilds_byte_for_byte(tmp_path):
    if not (SHARED / "train.csv").is_file():
        pytest.skip("CHIMERA train.csv is not on this machine (see data/retrieval/SOURCE.md)")
    spec = importlib.util.spec_from_file_location("build_demo", ROOT / "scripts" / "build_retrieval_demo.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    lines, info = mod.build(SHARED)
    assert info["queries"] == 252
    rebuilt = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines)
    assert rebuilt == DEMO.read_text(encoding="utf-8")


BM25 = ROOT / "data" / "retrieval" / "demo_rankings_bm25.jsonl"


def test_the_bm25_ranker_answers_the_same_queries_over_the_same_pools(demo):
    bm25 = load_rankings(BM25)
    assert bm25.warnings == [] and BM25.stat().st_size < 4_000_000
    ours = {q.id: q for q in bm25.queries}
    assert list(ours) == [q.id for q in demo.queries]
    for q in demo.queries:
        b = ours[q.id]
        assert (b.query, b.anchor_text, b.positive, b.n_candidates) == (q.query, q.anchor_text, q.positive,
                                                                         q.n_candidates)
        top = list(b.scores[:100])
        assert top == sorted(top, reverse=True)
    assert sum(a.positive_index != b.positive_index for a, b in zip(demo.queries, bm25.queries, strict=True)) > 200


def test_bm25_rebuilds_byte_for_byte():
    if not (SHARED / "train.csv").is_file():
        pytest.skip("CHIMERA train.csv is not on this machine (see data/retrieval/SOURCE.md)")
    pytest.importorskip("bm25s", reason="bm25s (requirements-dev.txt) builds the BM25 demo file")
    spec = importlib.util.spec_from_file_location("build_bm25", ROOT / "scripts" / "build_retrieval_bm25.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    lines, info = mod.build(SHARED, mod.bm25_scores)
    assert info["queries"] == 252
    assert "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines) == BM25.read_text(encoding="utf-8")
