#!/usr/bin/env bash
# Installs what the tests need and runs them all (unit, parity, store, CLI, AppTest pages, browser e2e).
# The browser tests use Debian's chromium (no downloaded browser builds); it is installed here when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q -r requirements-dev.txt
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "warning: /usr/bin/chromium is missing and cannot be installed here; browser tests will be skipped" >&2
  fi
fi
python3 -m ruff check .
python3 -m pytest -q "$@"
