#!/usr/bin/env bash
# The main job: trains the Fashion-MNIST CNN under MirroredStrategy on 2 CPU replicas, writing
# checkpoints and TensorBoard logs under runs/fashion_mnist. Extra flags go to the example.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2 --target fashion_mnist
./build/fashion_mnist --model cnn --cpu_replicas 2 --train_epochs 5 --model_dir runs/fashion_mnist "$@"
