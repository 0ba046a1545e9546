#!/usr/bin/env bash
# Creates the benchmark venv (.venv-bench, separate from the test venv .venv) with the peers:
# tensorflow-cpu and torch from PyPI. Idempotent (a stamp file records a finished install).
# PyPI has no CPU-only torch wheel, so pip pulls the default one with its CUDA dependencies (~3 GB);
# the benchmark only ever uses its CPU path.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv-bench/bin/python ] || python3 -m venv .venv-bench
# Keep git from ever seeing the venv (what Python >= 3.13 venv does by itself).
[ -f .venv-bench/.gitignore ] || echo "*" > .venv-bench/.gitignore
stamp=.venv-bench/.kerascpp-bench-peers-v1
if [ ! -f "$stamp" ]; then
  .venv-bench/bin/pip install -q --disable-pip-version-check --upgrade pip
  .venv-bench/bin/pip install -q --disable-pip-version-check tensorflow-cpu torch numpy
  touch "$stamp"
fi
