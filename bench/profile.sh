#!/usr/bin/env bash
# Where a kerascpp training step spends its time (run after bench/run.sh built build-bench):
# per-primitive oneDNN totals from ONEDNN_VERBOSE (the timed steps only) next to the step's wall
# time, and, when perf is installed, the top symbols of a perf profile by DSO and function.
#   bench/profile.sh [kerascpp_bench train args...]   e.g. --model mlp --batch 1024
set -euo pipefail
cd "$(dirname "$0")/.."
KB=${KB:-build-bench/bench/kerascpp_bench}
args=("$@")
((${#args[@]})) || args=(--model mlp --batch 128)
steps=${STEPS:-100}
tmp=$(mktemp -d)
ONEDNN_VERBOSE=1 "$KB" train "${args[@]}" --windows 1 --window-steps "$steps" --warmup-steps 20 >"$tmp/v.txt" 2>&1
line=$(grep '"framework"' "$tmp/v.txt")
echo "$line"
sps=$(sed -E 's/.*"samples_per_s": ([0-9.e+]+).*/\1/' <<<"$line")
batch=$(sed -E 's/.*"batch": ([0-9]+).*/\1/' <<<"$line")
per_step=$(grep -c '^onednn_verbose,exec' "$tmp/v.txt")
echo "oneDNN primitives in the last $steps steps (ms per step):"
# The last `steps` steps' exec lines: count exec lines per step from the total over warm-up + window.
grep '^onednn_verbose,exec' "$tmp/v.txt" | tail -n $((per_step * steps / (steps + 20))) |
  awk -F, -v steps="$steps" -v sps="$sps" -v batch="$batch" '{k=$4" "$6" "$(NF-1); s[k]+=$NF; T+=$NF}
    END{for(k in s) printf "  %-60s %8.3f\n", k, s[k]/steps | "sort -k4 -nr";
        close("sort -k4 -nr"); printf "  %-60s %8.3f\n", "TOTAL in oneDNN primitives", T/steps;
        printf "  %-60s %8.3f\n", "step wall time (from samples/s)", 1000*batch/sps}'
if command -v perf >/dev/null; then
  perf record -q -F 1999 -g -o "$tmp/perf.data" "$KB" train "${args[@]}" --windows 3 --window-steps "$steps" \
    --warmup-steps 20 >/dev/null 2>&1 || true
  echo "perf: share of all samples by DSO, then kerascpp's own functions"
  perf report -i "$tmp/perf.data" --no-children --sort dso --stdio -g none 2>/dev/null | grep '%' | head -8
  perf report -i "$tmp/perf.data" --no-children --sort sym --stdio -g none --dso libkerascpp.so.0.1.0 2>/dev/null |
    grep '%' | head -12 | cut -c1-160
fi
rm -rf "$tmp"
