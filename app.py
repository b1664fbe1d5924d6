"""Rejudge dashboard: `streamlit run app.py` opens on the bundled CHIMERA demo run."""

import streamlit as st

from audit.demo import ensure_demo
from ui.state import db, reviewer_input

st.set_page_config(page_title="Rejudge", page_icon="⚖️", layout="wide")

ensure_demo(db())

pages = [
    st.Page("pages/runs.py", title="Runs", icon="🗂️", url_path="runs", default=True),
    st.Page("pages/overview.py", title="Run overview", icon="📊", url_path="run"),
    st.Page("pages/document.py", title="Abstract review", icon="🔎", url_path="document"),
]
with st.sidebar:
    reviewer_input()
st.navigation(pages).run()
