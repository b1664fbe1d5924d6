"""Streamlit components shared by the pages (rendering only; data comes from `audit/`)."""
