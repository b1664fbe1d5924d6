#!/usr/bin/env bash
# The dependency check of the test command (deptry): fails on a third-party import that no requirement file
# declares (DEP001), a declared product dependency nobody imports (DEP002), one imported but only installed as
# another's dependency (DEP003), or a test-only package imported by the product (DEP004).
#   product (app.py, audit/, scoring/, ui/, pages/, scripts/) against requirements.txt
#   tests/, bench/ and devtools/ against requirements-dev.txt (which includes requirements.txt)
# Unused test tools are checked by tests/test_dependencies.py (they are run, not imported: ruff, pytest-xdist).
# Usage: bash scripts/check_deps.sh [PRODUCT_REQUIREMENTS [DEV_REQUIREMENTS]]  (the arguments are for its own test)
set -euo pipefail
cd "$(dirname "$0")/.."
req=${1:-requirements.txt}
dev=${2:-requirements-dev.txt}
python=${PYTHON:-python3}
"$python" -m deptry . --no-ansi -rf "$req" -rfd "$dev" -ee '(^|/)(tests|bench|devtools)(/|$)'
"$python" -m deptry . --no-ansi -rf "$dev" -rfd "$req" -i DEP002,DEP004 \
  -e '(^|/)(\.git|\.venv[^/]*|venv|audit|scoring|ui|pages|scripts|app\.py|bench/litx_official_adapter\.py)(/|$)'
