#!/usr/bin/env bash
# Builds kerascpp and runs the whole test suite (unit tests + Python peer interop tests).
set -euo pipefail
cd "$(dirname "$0")/.."
# clang-format-19: the test suite checks the sources against .clang-format; clang-tools-19:
# clang-repl-19, one of the two interpreters the notebook tests run examples/notebooks/ in.
scripts/install_deps.sh clang-format-19 clang-tools-19
scripts/python_peers.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2
ctest --test-dir build --output-on-failure
