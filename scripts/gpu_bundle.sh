#!/usr/bin/env bash
# Packs a CUDA build of kerascpp (built here, with -DKERASCPP_CUDA=ON) into one tar.xz that
# scripts/gpu_check.sh --prebuilt runs on a GPU machine which has the NVIDIA driver and the CUDA
# libraries but none of kerascpp's other dependencies (and no network to install them).
#
#   scripts/gpu_bundle.sh BUILD_DIR OUT.tar.xz
#
# Packed: the GPU suite, the benchmark, the examples, libkerascpp*.so, and every shared library
# they load that is not the C runtime or one of the large CUDA libraries (cuBLAS/cuBLASLt, cuDNN,
# NCCL, the driver), which gpu_check.sh finds on the GPU machine itself; Fashion-MNIST when the
# Debian dataset is installed here. The toolkit's major versions must match (CUDA 13, cuDNN 9,
# NCCL 2): gpu_check.sh reports any library it cannot resolve there.
set -euo pipefail
build=${1:?usage: gpu_bundle.sh BUILD_DIR OUT.tar.xz}
out=${2:?usage: gpu_bundle.sh BUILD_DIR OUT.tar.xz}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"

# Brought up to date first: a bundle of stale binaries cost one GPU visit (2026-11-26c, visit 2).
cmake --build "$build" -j2 --target kerascpp_gpu_tests kerascpp_bench cudnn_layout_bench fashion_mnist resnet \
  kerascpp_cuda >/dev/null || {
  echo "gpu_bundle: building $build failed (configure it with -DKERASCPP_BUILD_BENCH=ON and the CUDA backend on)" >&2
  exit 1
}
bins=()
for b in tests/gpu/kerascpp_gpu_tests bench/kerascpp_bench bench/cudnn_layout_bench fashion_mnist resnet; do
  [ -x "$build/$b" ] || {
    echo "gpu_bundle: $build/$b is missing; configure with -DKERASCPP_BUILD_BENCH=ON (the CUDA backend on) and build" >&2
    exit 1
  }
  cp "$build/$b" "$stage/bin/"
  bins+=("$build/$b")
done
cp -P "$build"/libkerascpp*.so* "$stage/lib/"

# The loader's view of every dependency, minus what the GPU machine must provide itself.
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|librt\.so|libpthread\.so|libcuda\.so|libcublas|libcublasLt|libcudnn|libnccl|libkerascpp)'
for f in "${bins[@]}" "$build"/libkerascpp*.so; do
  ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  [[ $name =~ $skip ]] || cp -L "$path" "$stage/lib/$name"
done

data=${KERASCPP_DATA:-/usr/share/datasets/fashion-mnist}
if [ -f "$data/train-images-idx3-ubyte.gz" ]; then
  mkdir -p "$stage/data"
  cp "$data"/*-ubyte.gz "$stage/data/"
fi
tar -C "$stage" -cJf "$out" .
echo "gpu_bundle: $out ($(du -h "$out" | cut -f1)): $(ls "$stage/bin" | tr '\n' ' ')+ $(ls "$stage/lib" | wc -l) libraries"
