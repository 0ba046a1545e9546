#!/usr/bin/env bash
# One visit to a GPU machine: build (or unpack a bundle), run the GPU suite, the GPU examples and
# the GPU benchmark against PyTorch, and print a short table last. Full logs go to LOGDIR.
#
#   scripts/gpu_check.sh LOGDIR                       # builds here: -DKERASCPP_CUDA=ON, sm_90, all cores
#   scripts/gpu_check.sh LOGDIR --prebuilt B.tar.xz   # runs a scripts/gpu_bundle.sh bundle instead
#   options: --skip-tests, --skip-bench, --only-tests (the suite alone), --tests 'doctest filter',
#            --deadline SECONDS (every stage's limit is cut to what is left of it; later stages skip),
#            --workloads REGEX (the benchmark pairs whose label matches), --profile (cuDNN's NHWC/NCHW
#            convolution times for ResNet-50 and an ncu per-kernel summary of kerascpp's ResNet-50 step),
#            --ncu-env 'VAR=value ...' (the switches of the ncu and nsys runs), --variants 'VAR=value ...' (the
#            switches --profile times besides the defaults, one variant per word; A=1,B=2 sets two),
#            --light-profile (--profile without cudnn_layout_bench, the variants' test cases and ncu: for
#            a visit's last minutes)
#
# Each stage has its own time limit, so one hang does not cost the rest of the visit; the exit
# status is the GPU suite's. On this workplace's lent GPU machines (no kerascpp dependencies, no
# network, 10 minutes a command): build here with scripts/gpu_bundle.sh into a folder that
# .git/info/exclude ignores (.gpu/), carry it, and run one command inside the call's limit:
#   bash scripts/gpu_check.sh $OUT --prebuilt .gpu/bundle.tar.xz --deadline 330
# $OUT brings back 8 files: LOGDIR gets 7 (summary, machine, gpu_tests.log, the two example logs,
# bench.jsonl, bench.err), or with --profile --skip-examples 8 (layout.txt, profile.log, ncu.csv).
set -uo pipefail
cd "$(dirname "$0")/.."
logdir=${1:?usage: gpu_check.sh LOGDIR [--prebuilt BUNDLE] [--skip-tests] [--skip-bench] [--tests FILTER]}
shift
ncu_env="" extra_variants=""
light=0 prebuilt="" run_tests=1 run_bench=1 run_examples=1 run_profile=0 filter="" deadline=100000 workloads=.
while (($#)); do
  case $1 in
    --prebuilt) prebuilt=$2; shift ;;
    --skip-tests) run_tests=0 ;;
    --skip-bench) run_bench=0 ;;
    --only-tests) run_bench=0; run_examples=0 ;;
    --tests) filter=$2; shift ;;
    --deadline) deadline=$2; shift ;;
    --workloads) workloads=$2; shift ;;
    --profile) run_profile=1 ;;
    --light-profile) run_profile=1 light=1 ;;
    --ncu-env) ncu_env=$2; shift ;;
    --variants) extra_variants=$2; shift ;;
    --skip-examples) run_examples=0 ;;
    *) echo "gpu_check: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
# remaining LIMIT: a stage's time limit, cut to what is left of --deadline SECONDS (from the start)
# so that the visit ends inside the device call's own limit with its logs written.
start_s=$SECONDS
remaining() { local left=$((deadline - (SECONDS - start_s))); ((left < $1)) && echo $((left > 1 ? left : 1)) || echo "$1"; }
mkdir -p "$logdir"
logdir=$(cd "$logdir" && pwd)
summary="$logdir/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

# ---------------------------------------------------------------- binaries
if [ -n "$prebuilt" ]; then
  root=$(mktemp -d /tmp/kerascpp-gpu.XXXX)
  tar -C "$root" -xJf "$prebuilt"
  bin=$root/bin lib=$root/lib
  gpu_tests=$bin/kerascpp_gpu_tests bench=$bin/kerascpp_bench examples=$bin bin_dir=$bin
  [ -d "$root/data" ] && export KERASCPP_DATA=$root/data
else
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DKERASCPP_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DKERASCPP_BUILD_BENCH=ON >"$logdir/build.log" 2>&1 &&
    cmake --build build-gpu -j"$(nproc)" >>"$logdir/build.log" 2>&1 || { note "build FAILED (build.log)"; exit 1; }
  lib=$PWD/build-gpu
  gpu_tests=build-gpu/tests/gpu/kerascpp_gpu_tests bench=build-gpu/bench/kerascpp_bench examples=build-gpu
  bin_dir=build-gpu/bench
fi

# cuBLAS, cuDNN and NCCL come from the GPU machine: the CUDA toolkit's own directory, or the
# NVIDIA wheels of its Python (PyTorch's), whichever has them.
cuda_dirs=()
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do [ -d "$d" ] && cuda_dirs+=("$d"); done
while IFS= read -r f; do cuda_dirs+=("$(dirname "$f")"); done < <(
  python3 -c 'import nvidia, os; print("\n".join(os.path.join(r, f) for p in nvidia.__path__ for r, _, fs in os.walk(p) for f in fs if f.startswith(("libcudnn.so.9", "libnccl.so.2", "libcublas.so.13", "libcublasLt.so.13"))))' 2>/dev/null)
# Only kerascpp's programs get this path: the bundle's libstdc++ must not replace PyTorch's.
kerascpp_libs="$lib:$(printf '%s:' "${cuda_dirs[@]}")${LD_LIBRARY_PATH:-}"
k() { LD_LIBRARY_PATH=$kerascpp_libs "$@"; }
export OMP_WAIT_POLICY=passive

{
  date -u
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv 2>&1
  lscpu | grep -E '^(Model name|CPU\(s\))'
  echo "kerascpp's LD_LIBRARY_PATH=$kerascpp_libs"
  k ldd "$lib/libkerascpp_cuda.so" | grep -E 'cublas|cudnn|nccl|cudart|not found'
} >"$logdir/machine.txt" 2>&1
note "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
if k ldd "$lib/libkerascpp_cuda.so" | grep -q 'not found'; then
  note "missing libraries: $(k ldd "$lib/libkerascpp_cuda.so" | grep 'not found' | tr -s ' \t\n' ' ')"
fi

# ---------------------------------------------------------------- GPU suite
# Each test case runs in its own process, four at a time: on code that has never run on a GPU a
# crash or a hang must cost one case, not the rest of the suite (and the visit).
status=0
if ((run_tests)); then
  cases=$(mktemp -d /tmp/kerascpp-cases.XXXX)
  k "$gpu_tests" --list-test-cases "${filter:+--test-case=$filter}" 2>&1 |
    awk '/^====/ {n++; next} n == 1' >"$cases/names"
  run_case() {  # index, name: doctest's filter takes commas as separators, so they are escaped
    local i=$1 name=$2
    KERASCPP_REQUIRE_GPU=1 OMP_NUM_THREADS=4 LD_LIBRARY_PATH=$kerascpp_libs timeout "$case_limit" "$gpu_tests" \
      --duration=true "--test-case=${name//,/\\,}" >"$cases/$i.log" 2>&1
    echo $? >"$cases/$i.rc"
  }
  export -f run_case
  export cases gpu_tests kerascpp_libs case_limit=$(remaining 150)
  awk '{print NR "\t" $0}' "$cases/names" | tr '\n' '\0' | xargs -0 -P4 -I{} bash -c 'IFS=$(printf "\t") read -r i n <<<"$1"; run_case "$i" "$n"' _ {}
  passed=0 failed=0
  : >"$logdir/gpu_tests.log"
  while IFS= read -r -u3 name; do
    i=$((passed + failed + 1)) rc=$(cat "$cases/$i.rc" 2>/dev/null || echo "not run")
    { echo "==== [$i] $name: exit $rc"; cat "$cases/$i.log" 2>/dev/null; } >>"$logdir/gpu_tests.log"
    if [ "$rc" = 0 ]; then passed=$((passed + 1)); else
      failed=$((failed + 1)) status=1
      note "  FAILED (exit $rc): $name"
      grep -m2 -E 'ERROR|error:|what\(\)|Error|Segmentation|Aborted' "$cases/$i.log" | cut -c1-300 | sed 's/^/      /' | tee -a "$summary" >/dev/null
    fi
  done 3<"$cases/names"
  note "GPU suite: $passed passed, $failed failed (one process per case; gpu_tests.log)"
  grep -hE 'max\|dw\||rel_error' "$cases"/*.log | sed 's/^/  /' | tee -a "$summary" >/dev/null
fi

# ---------------------------------------------------------------- examples
if ((run_examples)); then
  if [ -n "${KERASCPP_DATA:-}" ] || [ -d /usr/share/datasets/fashion-mnist ]; then
    run_dir=$(mktemp -d /tmp/fashion_mnist_run.XXXX)  # checkpoints and event files stay on the machine
    k timeout "$(remaining 60)" "$examples/fashion_mnist" --num_gpus 1 --train_epochs 2 --model_dir "$run_dir" \
      >"$logdir/fashion_mnist.log" 2>&1
    note "fashion_mnist --num_gpus 1 --train_epochs 2: exit $? $(grep -E 'accuracy' "$logdir/fashion_mnist.log" | tail -1)"
    note "  files: $(cd "$run_dir" && find . -type f | sort | tr '\n' ' ')"
  else
    note "fashion_mnist: skipped (no Fashion-MNIST data on this machine)"
  fi
  k timeout "$(remaining 90)" "$examples/resnet" --resnet_size 50 --use_synthetic_data --num_gpus 1 --batch_size 64 \
    --train_steps 30 --log_steps 10 >"$logdir/resnet50.log" 2>&1
  note "resnet --resnet_size 50 --num_gpus 1: exit $? $(grep -E 'throughput' "$logdir/resnet50.log")"
fi

# ---------------------------------------------------------------- benchmark
if ((run_bench)); then
  jsonl="$logdir/bench.jsonl"
  : >"$jsonl"
  run() {  # label, limit, command...
    local label=$1 limit
    limit=$(remaining "$2")
    shift 2
    ((limit > 5)) || { note "bench $label: skipped (deadline)"; return; }
    timeout "$limit" "$@" >>"$jsonl" 2>>"$logdir/bench.err" || note "bench $label: exit $?"
  }
  both() {  # label, limit, arguments: kerascpp then PyTorch, so a deadline cuts whole pairs
    local label=$1 limit=$2
    shift 2
    [[ $label =~ $workloads ]] || return 0
    run "kerascpp $label" "$limit" env "LD_LIBRARY_PATH=$kerascpp_libs" "$bench" "$@" --device gpu
    run "pytorch $label" "$limit" python3 bench/peers/torch_bench.py "$@" --device cuda
  }
  resnet=(--model resnet50 --windows 5 --window-steps 20 --warmup-steps 10)
  # Most telling first: per-step overhead, latency, then the compute-bound ResNet-50.
  both "mlp b128" 60 train --model mlp --batch 128 --workload mlp_b128
  both "predict" 60 predict --samples 500
  both "resnet50 b64" 120 train "${resnet[@]}" --batch 64 --workload resnet50_b64
  both "cnn b128" 60 train --model cnn --batch 128 --workload cnn_b128
  both "mlp b1024" 60 train --model mlp --batch 1024 --workload mlp_b1024
  both "cnn b1024" 60 train --model cnn --batch 1024 --workload cnn_b1024
  both "resnet50 b128" 120 train "${resnet[@]}" --batch 128 --workload resnet50_b128
  python3 bench/gpu_report.py "$jsonl" | tee -a "$summary"
fi

# ---------------------------------------------------------------- profile
if ((run_profile)); then
  ((light)) || k timeout "$(remaining 60)" "$bin_dir/cudnn_layout_bench" 64 >"$logdir/layout.txt" 2>&1
  ((light)) || note "cuDNN float32 NHWC vs NCHW (layout.txt): $(tail -1 "$logdir/layout.txt")"
  # The defaults and each --variants switch (README "More": GPU switches) on ResNet-50 b64, each
  # after the GPU suite's batch-norm, convolution, training and allocator (fit) cases under it.
  jsonl="$logdir/bench.jsonl"
  for variant in default $extra_variants; do
    vars=()
    [ "$variant" = default ] || IFS=, read -ra vars <<<"$variant"
    tests_rc="not run"
    if ((!light)); then
      env "${vars[@]}" KERASCPP_REQUIRE_GPU=1 LD_LIBRARY_PATH="$kerascpp_libs" timeout "$(remaining 60)" "$gpu_tests" \
        '--test-case=*batchnorm*,*conv2d*,*50 steps*,*allocator*' >>"$logdir/profile.log" 2>&1
      tests_rc=$?
    fi
    env "${vars[@]}" LD_LIBRARY_PATH="$kerascpp_libs" timeout "$(remaining 60)" "$bench" train --model resnet50 --batch 64 \
      --device gpu --windows 3 --window-steps 20 --warmup-steps 10 --workload "resnet50_b64 $variant" \
      >>"$jsonl" 2>>"$logdir/profile.log"
    note "$variant: batch-norm/training cases exit $tests_rc; ResNet-50 b64 $(grep -F "\"resnet50_b64 $variant\"" "$jsonl" |
      python3 -c 'import json,sys; print(round(json.loads(sys.stdin.readline())["samples_per_s"],1), "images/s")' 2>/dev/null)"
  done
  # The phase tables of the KERASCPP_GPU_PHASES variants (the fit loop's time between steps split),
  # then batch-1 predict layer by layer (KERASCPP_GPU_PHASES=layers): where its latency goes.
  grep -A16 'phases per training' "$logdir/profile.log" | tee -a "$summary" >/dev/null
  KERASCPP_GPU_PHASES=layers LD_LIBRARY_PATH="$kerascpp_libs" timeout "$(remaining 60)" "$bench" predict --samples 300 \
    --warmup 50 --dataset-samples 0 --device gpu >/dev/null 2>>"$logdir/profile.log"
  note "predict, KERASCPP_GPU_PHASES=layers: exit $?"
  grep -A24 'phases per predict' "$logdir/profile.log" | tee -a "$summary" >/dev/null
  read -ra ncu_vars <<<"$ncu_env"
  ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
  if ((light)); then
    note "ncu: left out (--light-profile)"
  elif [ -n "$ncu" ]; then
    # Kernels 4000-5500 of ResNet-50 at batch 64 (past warm-up and algorithm search): one metric,
    # the kernel's duration, so each kernel runs once.
    ((${#ncu_vars[@]})) && note "ncu under $ncu_env"
    k env "${ncu_vars[@]}" timeout "$(remaining 120)" "$ncu" --metrics gpu__time_duration.sum --clock-control none --launch-skip 4000 \
      --launch-count 1500 --csv --page raw "$bench" train --model resnet50 --batch 64 --device gpu --windows 1 \
      --window-steps 10 --warmup-steps 5 >"$logdir/ncu.csv" 2>>"$logdir/profile.log"
    note "ncu: exit $?; kernels by total time (ncu.csv):"
    python3 bench/ncu_summary.py "$logdir/ncu.csv" 2>&1 | head -25 | tee -a "$summary"
  else
    note "ncu: not found"
  fi
  # nsys: where the host waits (CUDA API time by call) during the same ResNet-50 b64 steps, for the
  # gap between the step's wall time and its kernels' GPU time.
  nsys=$(command -v nsys || ls /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda/bin/nsys 2>/dev/null | head -1)
  if [ -n "$nsys" ]; then
    k env "${ncu_vars[@]}" timeout "$(remaining 90)" "$nsys" profile --trace=cuda,osrt --sample=none --cpuctxsw=none \
      --force-overwrite=true -o /tmp/kerascpp-nsys "$bench" train --model resnet50 --batch 64 --device gpu --windows 1 \
      --window-steps 20 --warmup-steps 10 >>"$logdir/profile.log" 2>&1
    timeout "$(remaining 60)" "$nsys" stats --report cuda_api_sum,osrt_sum,cuda_gpu_kern_sum --format csv \
      /tmp/kerascpp-nsys.nsys-rep >"$logdir/nsys.txt" 2>>"$logdir/profile.log"
    note "nsys: exit $? (nsys.txt)"
  else
    note "nsys: not found"
  fi
fi
echo
echo "==== summary ($logdir/summary.txt)"
cat "$summary"
exit $status
