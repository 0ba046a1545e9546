#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ (Debian's clang-14, ASan + UBSan, library instrumented
# too) and runs each one for the given number of seconds on a copy of its seed corpus.
# Usage: scripts/fuzz.sh [seconds_per_target (default 600)] [target ...]
#   targets: weights_h5 idx events images (default: all four, one after the other; FUZZ_PARALLEL=1
#   runs them at the same time). Exits non-zero on any finding and prints where the input is.
#   FUZZ_SEED=N fixes libFuzzer's seed: the same binary then tries the same sequence of inputs
#   (how far it gets depends on the machine's speed; a code change changes the sequence). CI uses it.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(weights_h5 idx events images)
case $seconds in '' | *[!0-9]*) echo "fuzz.sh: seconds_per_target must be a whole number, got '$seconds'" >&2; exit 2 ;; esac

scripts/install_deps.sh clang-14 libclang-rt-14-dev libomp-14-dev
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-14 \
  -DCMAKE_CXX_COMPILER=clang++-14 -DKERASCPP_FUZZ=ON -DKERASCPP_CUDA=OFF -DKERASCPP_BUILD_EXAMPLES=OFF \
  -DKERASCPP_BUILD_TESTS=OFF
cmake --build build-fuzz -j2 --target "${targets[@]/#/fuzz_}"

# One thread: oneDNN's OpenMP pool is not what is under test, and libFuzzer wants one process.
export OMP_NUM_THREADS=1 KERASCPP_MAX_THREADS=1
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# A corrupt HDF5 object header makes libhdf5 malloc the size it declares (seen: 2 to 20 GiB, even
# terabytes, for a 26 KB file) and then fail on the short read, touching none of it: outside ASan
# that costs 0.1 s and no memory. Under ASan such blocks cost seconds and gigabytes of shadow, and
# trip libFuzzer's limits. So malloc returns NULL above 2 GiB, which libhdf5 checks, as it would on
# a machine without that much memory; operator new in our code still reports such a size.
export ASAN_OPTIONS="allocator_may_return_null=1:max_allocation_size_mb=2048"
# HDF5's own leaks on corrupt files (third-party; each entry says why).
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
# libhdf5 1.10.8 segfaults on some corrupt files by itself (a NULL copy in H5F__accum_read,
# HDFGroup/hdf5#584; fuzz/known_hdf5_crashes/). The fuzzer reads in-process (fuzz/weights_h5.cpp),
# so it finds them; the library contains them by parsing in a forked probe. A crash input counts
# as that known bug when its report's top frames are in libhdf5's H5F__accum_read and none in our
# code, AND the target with the probe on (as users run it) handles it without a report; it then
# moves to known/ and is not a finding. Anything else stays a finding.
sort_out_known_hdf5_crashes() {
  local findings=$1 input report
  for input in "$findings"/crash-*; do
    [ -e "$input" ] || continue
    report=$(KERASCPP_H5_PROBE=0 build-fuzz/fuzz/fuzz_weights_h5 "$input" 2>&1 || true)
    if grep -E '^ *#[0-3] ' <<<"$report" | grep -q 'H5F__accum_read' &&
       ! grep -E '^ *#[0-3] ' <<<"$report" | grep -q -E 'kerascpp::|\.cpp:[0-9]' &&
       KERASCPP_H5_PROBE=1 build-fuzz/fuzz/fuzz_weights_h5 "$input" >/dev/null 2>&1; then
      mkdir -p "$findings/../known"
      mv "$input" "$findings/../known/"
      echo "fuzz weights_h5: known libhdf5 crash (HDFGroup/hdf5#584), contained by the probe: build-fuzz/findings/known/$(basename "$input")"
    fi
  done
  [ -z "$(ls -A "$findings")" ]  # what remains are findings
}

fuzz_one() {
  local t=$1 work=build-fuzz/corpus/$1 started
  started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  # Each run's findings get their own folder, so a later run never deletes an earlier crash.
  local findings=build-fuzz/findings/$t-$started
  # The committed seeds stay untouched: libFuzzer adds what it finds to this copy.
  rm -rf "$work"
  mkdir -p "$work" "$findings"
  cp fuzz/corpus/"$t"/* "$work"/
  local rc=0
  build-fuzz/fuzz/fuzz_"$t" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    "${keep_going[@]}" "${seed_args[@]}" -artifact_prefix="$findings"/ "$work" >build-fuzz/fuzz-"$t".log 2>&1 || rc=$?
  local execs corpus
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' build-fuzz/fuzz-"$t".log)
  # Fork mode prints no final stats; its last "#N" status line has the count.
  [ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9][0-9]*\).*/\1/p' build-fuzz/fuzz-"$t".log | tail -n 1)
  corpus=$(find "$work" -type f | wc -l)
  echo "fuzz $t: started $started, ${seconds}s, exit $rc, ${execs:-?} executions, corpus $corpus files (log: build-fuzz/fuzz-$t.log)"
  if [ "$t" = weights_h5 ] && ls "$findings"/crash-* >/dev/null 2>&1; then
    # A run that stopped only at known libhdf5 crashes is clean.
    sort_out_known_hdf5_crashes "$findings" && rc=0
  fi
  if [ "$rc" -ne 0 ] || [ -n "$(ls -A "$findings")" ]; then
    tail -n 40 build-fuzz/fuzz-"$t".log
    echo "FINDING in $t: input(s) in $findings/: $(ls "$findings" | tr '\n' ' ')" >&2
    echo "  reproduce: build-fuzz/fuzz/fuzz_$t $findings/<file>" >&2
    return 1
  fi
}

# FUZZ_KEEP_GOING=1: fuzz on past crashes (libFuzzer's fork mode) to collect every finding of
# the run for triage, e.g. to tell libhdf5's own crashes from ours; still exits non-zero.
keep_going=()
[ "${FUZZ_KEEP_GOING:-0}" = 1 ] && keep_going=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)

seed_args=()
[ -n "${FUZZ_SEED:-}" ] && seed_args=(-seed="$FUZZ_SEED")

failed=0
if [ "${FUZZ_PARALLEL:-0}" = 1 ]; then
  pids=()
  for t in "${targets[@]}"; do fuzz_one "$t" & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
else
  for t in "${targets[@]}"; do fuzz_one "$t" || failed=1; done
fi
exit $failed
