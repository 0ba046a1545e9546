#!/usr/bin/env bash
# Prints a hash of the final weights of three short fixed-seed trainings (CNN with dropout on 2
# CPU replicas, small CNN on 1, ResNet-20 with batch normalization on 2). A refactor that must
# not change numerics prints the same lines before and after; the hashes depend on the oneDNN
# kernels the processor gets, so compare runs on the same machine.
# Usage: scripts/training_fingerprint.sh [BUILD_DIR]   (after scripts/test.sh built it)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
python=.venv/bin/python
[ -x "$python" ] || { echo "training_fingerprint.sh: $python missing; scripts/python_peers.sh makes it" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$build/fashion_mnist" --model cnn --model_dir "$out/fm" --train_epochs 1 --batch_size 64 --seed 7 \
  --max_train_steps 40 --cpu_replicas 2 >/dev/null
"$build/fashion_mnist" --model small_cnn --model_dir "$out/fm1" --train_epochs 1 --batch_size 50 --seed 3 \
  --max_train_steps 30 --cpu_replicas 1 >/dev/null
"$build/resnet" --resnet_size 20 --use_synthetic_data --batch_size 32 --train_steps 6 --seed 5 \
  --model_dir "$out/rn" --log_steps 0 --cpu_replicas 2 >/dev/null
find "$out" -name '*.weights.h5' | sort | while read -r f; do
  "$python" - "$f" "${f#"$out"/}" <<'PY'
import hashlib, sys
import h5py
digest = hashlib.sha256()
def visit(name, obj):
    if isinstance(obj, h5py.Dataset):
        digest.update(name.encode())
        digest.update(obj[()].tobytes())
with h5py.File(sys.argv[1], "r") as f:
    f.visititems(visit)
print(digest.hexdigest()[:16], sys.argv[2])
PY
done
