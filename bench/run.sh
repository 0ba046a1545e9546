#!/usr/bin/env bash
# The one benchmark command (bench/README.md): installs the Debian build deps, sets up the peers
# (tensorflow-cpu, torch) in .venv-bench, builds build-bench, runs every workload on kerascpp,
# TensorFlow-Keras and PyTorch in one run, writes bench/results/latest.json and prints the table.
#
#   bench/run.sh            full run (about 25 minutes on 2 cores once installed)
#   bench/run.sh --quick    smoke run: tiny windows, checks that everything runs
# Before each workload it waits (QUIET_TIMEOUT s at most) for the CPUs to be idle.
# Environment: RERUN=1 with BENCH_ONLY re-measures some workloads into the last run's results;
#              WINDOWS (timed windows per workload, default 7, at least 5 for a real run),
#              ROUNDS (interleaved rounds of the training, predict, contention and mirrored rows, default 3; WINDOWS is split
#              over them, so each framework gets ROUNDS x ceil(WINDOWS / ROUNDS) windows),
#              SKIP_SETUP=1 (skip apt/pip/build), BENCH_ONLY="mlp_b128 predict1 ..." (subset; the
#              names are the first argument of each train/bf16 line below, and mirrored, predict1,
#              mlp_b128_beside_hog, mlp_b128_beside_two_hogs, gemm);
#              ISA_CAP=avx2 runs every framework as on an AVX2-only processor (oneDNN, MKL and
#              PyTorch's kernels capped by their environment variables; kerascpp's own few
#              elementwise loops still pick AVX-512): kept apart as bench/results/avx2-capped.json,
#              a stand-in until an AVX2 machine runs the bench, not a substitute.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

# ISA_CAP=avx2: the kernels of every framework limited to AVX2 (see the header).
if [ "${ISA_CAP:-}" = avx2 ]; then
  export ONEDNN_MAX_CPU_ISA=AVX2 DNNL_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2 ATEN_CPU_CAPABILITY=avx2
elif [ -n "${ISA_CAP:-}" ]; then
  echo "ISA_CAP must be avx2 (or unset), got '$ISA_CAP'" >&2
  exit 2
fi

quick=0
[ "${1:-}" = "--quick" ] && quick=1
W=${WINDOWS:-7}
ROUNDS=${ROUNDS:-3}
if ((quick)); then W=2; ROUNDS=2; fi # one window a round: the pooling runs in the smoke run too
if ! [[ $ROUNDS =~ ^[1-9][0-9]*$ ]]; then
  echo "ROUNDS must be a positive integer, got '$ROUNDS'" >&2
  exit 2
fi
RW=$(((W + ROUNDS - 1) / ROUNDS)) # windows per round

if [ "${SKIP_SETUP:-0}" != 1 ]; then
  scripts/install_deps.sh python3-venv
  bench/setup_peers.sh
  cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DKERASCPP_BUILD_BENCH=ON \
    -DKERASCPP_BUILD_TESTS=OFF -DKERASCPP_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build build-bench -j2
fi

KB=build-bench/bench/kerascpp_bench
SG=build-bench/bench/sgemm_bench
PY=.venv-bench/bin/python
export TF_CPP_MIN_LOG_LEVEL=2 PYTHONWARNINGS=ignore
mkdir -p bench/results
# Every measurement of the run, one JSON line each. RERUN=1 (with BENCH_ONLY) appends to the last
# run's lines instead, so a workload that was disturbed can be measured again; the report takes
# the latest line of each measurement.
jsonl=bench/results/latest.jsonl
log=bench/results/latest.log
if [ "${RERUN:-0}" != 1 ]; then : >"$jsonl"; : >"$log"; fi

# Waits (up to QUIET_TIMEOUT s, default 180) until the CPUs are ≥ 90% idle over 2 s, so that a
# workload does not share the cores with someone else's build; records the idle share it saw.
idle_pct() {
  local a b
  read -r _ u1 n1 s1 i1 w1 q1 sq1 st1 _ </proc/stat
  sleep 2
  read -r _ u2 n2 s2 i2 w2 q2 sq2 st2 _ </proc/stat
  local busy=$(((u2 - u1) + (n2 - n1) + (s2 - s1) + (q2 - q1) + (sq2 - sq1) + (st2 - st1)))
  local idle=$(((i2 - i1) + (w2 - w1)))
  echo $((100 * idle / (busy + idle > 0 ? busy + idle : 1)))
}
quiet_gate() {
  local start=$SECONDS idle
  while :; do
    idle=$(idle_pct)
    if ((idle >= 90)) || ((quick)) || ((SECONDS - start >= ${QUIET_TIMEOUT:-180})); then break; fi
  done
  echo "   idle before $1: ${idle}% (waited $((SECONDS - start)) s)" | tee -a "$log" >&2
  echo "{\"framework\": \"env\", \"workload\": \"idle\", \"group\": \"$1\", \"idle_pct\": $idle, \"waited_s\": $((SECONDS - start))}" >>"$jsonl"
}

# steps(full quick): window length in steps.
steps() { if ((quick)); then echo "$2"; else echo "$1"; fi; }
want() { [ -z "${BENCH_ONLY:-}" ] || [[ " $BENCH_ONLY " == *" $1 "* ]]; }

# tag ROUND: marks each JSON line with the round it was measured in (report.py pools the rounds).
tag() { sed -u "s/^{/{\"round\": $1, /"; }

# train WORKLOAD STEPS WARMUP ARGS...: the same training workload on all three frameworks, in
# ROUNDS interleaved rounds (kerascpp, TF, PyTorch, then again) of ceil(W / ROUNDS) windows each:
# this VM's speed drifts by ±30% over minutes, and one block per framework let that drift decide
# the ratios (the official CNN b256 read 0.99× and 1.58× TF in two runs); interleaved, every
# framework meets the same drift. report.py pools each framework's windows over the rounds.
train() {
  local w=$1 s=$2 wu=$3
  shift 3
  want "$w" || return 0
  local common=(--workload "$w" --windows "$RW" --window-steps "$s" --warmup-steps "$wu" "$@")
  echo "== $w: ${common[*]} (x $ROUNDS rounds)" | tee -a "$log" >&2
  # The MLPs' fraction of the GEMM-only bound, the large MLP's of the sgemm peak: kerascpp times
  # that bound or peak after each window too.
  local kb_extra=()
  if [[ $w == mlp_b128 || $w == mlp_b1024 ]]; then kb_extra=(--paired-gemm-bound 1); fi
  if [[ $w == mlp_large ]]; then kb_extra=(--paired-sgemm-peak 1); fi
  for ((r = 1; r <= ROUNDS; r++)); do
    quiet_gate "$w/kerascpp/round$r"
    "$KB" train "${common[@]}" ${kb_extra[@]+"${kb_extra[@]}"} | tag $r | tee -a "$jsonl"
    quiet_gate "$w/tensorflow/round$r"
    "$PY" bench/peers/tf_bench.py train "${common[@]}" 2>>"$log" | tag $r | tee -a "$jsonl"
    quiet_gate "$w/pytorch/round$r"
    "$PY" bench/peers/torch_bench.py train "${common[@]}" 2>>"$log" | tag $r | tee -a "$jsonl"
  done
}

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
loadavg=$(cut -d' ' -f1-3 /proc/loadavg)

train mlp_b128 "$(steps 150 10)" "$(steps 100 5)" --model mlp --batch 128
train mlp_b1024 "$(steps 25 3)" "$(steps 15 2)" --model mlp --batch 1024
train cnn_b128 "$(steps 40 3)" "$(steps 20 2)" --model cnn --batch 128
train cnn_b256 "$(steps 20 2)" "$(steps 10 1)" --model cnn --batch 256
# The official models' MNIST CNN (examples::fashion_mnist_model("cnn"), the network
# examples/fashion_mnist trains): 5x5 "same" convs, dense 1024, dropout; about 5x the CNN's work per image.
train official_cnn_b64 "$(steps 40 3)" "$(steps 20 2)" --model official_cnn --batch 64
train official_cnn_b256 "$(steps 10 2)" "$(steps 5 1)" --model official_cnn --batch 256
# ResNet-20 (examples/resnet_models.hpp cifar_resnet(20)) on synthetic CIFAR-10 shapes, SGD momentum 0.9.
train resnet20_b128 "$(steps 10 2)" "$(steps 5 1)" --model resnet20 --batch 128
train mlp_large "$(steps 2 1)" "$(steps 2 1)" --model mlp --batch 4096 --width 2048
# The official Transformer, tiny config, on the example's reversal task (samples = sequences of 10 tokens).
train transformer_tiny "$(steps 40 3)" "$(steps 20 2)" --model transformer --batch 64
# NCF (official run.sh NeuMF: --num_factors 64 --layers 256,256,128,64, batch 2048).
train ncf_b2048 "$(steps 40 3)" "$(steps 20 2)" --model ncf --batch 2048

# Mixed precision, kerascpp alone: the MLP (batch 1024) and CNN (batch 128) under mixed_bfloat16,
# each paired window by window with its float32 twin in the same process (the float32 rows above
# give the unpaired ratio too); each line names the path oneDNN took (native or emulated).
bf16() {
  local w=$1 s=$2 wu=$3
  shift 3
  want "$w" || return 0
  echo "== $w" | tee -a "$log" >&2
  quiet_gate "$w/kerascpp"
  # --paired-float32: a float32 twin trains window for window in turn, for the paired speed-up.
  "$KB" train --workload "$w" --windows "$W" --window-steps "$s" --warmup-steps "$wu" --dtype bf16 --paired-float32 1 \
    "$@" | tee -a "$jsonl"
}
bf16 mlp_b1024_bf16 "$(steps 25 3)" "$(steps 15 2)" --model mlp --batch 1024
bf16 cnn_b128_bf16 "$(steps 40 3)" "$(steps 20 2)" --model cnn --batch 128

# MirroredStrategy (2 replicas x 1 thread) against one device x 2 threads, in rounds: kerascpp's
# single-device twin (mirrored_single) trains right before its mirrored run in every round, and
# report.py takes the median of the rounds' ratios; TensorFlow's mirrored run is set against its
# cnn_b256 figure.
if want mirrored; then
  echo "== mirrored" >&2
  s=$(steps 20 2) wu=$(steps 10 1)
  cnn256=(--model cnn --batch 256 --windows "$RW" --window-steps "$s" --warmup-steps "$wu")
  for ((r = 1; r <= ROUNDS; r++)); do
    quiet_gate "mirrored/kerascpp/round$r"
    "$KB" train --workload mirrored_single "${cnn256[@]}" | tag $r | tee -a "$jsonl"
    "$KB" train --workload mirrored "${cnn256[@]}" --replicas 2 --threads 1 | tag $r | tee -a "$jsonl"
    quiet_gate "mirrored/tensorflow/round$r"
    "$PY" bench/peers/tf_bench.py train --workload mirrored "${cnn256[@]}" --replicas 2 --threads 2 \
      2>>"$log" | tag $r | tee -a "$jsonl"
  done
fi

# Batch-1 predict latency, in interleaved rounds too (report.py takes the median of the rounds' figures).
if want predict1; then
  echo "== predict1" >&2
  n=$(steps 1000 30) nd=$(steps 200 10)
  for ((r = 1; r <= ROUNDS; r++)); do
    quiet_gate "predict1/kerascpp/round$r"
    "$KB" predict --samples "$n" --dataset-samples "$nd" | tag $r | tee -a "$jsonl"
    quiet_gate "predict1/tensorflow/round$r"
    "$PY" bench/peers/tf_bench.py predict --samples "$n" --dataset-samples "$nd" 2>>"$log" | tag $r | tee -a "$jsonl"
    quiet_gate "predict1/pytorch/round$r"
    "$PY" bench/peers/torch_bench.py predict --samples "$n" 2>>"$log" | tag $r | tee -a "$jsonl"
  done
fi

# The busy loops of beside(), killed however the script ends.
HOGS=()
trap 'kill "${HOGS[@]}" 2>/dev/null || true' EXIT

# beside WORKLOAD HOGS: MLP b128 on the default settings beside busy processes (a process is
# rarely alone on its cores): HOGS=1 is one shell loop pinned to core 0, HOGS=2 two that the
# scheduler may put anywhere (a `make -j2` next door). Each round first trains alone (WORKLOAD_idle),
# then beside the hogs, and report.py takes the median of the rounds' ratios.
beside() {
  local w=$1 hogs=$2
  want "$w" || return 0
  echo "== $w" >&2
  local args=(--model mlp --batch 128 --windows "$RW" --window-steps "$(steps 150 10)" --warmup-steps "$(steps 100 5)")
  for ((r = 1; r <= ROUNDS; r++)); do
    quiet_gate "$w/kerascpp/round$r"
    "$KB" train --workload "${w}_idle" "${args[@]}" | tag $r | tee -a "$jsonl"
    local h
    HOGS=()
    if ((hogs == 1)); then
      taskset -c 0 sh -c 'while :; do :; done' &
      HOGS+=($!)
    else
      for ((h = 0; h < hogs; h++)); do
        sh -c 'while :; do :; done' &
        HOGS+=($!)
      done
    fi
    "$KB" train --workload "$w" "${args[@]}" | tag $r | tee -a "$jsonl" || true
    kill "${HOGS[@]}" 2>/dev/null || true
    HOGS=()
  done
}
beside mlp_b128_beside_hog 1
beside mlp_b128_beside_two_hogs 2

if want gemm; then
  echo "== gemm" >&2
  quiet_gate gemm
  "$SG" mlp --batch 128 --dims 784,512,256,10 --windows "$W" | tee -a "$jsonl"
  "$SG" mlp --batch 1024 --dims 784,512,256,10 --windows "$W" | tee -a "$jsonl"
  "$SG" mlp --batch 4096 --dims 784,2048,2048,10 --windows "$W" --reps 1 | tee -a "$jsonl"
  "$SG" peak --windows "$W" | tee -a "$jsonl"
fi

meta=$(mktemp /tmp/kerascpp-bench-meta.XXXXXX.json)
"$PY" - "$meta" "$loadavg" "$quick" "$W" "${ISA_CAP:-}" "$ROUNDS" "$RW" <<'PYEOF'
import json, os, subprocess, sys, datetime
cpu = next((l.split(":", 1)[1].strip() for l in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines()
            if l.startswith("Model name")), "?")
def ver(mod):
    try:
        out = subprocess.run([sys.executable, "-c", f"import {mod}; print({mod}.__version__)"], capture_output=True,
                             text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
        return out.stdout.strip().splitlines()[-1]
    except Exception:
        return "?"
sys.path.insert(0, "bench")
from isa_family import cpuinfo, isa_family as family_of
info = cpuinfo()
flags = set(info.get("flags", "").split())
isa = [f for f in ("avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16") if f in flags]
isa_family = family_of(flags)
if sys.argv[5] == "avx2":  # every framework's kernels capped at AVX2 on this processor
    isa_family = "avx2-capped"
json.dump({"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"), "nproc": os.cpu_count(),
           "cpu": cpu, "cpu_family": info.get("cpu family", "?"), "cpu_model": info.get("model", "?"),
           "isa": isa, "isa_family": isa_family, "isa_cap": sys.argv[5] or None,
           "loadavg": sys.argv[2], "quick": sys.argv[3] == "1", "windows": int(sys.argv[4]),
           "rounds": int(sys.argv[6]), "windows_per_round": int(sys.argv[7]),
           "peers": f"tensorflow-cpu {ver('tensorflow')}, torch {ver('torch')}"}, open(sys.argv[1], "w"))
PYEOF
"$PY" bench/report.py "$jsonl" "$meta" bench/results/latest.json
# A full run is also kept as its ISA family's results (bench/results/avx512.json, avx512-bf16.json,
# avx512-amx.json, avx2.json).
if ((!quick)) && [ -z "${BENCH_ONLY:-}" ]; then
  family=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["isa_family"])' "$meta")
  cp bench/results/latest.json "bench/results/$family.json"
  echo "results kept as bench/results/$family.json" >&2
fi
rm -f "$meta"
