"""Export: audited scores (JSON, CSV of decisions, LaTeX table) and reviews (export / merge-import)."""

import tempfile
from pathlib import Path

import streamlit as st

from audit.errors import AuditError
from audit.export import export_run
from audit.reviews_io import export_reviews, import_reviews
from scoring.errors import InputError
from ui.state import db, require_run

conn = db()
st.title("Export")
run = require_run(conn, "export.run")

st.markdown("Audited scores carry the original and audited metrics, review counts, agreement with intervals, the "
            "judge spec and prompt hash, and the SHA-256 of every input file. Secrets are never exported.")
fmt = st.radio("Format", ["json", "csv", "latex", "judgelog"], horizontal=True, key="export.format",
               captions=["metrics, reviews, agreement, judge, inputs", "one row per decision with every label",
                         "original vs audited P / R / F1 table", "the judge's answers, for replay:PATH"])
if st.button("Prepare export", key="export.prepare", type="primary"):
    with st.spinner("Exporting…"):
        st.session_state["export.payload"] = (run, fmt, export_run(conn, run, fmt))
payload = st.session_state.get("export.payload")
if payload and payload[:2] == (run, fmt):
    ext = {"json": "json", "csv": "csv", "latex": "tex", "judgelog": "judge.jsonl"}[fmt]
    file_name = f"{run}.audited.{ext}"
    st.download_button(f"Download {file_name}", payload[2], file_name=file_name, key="export.download")
    preview = payload[2][:3000] + ("\n…" if len(payload[2]) > 3000 else "")
    st.code(preview, language={"json": "json", "latex": "latex"}.get(fmt))

st.subheader("Reviews")
st.download_button("Download this run's reviews (JSON lines)", export_reviews(conn, run),
                   file_name=f"{run}.reviews.jsonl", key="export.reviews")
up = st.file_uploader("Merge reviews exported from another database", type=["jsonl", "json"],
                      key="export.import", help="Rows already present (same id) are skipped; nothing is lost.")
if up is not None and st.button("Import reviews", key="export.import_go"):
    path = Path(tempfile.mkdtemp(prefix="rejudge-reviews-")) / Path(up.name).name
    path.write_bytes(up.getvalue())
    try:
        res = import_reviews(conn, run, path)
        st.success(f"Imported {res['imported']} review rows; skipped {res['skipped_duplicates']} already present.")
    except (InputError, AuditError) as e:
        st.error(f"Nothing was imported. {str(e).replace(str(path), up.name)}")
