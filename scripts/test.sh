#!/usr/bin/env bash
# Builds kerascpp and runs the whole test suite (unit tests + Python peer interop tests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh clang-format-19  # the test suite checks the sources against .clang-format
scripts/python_peers.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2
ctest --test-dir build --output-on-failure
