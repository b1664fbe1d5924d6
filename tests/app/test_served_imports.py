"""The served app imports the page scripts' heavy libraries once, in the server's main thread, before any session
starts: page scripts of sessions that start together import them in parallel threads, where narwhals' circular
imports raised Python's _DeadlockError (four deep links at once on a fresh server)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_serving_the_app_loads_altair_and_pandas_before_any_session():
    code = ("import sys, importlib.util\n"
            "spec = importlib.util.spec_from_file_location('served_app', 'app.py')\n"
            "module = importlib.util.module_from_spec(spec)\n"
            "spec.loader.exec_module(module)\n"
            "print(type(module.app).__name__, 'altair' in sys.modules, 'pandas' in sys.modules, "
            "'narwhals' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["App", "True", "True", "True"]
