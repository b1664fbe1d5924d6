"""The app as the README starts it (`streamlit run app.py`), on a free local port, with its own HOME and DB."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.e2e.e2e_config import HEALTH_TIMEOUT_S, ROOT


@dataclass
class AppServer:
    url: str
    db: Path
    log: Path
    proc: subprocess.Popen = field(repr=False)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def streamlit_command() -> list[str]:
    """`streamlit` of the interpreter running the tests (the README's command), else `python -m streamlit`."""
    exe = Path(sys.executable).parent / "streamlit"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("streamlit")
    return [found] if found else [sys.executable, "-m", "streamlit"]


def build_demo_db(db: Path) -> Path:
    """A new database holding the demo runs, made as the README's team set-up does (`python -m audit demo`)."""
    subprocess.run([sys.executable, "-m", "audit", "--db", str(db), "demo"], cwd=ROOT, check=True,
                   capture_output=True, env={**os.environ, "REJUDGE_DB": str(db)})
    return db


def copy_db(src: Path, dst: Path) -> Path:
    """A consistent copy of a database (WAL; a server may be using it), with no side files left beside the copy."""
    with closing(sqlite3.connect(src)) as a, closing(sqlite3.connect(dst)) as b:
        a.backup(b)
        b.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for side in dst.parent.glob(dst.name + "-*"):
        side.unlink()
    return dst


def seeded(workdir: Path, template: Path) -> Path:
    """`workdir` holding a copy of the demo database (`build_demo_db`) where `start_app` looks for it."""
    workdir.mkdir(parents=True, exist_ok=True)
    copy_db(template, workdir / "rejudge.db")
    return workdir


def start_app(workdir: Path, port: int | None = None) -> AppServer:
    """`streamlit run app.py` from the repo root, HOME and REJUDGE_DB under `workdir` (new, or the one a server
    stopped there left), on `port` (else a free one); wait until healthy."""
    home = workdir / "home"
    home.mkdir(parents=True, exist_ok=True)
    db = workdir / "rejudge.db"
    log = workdir / "streamlit.log"
    port = port or free_port()
    cmd = [*streamlit_command(), "run", "app.py", "--server.headless", "true", "--server.port", str(port),
           "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none"]
    env = {**os.environ, "HOME": str(home), "REJUDGE_DB": str(db), "PYTHONUNBUFFERED": "1"}
    with log.open("ab") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    server = AppServer(url=f"http://127.0.0.1:{port}", db=db, log=log, proc=proc)
    try:
        wait_healthy(server)
    except BaseException:
        stop_app(server)
        raise
    return server


def wait_healthy(server: AppServer) -> None:
    """Poll GET /_stcore/health until it answers "ok" (fail with the server log after HEALTH_TIMEOUT_S)."""
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    last = ""
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            pytest.fail(f"streamlit exited with status {server.proc.returncode}:\n{tail(server.log)}")
        try:
            with urllib.request.urlopen(f"{server.url}/_stcore/health", timeout=2) as r:
                last = r.read().decode().strip()
            if last == "ok":
                return
        except OSError as e:
            last = repr(e)
        time.sleep(0.25)
    pytest.fail(f"streamlit not healthy after {HEALTH_TIMEOUT_S} s (last answer {last!r}):\n{tail(server.log)}")


def stop_app(server: AppServer) -> None:
    """Stop the server's process group (streamlit and anything it started), found by the server's PID."""
    if server.proc.poll() is not None:
        return
    pgid = server.proc.pid  # start_new_session=True: the server leads its own process group
    for sig, wait_s in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        try:
            server.proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def tail(path: Path, n: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"
