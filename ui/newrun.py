"""The 'score a new run' form, driven by the family registry: pick a family, its inputs and a judge; score with a
progress bar."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from audit.demo import DATA, bundled_files
from audit.errors import AuditError
from audit.output_paths import write_new_file
from audit.runs import execute_run, plan_run
from audit.store.database import Database
from scoring.errors import InputError, JudgeSpecError
from scoring.families import TASKS
from scoring.families.base import DemoRun, InputSpec, TaskFamily
from scoring.judges.answer import JudgeStats
from scoring.judges.registry import JudgeOptions, describe, kind_of
from ui import auth
from ui.owner_only import role_button
from ui.text import show_error

UPLOAD = "Upload…"
PATH = "A path on this machine…"


@dataclass(frozen=True)
class Source:
    """A picked input: a file or folder on this machine, or uploaded files written to a temporary folder only while
    scoring."""

    name: str
    path: Path | None = None
    files: tuple[tuple[str, bytes], ...] = ()

    def materialise(self, folder: Path, *, as_folder: bool) -> Path:
        if self.path is not None:
            return self.path
        folder.mkdir(parents=True, exist_ok=True)
        for fname, data in self.files:  # two uploads of one name: the last wins, as a folder copy would
            write_new_file(folder / Path(fname).name, data, replace=True)
        return folder if as_folder else folder / Path(self.files[0][0]).name


def _bundled(spec: InputSpec, near: list[str]) -> dict[str, Path]:
    """Bundled files (or folders) a field may take: of the right kind and suffix, in the demo's data folders."""
    out = {}
    for k, v in bundled_files().items():
        if v.is_dir() != spec.folder or (near and v.parent.name not in near):
            continue
        if not spec.folder and spec.suffixes and not v.name.endswith(tuple("." + x.lstrip(".") for x in spec.suffixes)):
            continue
        out[k] = v
    return out


def _file_picker(spec: InputSpec, key: str, default: str | None, near: list[str] | None = None) -> Source | None:
    bundled = _bundled(spec, near or [])
    options = [*bundled, UPLOAD, PATH]
    if not spec.required:
        options = ["(none)", *options]
    index = options.index(default) if default in options else 0
    choice = st.selectbox(spec.title, options, index=index, key=f"{key}.choice", help=spec.help)
    if choice == "(none)":
        return None
    if choice == PATH:
        typed = st.text_input(f"{spec.title}: path", key=f"{key}.path", placeholder="/path/to/" +
                              ("folder" if spec.folder else "file"))
        if not typed.strip():
            return None
        path = Path(typed.strip()).expanduser()
        if not (path.is_dir() if spec.folder else path.is_file()):
            show_error(f"{path}: {'folder' if spec.folder else 'file'} not found")
            return None
        return Source(path.name, path=path)
    if choice != UPLOAD:
        return Source(choice, path=bundled[choice])
    ups = st.file_uploader(f"{spec.title}: upload" + (" (all files of the folder)" if spec.folder else ""),
                           key=f"{key}.upload", help=spec.help, accept_multiple_files=spec.folder)
    if not ups:
        return None
    ups = ups if isinstance(ups, list) else [ups]
    name = Path(ups[0].name).name if not spec.folder else f"{len(ups)} uploaded files"
    return Source(name, files=tuple((u.name, u.getvalue()) for u in ups))


def judge_choices(task: TaskFamily, demo: DemoRun | None) -> dict[str, str]:
    """The judge kinds the form offers for a family, kind name -> label: the family's specs and `replay` (first
    when its demo replays a log), labelled from the judge-kind table (a family's own spec by itself)."""
    replay_first = demo is not None and demo.judge.startswith("replay:")
    names = list(dict.fromkeys((["replay"] if replay_first else []) +
                               [s.split(":", 1)[0] for s in task.judge_specs] + ["replay"]))
    return {n: describe(k) if (k := kind_of(n)) is not None else n for n in names}


def _judge_picker(task: TaskFamily, demo: DemoRun | None) -> tuple[str, JudgeOptions | None, Source | None]:
    """(spec, the endpoint's options or None, judge log source or None)."""
    demo_log = demo.judge.split(":", 1)[1] if demo and demo.judge.startswith("replay:") else None
    choices = judge_choices(task, demo)
    kinds, labels = list(choices), list(choices.values())
    kind = kinds[labels.index(st.selectbox("Judge", labels, index=0, key=f"newrun.{task.name}.judge",
                                           help="Who answers the scorer's questions; see README › Judges."))]
    if kind == "replay":
        default = {str(v): k for k, v in bundled_files().items()}.get(str(demo_log)) if demo_log else None
        log = _file_picker(InputSpec("judge_log", "Judge log", task.describe_judge_log(), suffixes=("jsonl",)),
                           f"newrun.{task.name}.log", default, _demo_folders(demo))
        return ("replay:" if log else ""), None, log
    k = kind_of(kind)
    if k is not None and k.form.endswith("[:T]"):
        t = st.text_input("Threshold (optional)", key=f"newrun.{task.name}.threshold", placeholder="default")
        return (f"{kind}:{t.strip()}" if t.strip() else kind), None, None
    if k is None or not k.llm:
        return next(s for s in task.judge_specs if s.split(":", 1)[0] == kind), None, None
    model = st.text_input("Model", key="newrun.model", placeholder="the model the endpoint serves",
                          help="Sent with every request and recorded with the run (e.g. gpt-4o-mini, "
                               "smollm2-135m). Empty: the one model the endpoint lists, if it lists one.")
    c1, c2, c3 = st.columns([2, 2, 1])
    from scoring.judges.openai_compat import load_prices, redact_url

    env_url = os.environ.get("OPENAI_BASE_URL")
    base_url = c1.text_input("Base URL", key="newrun.base_url",
                             placeholder=redact_url(env_url) if env_url else "https://api.openai.com/v1",
                             help="Any OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp server); empty = "
                                  "$OPENAI_BASE_URL or OpenAI.")
    api_key = c2.text_input("API key", key="newrun.api_key", type="password", placeholder="$OPENAI_API_KEY",
                            help="Used for this scoring only: never written to the database, logs or exports.")
    concurrency = c3.number_input("Concurrency", 0, 256, 0, key="newrun.concurrency",
                                  help="0 = what the endpoint can serve (1 for a local server)")
    with st.expander("Prices (USD per 1M tokens) — edit to estimate cost for your model"):
        try:
            table = [{"model": m, "prompt": p, "completion": c} for m, (p, c) in load_prices().items()]
        except Exception as e:  # noqa: BLE001 - refused as the CLI refuses it, or raised again (a bug)
            show_error(input_problem(e))
            table = []
        edited = st.data_editor(table, num_rows="dynamic", key="newrun.prices", hide_index=True)
    prices = {r["model"]: (float(r["prompt"] or 0), float(r["completion"] or 0)) for r in edited if r.get("model")}
    opts = JudgeOptions(base_url=base_url.strip() or None, api_key=api_key.strip() or None,
                        concurrency=int(concurrency) or None, prices=prices)
    return f"{kind}:{model.strip()}", opts, None


def resolve_model(spec: str, options: JudgeOptions | None) -> str:
    """An LLM judge spec with its model: as typed, else the one model the endpoint lists (`served_models`).

    Raises:
        JudgeSpecError: no model typed and the endpoint lists none, or several.
    """
    kind, _, model = spec.partition(":")
    k = kind_of(kind)
    if k is None or not k.llm or model.strip():
        return spec
    from scoring.judges.openai_compat import served_models

    options = options or JudgeOptions()
    listed = served_models(options.base_url, options.api_key)
    if len(listed) == 1:
        return f"{kind}:{listed[0]}"
    found = f"it lists {', '.join(listed[:5])}" if listed else "it lists none"
    raise JudgeSpecError(f"type the model name the endpoint serves ({found}); it is sent with every request and "
                         "recorded with the run")


def score_from_form(conn: Database, task: TaskFamily, paths: dict[str, str], spec: str, *, run: str | None,
                    judge_options: JudgeOptions | None, input_names: dict[str, str], options: dict[str, str],
                    progress: Callable[[int, int], None] | None = None, stats: JudgeStats | None = None) -> dict:
    """What the Score button does once the inputs are on disk: plan the run (the judge built by the family, with
    the form's endpoint options; an empty model is the one the endpoint lists) and score it. Returns the stored
    run's row."""
    spec = resolve_model(spec, judge_options)
    plan = plan_run(conn, task.name, paths, spec, run=run, judge_options=judge_options, input_names=input_names,
                    options=options)
    return execute_run(conn, plan, progress=progress, stats=stats)


def input_problem(e: Exception) -> str:
    """The one-line message the CLI gives for a refused input (`audit.cli.explain`: bad files, nesting too deep
    to read, text that is not UTF-8, an unwritable database), so the form refuses exactly what `score` refuses.

    Raises:
        e: again, when the CLI would call it an internal error (a bug to see, not an input to fix).
    """
    from audit.cli import explain

    message, status = explain(e, "the database")
    if status != 2:
        raise e
    return message


def _demo_folders(demo: DemoRun | None) -> list[str]:
    """The data folders of the family's demo inputs: where its bundled files live."""
    if demo is None:
        return []
    return sorted({Path(v).parent.name for v in demo.inputs.values()})


@dataclass(frozen=True)
class ScoredRun:
    """A run the form stored, with what to tell the user once the page has switched to it."""

    name: str
    messages: tuple[tuple[str, str], ...]  # (text, kind) pairs for ui.text.show_text


def new_run_form(conn: Database) -> ScoredRun | None:
    """Render the form; after a successful score return the new run (its success line and warnings are not drawn
    here: the page draws them after its rerun, so they are shown once and do not vanish with the rerun)."""
    names = list(TASKS)
    task = TASKS[st.selectbox("Benchmark family", names, format_func=lambda n: TASKS[n].title, key="newrun.task")]
    demos = task.demo_runs(DATA)
    demo = demos[0] if demos else None
    by_path = {str(v): k for k, v in bundled_files().items()}
    sources: dict[str, Source | None] = {}
    for spec in task.inputs:
        default = by_path.get(str(demo.inputs.get(spec.name))) if demo and demo.inputs.get(spec.name) else None
        sources[spec.name] = _file_picker(spec, f"newrun.{task.name}.{spec.name}", default, _demo_folders(demo))
    options = {o.name: st.selectbox(o.name, o.choices, key=f"newrun.{task.name}.opt.{o.name}", help=o.help)
               for o in task.options}
    spec, judge_options, log = _judge_picker(task, demo)
    name = st.text_input("Run name (optional)", key="newrun.name", placeholder="derived from the file names")
    if st.session_state.get("newrun.cancel"):
        st.info("Scoring was cancelled. Judge answers received so far are cached: score again to resume where it "
                "stopped; nothing was stored as a run.")
    if not role_button("Score", action="score_run", key="newrun.score", type="primary"):
        return None
    auth.guard("score_run")
    missing = [s.title for s in task.inputs if s.required and sources[s.name] is None]
    if missing or not spec:
        show_error("Pick or upload " + ", ".join(missing or ["a judge log"]) + " first.")
        return None
    bar = st.progress(0.0, text="Loading and checking the inputs…")
    cancel = st.empty()
    cancel.button("Cancel", key="newrun.cancel", help="Stops asking the judge; answers already received stay cached.")
    stats = JudgeStats()

    def progress(done: int, total: int) -> None:
        bar.progress(done / total if total else 1.0,
                     text=f"Judging: {done} / {total} questions · {stats.cached} cached · {stats.failed} failed"
                          f" · {stats.invalid} unreadable")

    with tempfile.TemporaryDirectory(prefix="rejudge-upload-") as tmp:
        folder = Path(tmp)
        paths, shown = {}, {}
        for spec_in in task.inputs:
            src = sources[spec_in.name]
            if src is None:
                continue
            p = src.materialise(folder / spec_in.name, as_folder=spec_in.folder)
            paths[spec_in.name] = str(p)
            shown[str(p)] = src.name
        if spec == "replay:" and log is not None:
            log_path = log.materialise(folder / "judge_log", as_folder=False)
            shown[str(log_path)] = log.name
            spec = f"replay:{log_path}"
        try:
            row = score_from_form(conn, task, paths, spec, run=name.strip() or None, judge_options=judge_options,
                                  input_names={k: sources[k].name for k in paths},  # type: ignore[union-attr]
                                  options=options, progress=progress, stats=stats)
        except Exception as e:  # noqa: BLE001 - refused as the CLI refuses it, or raised again (a bug)
            message = input_problem(e)
            bar.empty()
            cancel.empty()
            each = getattr(e, "errors", None) or [e]  # a loader reports every bad record of a file (up to 20)
            lines = [str(x) for x in each] if isinstance(e, InputError | JudgeSpecError | AuditError) else [message]
            for path, label in shown.items():  # the user knows their file's name, not our temp path
                lines = [m.replace(path, label) for m in lines]
            head = f"{len(lines)} errors; " if len(lines) > 1 else ""
            show_error(f"Nothing was stored. {head}" + "\n".join(lines))
            return None
    cancel.empty()
    bar.progress(1.0, text="Done")
    done = f"Scored and stored run {row['name']} ({row['n_docs']} documents, {row['n_decisions']} decisions)."
    warnings = tuple((str(w), "warning") for w in row["summary"].get("warnings", []))
    return ScoredRun(row["name"], ((done, "success"), *warnings))
