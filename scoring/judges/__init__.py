"""Judges: transports that answer questions (local rules, replay logs, embeddings, OpenAI-compatible LLMs)."""
