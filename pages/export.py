"""Export: one click per file — audited scores (JSON, CSV of decisions, LaTeX table), the judge's answers, the
reviews (export / merge-import) and the gold errata. Files are built when the button is clicked (deferred
download data), so opening the page costs nothing."""

from collections.abc import Callable

import streamlit as st

from audit.outputs.errata_export import export_errata_csv, export_errata_json
from audit.outputs.export import export_run
from audit.review.errata import current_errata
from audit.review.reviews_io import export_reviews
from audit.store.database import Database
from audit.views import RunRef
from ui import auth
from ui.entry import page_prologue
from ui.owner_only import role_button, why_not
from ui.review_upload import import_uploaded_reviews
from ui.state import blind_guard, current_view, db
from ui.text import md_literal, show_text

FILES = (
    ("json", "audited.json", "Audited scores (JSON)", "application/json",
     "Original and audited metrics, review counts, agreement with intervals, judge spec and prompt hash, input "
     "names and SHA-256, Rejudge version, export time and the effective-label policy."),
    ("csv", "decisions.csv", "Decisions with every label (CSV)", "text/csv",
     "One row per decision: judge label, each reviewer's label, effective label and where it came from, notes."),
    ("latex", "table.tex", "Paper table (LaTeX, booktabs)", "application/x-tex",
     "Original vs audited P / R / F1 per type with caption, label and the human–judge κ; needs "
     "\\usepackage{booktabs}."),
    ("judgelog", "judge-answers.jsonl", "The judge's answers (JSONL)", "application/jsonl",
     "Every answer the judge gave in this run, one line per question and span order: score another run with "
     "the judge replay:FILE to reproduce it without calling the judge."),
)

conn = page_prologue()
st.title("Export")
run_view = current_view(conn)
run = run_view.name
blind_guard("export")  # every export carries the judge's and the other reviewers' labels
show_text(f"Run {run}: each button builds its file when clicked and downloads it. Secrets are never exported. "
          f"Audited scores use the {run_view.policy} effective-label policy (chosen on the Scores page).", "caption")


def builder(make: Callable[[Database, RunRef], str], target: RunRef = run_view) -> Callable[[], str]:
    """A zero-argument callable for `st.download_button`: builds the file on click, on its own connection (the
    run view's row and policy carried over, not looked up again)."""
    def build() -> str:
        return make(db(), target)
    return build


# files that name each reviewer's label and note: the same data as the reviews file, so the same owner's action
NAMES_REVIEWERS = {"csv": "export_reviews"}

for fmt, suffix, title, mime, what in FILES:
    c1, c2 = st.columns([1.3, 2.7], vertical_alignment="center")
    file_name = f"{run}.{suffix}"
    action = NAMES_REVIEWERS.get(fmt)
    if action and not auth.may(action):  # never built for anyone else (the data exists only where it is drawn)
        c1.caption(f"{title}: {md_literal(auth.refused(action) or '')}")
        c2.markdown(f"**{md_literal(file_name)}** — {md_literal(what)}")
        continue
    c1.download_button(title, builder(lambda c, r, f=fmt: export_run(c, r, f)), file_name=file_name, mime=mime,
                       key=f"export.{fmt}", icon=":material/download:", on_click="ignore", width="stretch")
    c2.markdown(f"**{md_literal(file_name)}** — {md_literal(what)}")

with st.expander("Preview the paper table (LaTeX)"):
    st.code(export_run(conn, run_view, "latex"), language="latex")

st.subheader("Gold errata")
flags = current_errata(conn, run_view)
if flags:
    c1, c2 = st.columns(2)
    c1.download_button(f"Gold errata (JSON, {len(flags)})", builder(export_errata_json),
                       file_name=f"{run}.errata.json", mime="application/json", key="export.errata_json",
                       icon=":material/flag:", on_click="ignore", width="stretch")
    c2.download_button(f"Gold errata (CSV, {len(flags)})", builder(export_errata_csv),
                       file_name=f"{run}.errata.csv", mime="text/csv", key="export.errata_csv",
                       icon=":material/flag:", on_click="ignore", width="stretch")
else:
    st.caption("No gold item has been flagged in this run (flag one on the Document page or in the queue).")

st.subheader("Reviews")
if auth.may("export_reviews"):  # reviews name who labelled what: the owner's to move between databases
    st.download_button("This run's reviews (JSON lines)", builder(export_reviews, run),
                       file_name=f"{run}.reviews.jsonl", key="export.reviews", icon=":material/download:",
                       on_click="ignore")
else:  # the file is never built for anyone else (the button's data exists only where it is drawn)
    show_text(auth.refused("export_reviews"), "caption")
up = st.file_uploader("Merge reviews exported from another database", type=["jsonl", "json"],
                      key="export.import", help="Rows already present (same id) are skipped; nothing is lost.",
                      disabled=why_not("import_reviews") is not None)
if why_not("import_reviews") and up is None:
    show_text(why_not("import_reviews"), "caption")
if up is not None and role_button("Import reviews", action="import_reviews", key="export.import_go"):
    auth.guard("import_reviews")
    ok, message = import_uploaded_reviews(conn, run, up.name, up.getvalue())
    show_text(message, "success" if ok else "error")
