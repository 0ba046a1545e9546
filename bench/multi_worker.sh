#!/usr/bin/env bash
# Multi-worker benchmarks (bench/README.md "Multi-worker"), on this machine over loopback:
#  1. the all-reduce microbenchmark behind docs/scaling.md (MPI_Allreduce / MPI_Iallreduce of
#     float sums, 4 B to 64 MiB and the 25 MiB bucket; alpha and beta fitted), over shared memory
#     (OpenMPI's vader) and over TCP loopback (what separate machines without InfiniBand use);
#  2. the CNN at one global batch (128): 2 workers x 1 thread (MultiWorkerMirroredStrategy under
#     mpirun) against 1 process x 2 threads; target: throughput ratio >= 0.9.
# Writes bench/results/multi_worker-<processor>.json and prints a summary.
#   bench/multi_worker.sh          (SKIP_SETUP=1: use the existing build-bench)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${SKIP_SETUP:-0}" != 1 ]; then
  scripts/install_deps.sh
  cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DKERASCPP_BUILD_BENCH=ON \
    -DKERASCPP_BUILD_TESTS=OFF -DKERASCPP_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build build-bench -j2 --target kerascpp_bench mpi_allreduce_bench
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
mpi=(mpirun -np 2 --bind-to none)
KB=build-bench/bench/kerascpp_bench
AR=build-bench/bench/mpi_allreduce_bench
W=${WINDOWS:-7}

# Waits (up to 120 s) for >= 90% idle CPUs over 2 s, so a neighbour's build does not pose as a result.
quiet() {
  for _ in $(seq 60); do
    read -r _ u1 n1 s1 i1 _ </proc/stat; sleep 2; read -r _ u2 n2 s2 i2 _ </proc/stat
    local busy=$(((u2 - u1) + (n2 - n1) + (s2 - s1))) idle=$((i2 - i1))
    ((100 * idle / (busy + idle + 1) >= 90)) && return 0
  done
  echo "warning: the machine never went idle; numbers below are disturbed" >&2
}

cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512_bf16|amx_tile)$' | tr '\n' ' ')
family=$(echo "$flags" | grep -q avx512f && echo avx512 || echo avx2)
out=bench/results/multi_worker-$family.json

quiet
shm=$("${mpi[@]}" "$AR" 64 | tail -1)
quiet
tcp=$("${mpi[@]}" --mca btl tcp,self "$AR" 64 | tail -1)
cnn=(train --model cnn --batch 128 --windows "$W" --window-steps 40)
quiet
one=$("$KB" "${cnn[@]}" --threads 2 --workload cnn_1process_x2threads | tail -1)
quiet
two=$("${mpi[@]}" "$KB" "${cnn[@]}" --strategy multi_worker --replicas 1 --threads 1 \
  --workload cnn_2workers_x1thread | tail -1)

python3 - "$out" "$cpu" "$flags" "$shm" "$tcp" "$one" "$two" <<'PY'
import json, sys
out, cpu, flags, shm, tcp, one, two = sys.argv[1:]
shm, tcp, one, two = (json.loads(s) for s in (shm, tcp, one, two))
ratio = two["samples_per_s"] / one["samples_per_s"]
result = {"processor": cpu, "isa": flags.split(), "allreduce_shared_memory": shm, "allreduce_tcp_loopback": tcp,
          "cnn_1process_x2threads": one, "cnn_2workers_x1thread": two, "cnn_ratio": ratio,
          "cnn_ratio_target": 0.9, "cnn_ratio_met": ratio >= 0.9}
json.dump(result, open(out, "w"), indent=1)
print(f"processor: {cpu} ({flags.strip()})")
for name, r in (("shared memory", shm), ("TCP loopback", tcp)):
    print(f"all-reduce over {name}: alpha {r['alpha_s'] * 1e6:.2f} us, beta {r['beta_s_per_byte'] * 1e9:.4f} ns/B "
          f"({1 / r['beta_s_per_byte'] / 1e9:.2f} GB/s)")
spread = lambda r: max(r["windows"]) / min(r["windows"])
print(f"CNN b128, 1 process x 2 threads: {one['samples_per_s']:.0f} samples/s (window spread {spread(one):.2f})")
print(f"CNN b128, 2 workers x 1 thread:  {two['samples_per_s']:.0f} samples/s (window spread {spread(two):.2f})")
print(f"ratio {ratio:.2f} (target >= 0.9: {'met' if ratio >= 0.9 else 'NOT met'}); written to {out}")
PY
