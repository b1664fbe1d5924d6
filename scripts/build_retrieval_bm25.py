"""Build the retrieval demo's second ranker: lexical BM25 (the `bm25s` package) over the same queries and candidates.

Same knowledge base, queries, filtered candidate pools, cut (top 100 plus the gold) and output format as
`scripts/build_retrieval_demo.py` (its WordLlama ranking, `demo_rankings.jsonl`); only the score differs:

- score = BM25 (`bm25s` 0.3.16, its defaults: Lucene variant, k1 1.5, b 0.75) of each knowledge-base text for the
  query's anchor span, both tokenised by `bm25s.tokenize` (lower-cased, English stop words removed, no stemming),
  rounded to 6 decimals. The anchor alone is the query: the template words that the embedding query carries
  ("Contribution: Combine ... and") are the same for every query and would only match texts that contain them.
  A candidate sharing no word with the anchor scores 0: such candidates tie, and the tie policy ranks the gold
  among them.
- the `query` field keeps the embedding run's query string, so both files describe the same queries.

Usage: python3 scripts/build_retrieval_bm25.py [--source DIR] [--out PATH]   (needs `pip install bm25s==0.3.16`,
a development requirement: only this script uses it; the dashboard reads the file it writes)
"""

from __future__ import annotations

import sys
from pathlib import Path

import bm25s
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.build_retrieval_demo import ROOT, SCORE_DECIMALS, build, main  # noqa: E402

__all__ = ["bm25_scores", "build", "main"]

DEFAULT_OUT = ROOT / "data" / "retrieval" / "demo_rankings_bm25.jsonl"


def bm25_scores(qtext: list[str], anchors: list[str], texts: list[str]) -> np.ndarray:  # noqa: ARG001
    """BM25 score of every text for every anchor, one row per query."""
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    queries = bm25s.tokenize(anchors, stopwords="en", return_ids=False, show_progress=False)
    rows = [retriever.get_scores(q) if q else np.zeros(len(texts)) for q in queries]
    return np.round(np.asarray(rows, dtype=np.float64), SCORE_DECIMALS) + 0.0


if __name__ == "__main__":
    main(bm25_scores, DEFAULT_OUT, __doc__)
