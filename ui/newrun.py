"""The 'score a new run' form: pick or upload gold and predictions, pick a judge, score with a progress bar."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import streamlit as st
from sqlite_utils import Database

from audit.demo import BUNDLED_FILES
from audit.errors import AuditError
from audit.runs import default_run_name, score_run
from audit.store import default_db_path
from scoring.errors import InputError, JudgeSpecError
from scoring.judges.base import JudgeStats

UPLOAD = "Upload a file…"
PATH = "A path on this machine…"
PRED_FORMAT = ('JSON lines, one per abstract: `{"paper_id": "2105.13065", "relations": {"combination": '
               '[{"comb-element": ["span A", "span B"]}]}}`; `{}` = no recombination. Or a CSV with '
               '`paper_id`, `readable_relations`. See README › File formats.')
GOLD_FORMAT = "CHIMERA CSV with `paper_id`, `text`, `readable_relations` (and `entities` offsets for highlighting)."
JUDGES = {
    "replay:PATH — answers from a judge log (JSON lines)": "replay",
    "exact — case/whitespace-insensitive equality": "exact",
    "fuzzy[:T] — RapidFuzz ratio ≥ T (default 85)": "fuzzy",
    "embed[:T] — offline embedding cosine ≥ T": "embed",
    "openai:MODEL — any OpenAI-compatible endpoint": "openai",
}


@dataclass(frozen=True)
class Source:
    """A picked input: a file on this machine, or uploaded bytes written to a temporary file only while scoring."""

    name: str
    path: Path | None = None
    data: bytes | None = None

    def materialise(self, folder: Path) -> Path:
        if self.path is not None:
            return self.path
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / Path(self.name).name
        target.write_bytes(self.data or b"")
        return target


def _file_picker(label: str, key: str, help_text: str, default: str) -> Source | None:
    options = [*BUNDLED_FILES, UPLOAD, PATH]
    choice = st.selectbox(label, options, index=options.index(default), key=f"{key}.choice", help=help_text)
    if choice == PATH:
        typed = st.text_input(f"{label}: path", key=f"{key}.path", placeholder="/path/to/file")
        if not typed.strip():
            return None
        path = Path(typed.strip()).expanduser()
        if not path.is_file():
            st.error(f"{path}: file not found")
            return None
        return Source(path.name, path=path)
    if choice != UPLOAD:
        return Source(BUNDLED_FILES[choice].name, path=BUNDLED_FILES[choice])
    up = st.file_uploader(f"{label}: upload", key=f"{key}.upload", help=help_text)
    return Source(Path(up.name).name, data=up.getvalue()) if up is not None else None


def new_run_form(conn: Database) -> str | None:
    """Render the form; return the new run's name after a successful score."""
    st.caption(GOLD_FORMAT)
    gold = _file_picker("Gold file", "newrun.gold", GOLD_FORMAT, "CHIMERA eval.csv (216 abstracts, gold)")
    st.caption(PRED_FORMAT)
    pred = _file_picker("Prediction file", "newrun.pred", PRED_FORMAT,
                                   "pred_perfect.jsonl (gold spans as predictions)")
    openai_options: dict | None = None
    log: Source | None = None
    judge_kind = JUDGES[st.selectbox("Judge", list(JUDGES), index=1, key="newrun.judge",
                                     help="How a predicted span is matched to a gold span; both span orders "
                                          "are asked and a pair matches only if both say yes.")]
    spec = judge_kind
    if judge_kind == "replay":
        log = _file_picker("Judge log", "newrun.log", 'JSON lines: {"paper_id", "entity_type", "span1", '
                           '"span2", "answer": "yes"|"no"}', "judge_mixed.jsonl (judge log for pred_mixed)")
        spec = "replay:" if log else ""
    elif judge_kind in ("fuzzy", "embed"):
        t = st.text_input("Threshold (optional)", key="newrun.threshold", placeholder="default")
        spec = f"{judge_kind}:{t.strip()}" if t.strip() else judge_kind
    elif judge_kind == "openai":
        model = st.text_input("Model", value="gpt-4o-mini", key="newrun.model")
        c1, c2, c3 = st.columns([2, 2, 1])
        base_url = c1.text_input("Base URL", key="newrun.base_url", placeholder=os.environ.get(
            "OPENAI_BASE_URL", "https://api.openai.com/v1"), help="Any OpenAI-compatible endpoint (vLLM, Ollama, "
            "llama.cpp server); empty = $OPENAI_BASE_URL or OpenAI.")
        api_key = c2.text_input("API key", key="newrun.api_key", type="password", placeholder="$OPENAI_API_KEY",
                                help="Used for this scoring only: never written to the database, logs or exports.")
        concurrency = c3.number_input("Concurrency", 1, 256, 8, key="newrun.concurrency")
        spec = f"openai:{model.strip()}"
        with st.expander("Prices (USD per 1M tokens) — edit to estimate cost for your model"):
            from scoring.judges.openai_compat import load_prices

            try:
                table = [{"model": m, "prompt": p, "completion": c} for m, (p, c) in load_prices().items()]
            except InputError as e:
                st.error(str(e))
                table = []
            edited = st.data_editor(table, num_rows="dynamic", key="newrun.prices", hide_index=True)
        prices = {r["model"]: (float(r["prompt"] or 0), float(r["completion"] or 0))
                  for r in edited if r.get("model")}
        openai_options = {"base_url": base_url.strip() or None, "api_key": api_key.strip() or None,
                          "concurrency": int(concurrency), "prices": prices}
    name = st.text_input("Run name (optional)", key="newrun.name", placeholder="derived from the file names")
    if st.session_state.get("newrun.cancel"):
        st.info("Scoring was cancelled. Judge answers received so far are cached: score again to resume where it "
                "stopped; nothing was stored as a run.")
    if not st.button("Score", key="newrun.score", type="primary"):
        return None
    if gold is None or pred is None or not spec:
        st.error("Pick or upload a gold file, a prediction file and (for replay) a judge log first.")
        return None
    bar = st.progress(0.0, text="Loading and checking the inputs…")
    cancel = st.empty()
    cancel.button("Cancel", key="newrun.cancel", help="Stops asking the judge; answers already received stay cached.")
    stats = JudgeStats()

    def progress(done: int, total: int) -> None:
        bar.progress(done / total if total else 1.0,
                     text=f"Judging: {done} / {total} span queries · {stats.cached} cached · {stats.failed} failed"
                          f" · {stats.invalid} unreadable")

    with tempfile.TemporaryDirectory(prefix="rejudge-upload-") as tmp:
        folder = Path(tmp)
        gold_path, pred_path = gold.materialise(folder / "g"), pred.materialise(folder / "p")
        shown = {str(gold_path): gold.name, str(pred_path): pred.name}
        if judge_kind == "replay" and log is not None:
            log_path = log.materialise(folder / "l")
            shown[str(log_path)] = log.name
            spec = f"replay:{log_path}"
        try:
            judge = None
            if openai_options is not None:
                from scoring.judges.openai_compat import OpenAIJudge

                judge = OpenAIJudge(spec.split(":", 1)[1], **openai_options)
            run_name = name.strip() or default_run_name(conn, "chimera", pred.name, spec)
            log_file = None if judge_kind == "replay" else \
                Path(default_db_path()).resolve().parent / f"{run_name}.judge.jsonl"
            row = score_run(conn, "chimera", str(gold_path), str(pred_path), spec, run=run_name,
                            progress=progress, input_names={"gold": gold.name, "pred": pred.name}, stats=stats,
                            judge=judge, judge_log=log_file)
        except (InputError, JudgeSpecError, AuditError) as e:
            bar.empty()
            cancel.empty()
            message = str(e)
            for path, label in shown.items():
                message = message.replace(path, label)  # the user knows their file's name, not our temp path
            st.error(f"Nothing was stored. {message}")
            return None
    cancel.empty()
    bar.progress(1.0, text="Done")
    st.success(f"Scored and stored run **{row['name']}** ({row['n_docs']} abstracts, "
               f"{row['n_decisions']} decisions).")
    if "judge_log" in row["summary"]:
        st.caption(f"Judge log (re-score offline with `replay:PATH`): `{row['summary']['judge_log']['path']}`")
    for w in row["summary"].get("warnings", []):
        st.warning(w)
    return row["name"]
