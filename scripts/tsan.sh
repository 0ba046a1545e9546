#!/usr/bin/env bash
# Builds the unit suite with ThreadSanitizer and runs the strategy and dataset tests (the code
# with threads: replica workers, collectives, prefetch), and the "simd builds" cases: this build
# has the hand-vectorised loops' baseline build alone (src/simd_clones.hpp).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKERASCPP_TSAN=ON -DKERASCPP_CUDA=OFF -DKERASCPP_BUILD_EXAMPLES=OFF
cmake --build build-tsan -j2 --target kerascpp_tests
# libgomp (used by oneDNN) is not built with TSan, so its synchronisation is invisible to TSan:
# one OpenMP thread per backend keeps oneDNN's work on the replica threads we are checking.
TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/tests/tsan.supp" KERASCPP_MAX_THREADS=1 OMP_NUM_THREADS=1 \
  timeout 1800 build-tsan/tests/kerascpp_tests -tc="mirrored*,strategy*,custom*,checkpoint*,steady*,dataset*prefetch*,simd builds*"
