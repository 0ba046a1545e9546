#!/usr/bin/env bash
# Builds kerascpp and runs the whole test suite (unit tests + Python peer interop tests).
set -euo pipefail
cd "$(dirname "$0")/.."
# clang-format-19: the test suite checks the sources against .clang-format; clang-tools-19:
# clang-repl-19, one of the two interpreters the notebook tests run examples/notebooks/ in;
# doxygen: the test api_reference builds the API reference from the public headers.
scripts/install_deps.sh clang-format-19 clang-tools-19 doxygen
scripts/python_peers.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2
# Idle OpenMP (libgomp) threads wait passively instead of spinning ~3 ms after each parallel
# region: ctest runs test programs side by side, and spinning threads of one slow the others down
# several times over. libgomp reads this once at load time, so it must be in the environment.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
ctest --test-dir build --output-on-failure -j2
