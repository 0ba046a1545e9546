#!/usr/bin/env bash
# Builds the unit suite with AddressSanitizer (+ LeakSanitizer) and UndefinedBehaviorSanitizer
# and runs all of it (the 16-bit activation cases twice, below): any memory error, leak or
# undefined behaviour aborts the run.
set -euo pipefail
cd "$(dirname "$0")/.."
# The hand-vectorised loops in their AVX2 build only (src/simd_clones.hpp): the main suite runs
# the widest build the processor has, the TSan one the baseline, this one what an AVX2-only
# processor gets.
avx2_only=OFF
if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then avx2_only=ON; fi
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKERASCPP_ASAN=ON -DKERASCPP_CUDA=OFF -DKERASCPP_BUILD_EXAMPLES=OFF \
  -DKERASCPP_SIMD_AVX2_ONLY=$avx2_only
cmake --build build-asan -j2 --target kerascpp_tests
supp="$PWD/tests"
# detect_leaks: LeakSanitizer runs at exit. halt_on_error/abort_on_error: the first report
# fails the run (UBSan reports already abort: the build passes -fno-sanitize-recover).
# allocator_may_return_null: libhdf5 asks malloc for terabytes on some corrupt files (the fuzz
# regressions replay them) and handles the NULL, as it gets outside ASan; operator new in our
# code still aborts on an impossible size.
# As in scripts/test.sh: idle OpenMP threads wait passively, which also turns the thread governor
# off, so a replica's thread count stays fixed. The suite's bit-identity cases (resume after
# save/load, predict against the training forward) compare two runs, and under the governor a
# busy machine (another build beside this run) gives them different thread counts and bits.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=1:print_stacktrace=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# Third-party leaks only (libhdf5's, on corrupt files); the file says why.
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
timeout 3600 build-asan/tests/kerascpp_tests "$@"
# Where the processor has no bfloat16 instructions the 16-bit activation paths skip above; run
# them again on oneDNN's emulating bf16 kernels, as ctest's bf16_activations_on_onednn_emulation
# does (on other processors this repeats them).
if [ $# -eq 0 ]; then
  KERASCPP_BF16_ONEDNN_EMULATION=1 timeout 1200 build-asan/tests/kerascpp_tests "-ts=16-bit activations"
fi
