#!/usr/bin/env bash
# Which sgemm is fastest on this processor for kerascpp's GEMMs (bench/README.md, "Which GEMM"):
# installs BLIS and OpenBLAS (Debian) and MKL (PyPI, into .venv-bench), builds build-bench's
# blas_compare and runs it on 2 threads, then again with every library capped at AVX2.
# Writes bench/results/blas-<isa>-<date>.txt (the processor's model and flags first).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh libblis-dev libopenblas-dev python3-venv
bench/setup_peers.sh
.venv-bench/bin/pip install -q --disable-pip-version-check mkl
mkl=$(.venv-bench/bin/python -c 'import sys, glob; print(glob.glob(sys.prefix + "/lib/libmkl_rt.so*")[0])')
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DKERASCPP_BUILD_BENCH=ON \
  -DKERASCPP_BUILD_TESTS=OFF -DKERASCPP_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-bench -j2 --target blas_compare
lib=/usr/lib/x86_64-linux-gnu
isa=$(python3 bench/isa_family.py)  # the family bench/run.sh keeps results under
out=bench/results/blas-$isa-$(date -u +%F).txt
export OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 MKL_THREADING_LAYER=GNU OMP_WAIT_POLICY=passive
export LD_LIBRARY_PATH=$(dirname "$mkl")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
run() { build-bench/bench/blas_compare --reps 7 blis=$lib/libblis.so.4 openblas=$lib/libopenblas.so.0 mkl="$mkl"; }
{
  date -u
  lscpu | grep -E '^Model name'
  echo "ISA flags: $(grep -o -w -E 'avx2|avx512f|avx512_bf16|amx_tile' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  echo "== each library's own choice of kernels"
  run
  echo "== capped at AVX2 (ONEDNN_MAX_CPU_ISA, MKL_ENABLE_INSTRUCTIONS, OPENBLAS_CORETYPE=Haswell; BLIS keeps its own)"
  ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2 OPENBLAS_CORETYPE=Haswell run
} 2>&1 | tee "$out"
