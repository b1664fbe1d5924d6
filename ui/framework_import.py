"""The Runs page's "import an eval framework's log" form: the same `audit.framework_logs.import_log` the CLI's
`python -m audit import FRAMEWORK LOG` calls, with its skipped records listed and the framework's own aggregate
shown beside the run's."""

from __future__ import annotations

import tempfile
from pathlib import Path

import streamlit as st

from audit.errors import AuditError
from audit.framework_logs import import_log
from audit.numbers import count_noun
from audit.store.database import Database
from scoring.errors import InputError
from scoring.families import IMPORTERS, get_importer
from ui import auth
from ui.text import show_error, show_text

UPLOAD = "Upload…"
PATH = "A path on this machine…"


def _log_source(key: str) -> tuple[str, bytes | None, Path | None, list[tuple[str, bytes]]] | None:
    """(file name, uploaded bytes or None, path or None, companion files uploaded beside it)."""
    how = st.radio("Log", [UPLOAD, PATH], key=f"{key}.how", horizontal=True)
    if how == PATH:
        typed = st.text_input("Log: path", key=f"{key}.path", placeholder="/path/to/log")
        if not typed.strip():
            return None
        path = Path(typed.strip()).expanduser()
        if not path.is_file():
            show_error(f"{path}: file not found")
            return None
        return path.name, None, path, []
    up = st.file_uploader("Log: upload", key=f"{key}.upload")
    beside = st.file_uploader("Files the framework wrote beside it (optional: lm-eval's results_<date>.json, an "
                              "Every Eval Ever aggregate log), for its reported aggregate", key=f"{key}.beside",
                              accept_multiple_files=True)
    if up is None:
        return None
    return Path(up.name).name, up.getvalue(), None, [(Path(b.name).name, b.getvalue()) for b in beside or []]


def framework_import_form(conn: Database) -> str | None:
    """Draw the form; the new run's name once a log was imported, else None."""
    titles = {get_importer(f).title: f for f in IMPORTERS}
    framework = titles[st.selectbox("Framework", list(titles), key="fwimport.framework")]
    imp = get_importer(framework)
    source = _log_source(f"fwimport.{framework}")
    options = {}
    for name, text in imp.options.items():
        value = st.text_input(name, key=f"fwimport.{framework}.{name}", help=text, placeholder="(all)")
        if value.strip():
            options[name] = value.strip()
    run = st.text_input("Run name", key="fwimport.run", placeholder="derived from the log's name")
    if not st.button("Import", key="fwimport.go", disabled=source is None):
        return None
    auth.guard("score_run")  # importing a log stores a run, as scoring one does
    assert source is not None
    name, data, path, beside = source
    uploaded = path is None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            if path is None:
                path = Path(tmp) / name
                path.write_bytes(data or b"")
                for fname, content in beside:
                    (Path(tmp) / fname).write_bytes(content)
            result = import_log(conn, framework, str(path), run=run.strip() or None, options=options)
    except (AuditError, InputError) as e:
        text = str(e).replace(str(Path(tmp) / name), name) if uploaded else str(e)  # an upload by its own name
        show_error(f"Nothing was stored. {text}")
        return None
    show_text(f"Imported {result['imported']:,} of {count_noun(result['records'], 'record', grouped=True)} into run "
              f"{result['run']}" + (f"; {result['skipped']:,} skipped" if result["skipped"] else ""), "success")
    for err in result["errors"][:20]:
        show_text(err, "warning")
    return str(result["run"])
