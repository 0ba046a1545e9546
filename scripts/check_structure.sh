#!/usr/bin/env bash
# The house rules of the source tree (docs/ARCHITECTURE.md, "Floors"), checked by the ctest
# `house_structure`: each rule greps the tree and prints every line that breaks it.
#  1. The ground floor (src/core/), the data pipeline (src/data/), the layers (layers/), tensors
#     (src/tensor/) and the backends (src/backend/) never include the training floor: src/training/
#     or its public headers (model, optimizers, losses, metrics, loss scaling, callbacks).
#  2. Tensor depends on device memory only: src/tensor/ never includes the GPU seam
#     (backend/gpu_support.hpp), only backend/device_memory.hpp.
#  3. Saving and loading (src/io/) include nothing from src/distribute/.
#  4. Layers compute through Backend ops only: no host round trips (on_host(, Device{}, data<) in
#     layers/*.cpp. Known exception, open in issue 45: layers/dot.cpp's normalize=True path computes
#     its row norms on the host until the Backend has a row-norm op.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
report() { # $1: rule, $2: matches
  if [ -n "$2" ]; then
    echo "house rule broken: $1" >&2
    printf '%s\n' "$2" >&2
    status=1
  fi
}
training='#include "(training/|kerascpp/(model|optimizers|losses|metrics|loss_scale_optimizer)\.hpp|kerascpp/callbacks/)'
report "src/core, src/data, layers, src/tensor and src/backend include the training floor" \
  "$(grep -rnE "$training" src/core src/data layers src/tensor src/backend)"
report "src/tensor includes the GPU seam (include backend/device_memory.hpp instead)" \
  "$(grep -rn '#include "backend/gpu_support.hpp"' src/tensor)"
report "src/io includes src/distribute (take what is needed, a replica count, as an argument)" \
  "$(grep -rn '#include "distribute/' src/io)"
report "layers/*.cpp leave the Backend (host tensors or loops over host data)" \
  "$(grep -nE 'on_host\(|Device\{\}|data<' layers/*.cpp | grep -v '^layers/dot\.cpp:')"
[ $status -eq 0 ] && echo "house rules: all hold"
exit $status
