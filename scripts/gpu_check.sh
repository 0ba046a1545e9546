#!/usr/bin/env bash
# One visit to a GPU machine: build (or unpack a bundle), run the GPU suite, the GPU examples and
# the GPU benchmark against PyTorch, and print a short table last. Full logs go to LOGDIR.
#
#   scripts/gpu_check.sh LOGDIR                       # builds here: -DKERASCPP_CUDA=ON, sm_90, all cores
#   scripts/gpu_check.sh LOGDIR --prebuilt B.tar.xz   # runs a scripts/gpu_bundle.sh bundle instead
#   options: --skip-tests, --skip-bench, --only-tests (the suite alone), --tests 'doctest filter'
#
# Each stage has its own time limit, so one hang does not cost the rest of the visit; the exit
# status is the GPU suite's. On this workplace's lent GPU machines (no kerascpp dependencies, no
# network, 10 minutes a command): build here with scripts/gpu_bundle.sh into a folder that
# .git/info/exclude ignores (.gpu/), carry it, and split the visit in two commands:
#   bash scripts/gpu_check.sh $OUT/t --prebuilt .gpu/bundle.tar.xz --only-tests
#   bash scripts/gpu_check.sh $OUT/b --prebuilt .gpu/bundle.tar.xz --skip-tests
# LOGDIR holds at most 7 files, so everything in it comes back from $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
logdir=${1:?usage: gpu_check.sh LOGDIR [--prebuilt BUNDLE] [--skip-tests] [--skip-bench] [--tests FILTER]}
shift
prebuilt="" run_tests=1 run_bench=1 run_examples=1 filter=""
while (($#)); do
  case $1 in
    --prebuilt) prebuilt=$2; shift ;;
    --skip-tests) run_tests=0 ;;
    --skip-bench) run_bench=0 ;;
    --only-tests) run_bench=0; run_examples=0 ;;
    --tests) filter=$2; shift ;;
    *) echo "gpu_check: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
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
  gpu_tests=$bin/kerascpp_gpu_tests bench=$bin/kerascpp_bench examples=$bin
  [ -d "$root/data" ] && export KERASCPP_DATA=$root/data
else
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DKERASCPP_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DKERASCPP_BUILD_BENCH=ON >"$logdir/build.log" 2>&1 &&
    cmake --build build-gpu -j"$(nproc)" >>"$logdir/build.log" 2>&1 || { note "build FAILED (build.log)"; exit 1; }
  lib=$PWD/build-gpu
  gpu_tests=build-gpu/tests/gpu/kerascpp_gpu_tests bench=build-gpu/bench/kerascpp_bench examples=build-gpu
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
status=0
if ((run_tests)); then
  args=(--duration=true)
  [ -n "$filter" ] && args+=("--test-case=$filter")
  KERASCPP_REQUIRE_GPU=1 k timeout 360 "$gpu_tests" "${args[@]}" >"$logdir/gpu_tests.log" 2>&1
  status=$?
  note "GPU suite: exit $status; $(grep -E '^\[doctest\] (test cases|assertions)' "$logdir/gpu_tests.log" | tr -s ' ' | tr '\n' ' ')"
  grep -E 'max\|dw\||rel_error' "$logdir/gpu_tests.log" | sed 's/^/  /' | tee -a "$summary" >/dev/null
fi

# ---------------------------------------------------------------- examples
if ((run_examples)); then
  if [ -n "${KERASCPP_DATA:-}" ] || [ -d /usr/share/datasets/fashion-mnist ]; then
    run_dir=$(mktemp -d /tmp/fashion_mnist_run.XXXX)  # checkpoints and event files stay on the machine
    k timeout 120 "$examples/fashion_mnist" --num_gpus 1 --train_epochs 2 --model_dir "$run_dir" \
      >"$logdir/fashion_mnist.log" 2>&1
    note "fashion_mnist --num_gpus 1 --train_epochs 2: exit $? $(grep -E 'accuracy' "$logdir/fashion_mnist.log" | tail -1)"
    note "  files: $(cd "$run_dir" && find . -type f | sort | tr '\n' ' ')"
  else
    note "fashion_mnist: skipped (no Fashion-MNIST data on this machine)"
  fi
  k timeout 120 "$examples/resnet" --resnet_size 50 --use_synthetic_data --num_gpus 1 --batch_size 64 \
    --train_steps 30 --log_steps 10 >"$logdir/resnet50.log" 2>&1
  note "resnet --resnet_size 50 --num_gpus 1: exit $? $(grep -E 'throughput' "$logdir/resnet50.log")"
fi

# ---------------------------------------------------------------- benchmark
if ((run_bench)); then
  jsonl="$logdir/bench.jsonl"
  : >"$jsonl"
  run() {  # label, limit, command...
    local label=$1 limit=$2
    shift 2
    timeout "$limit" "$@" >>"$jsonl" 2>>"$logdir/bench.err" || note "bench $label: exit $?"
  }
  for fw in kerascpp pytorch; do
    if [ $fw = kerascpp ]; then cmd=(env "LD_LIBRARY_PATH=$kerascpp_libs" "$bench") dev=gpu; else cmd=(python3 bench/peers/torch_bench.py) dev=cuda; fi
    for b in 128 1024; do
      run "$fw mlp b$b" 120 "${cmd[@]}" train --model mlp --batch $b --device $dev --workload "mlp_b$b"
      run "$fw cnn b$b" 120 "${cmd[@]}" train --model cnn --batch $b --device $dev --workload "cnn_b$b"
    done
    for b in 64 128; do
      run "$fw resnet50 b$b" 240 "${cmd[@]}" train --model resnet50 --batch $b --device $dev --workload "resnet50_b$b" \
        --windows 5 --window-steps 20 --warmup-steps 10
    done
    run "$fw predict" 120 "${cmd[@]}" predict --device $dev --samples 500
  done
  python3 bench/gpu_report.py "$jsonl" | tee -a "$summary"
fi
echo
echo "==== summary ($logdir/summary.txt)"
cat "$summary"
exit $status
