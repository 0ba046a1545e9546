#!/usr/bin/env bash
# Builds the unit suite's threaded part with ThreadSanitizer and runs all of it: the test files
# tests/CMakeLists.txt lists for TSan builds (replica workers, collectives, the worker pool,
# prefetch, a stop from another thread) and the "simd builds" cases, since this build has the
# hand-vectorised loops' baseline build alone (src/simd_clones.hpp).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKERASCPP_TSAN=ON -DKERASCPP_CUDA=OFF -DKERASCPP_BUILD_EXAMPLES=OFF
cmake --build build-tsan -j2 --target kerascpp_tests
# libgomp (used by oneDNN) is not built with TSan, so its synchronisation is invisible to TSan:
# one OpenMP thread per backend keeps oneDNN's work on the replica threads we are checking. The
# one case left out switches a backend between 2 and 1 OpenMP threads, which that cap forbids.
TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/tests/tsan.supp" KERASCPP_MAX_THREADS=1 OMP_NUM_THREADS=1 \
  timeout 1800 build-tsan/tests/kerascpp_tests -tce="cpu backend: switching thread counts*"
