"""Report: the run's audit report — the file `python -m audit report` writes — shown here and downloadable in one
click (one self-contained HTML file that opens offline)."""

import shlex

import streamlit as st

from audit.effective import DEFAULT_POLICY
from audit.outputs.report import build_report, report_html
from audit.review.assigned_review import assignment_stamp
from audit.store.database import default_db_path, reviews_version
from audit.views import RunView
from ui.entry import page_prologue
from ui.families import report_panel
from ui.state import blind_guard, current_view
from ui.text import show_text

REPORT_HEIGHT = 1800


@st.cache_data(show_spinner="Building the report (figures, agreement intervals)…", max_entries=8)
def cached_report(_view: RunView, key: tuple) -> tuple[str, list[str]]:  # noqa: ARG001 - (db, run, policy, reviews, assignment)
    report = build_report(_view, report_panel(_view.task.name))
    return report_html(report), [f.title for f in report.figures]


conn = page_prologue()
st.title("Audit report")
view = current_view(conn)
blind_guard("report")
html, titles = cached_report(view, (default_db_path(), view.name, view.policy, reviews_version(conn, view.id),
                                    assignment_stamp(conn, view.name)))  # the report says the planned overlap
# the command that writes the same file: the page's policy too, names quoted for a shell (a quote in a name breaks
# '…'), shown as code, never as Markdown
command = shlex.join(["python", "-m", "audit", "report", "--run", view.name, "--out", f"{view.name}.report.html",
                      *(["--policy", view.policy] if view.policy != DEFAULT_POLICY else [])])
show_text(f"{len(titles)} figures · effective labels: {view.policy} policy · the same file as the "
          "command below (figures as SVG and PDF with --figures DIR).", "caption")
st.code(command, language="bash")
st.download_button("Download the report (HTML)", data=html, file_name=f"{view.name}.report.html", mime="text/html",
                   key="report.download", icon=":material/download:", type="primary")
st.iframe(html, height=REPORT_HEIGHT)  # our own file: every text from the data is escaped in it
