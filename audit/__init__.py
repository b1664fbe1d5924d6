"""Application layer shared by the pages and the CLI: store, runs, reviews, re-scoring, export."""
