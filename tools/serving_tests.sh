#!/usr/bin/env bash
# Runs the serving engines' suite (tests/serving) in .venv-serving (tools/serving_env.sh).
# The installed corral is the one tested: install the working tree first (pip install .).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv-serving/bin/python ]; then
    echo "no .venv-serving: build it with tools/serving_env.sh" >&2
    exit 2
fi
CORRAL_SERVING_TESTS=1 .venv-serving/bin/python -m pytest -q tests/serving "$@"
