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
#     layers/*.cpp.
#  6. Every KERASCPP_* environment variable is read through src/core/knobs.cpp's table, and
#     docs/environment.md lists exactly the table's names.
#  5. The two Backend interfaces stay short: the tensor and NN primitives (class Backend,
#     include/kerascpp/backend/backend.hpp) and the fused training kernels (class TrainingKernels,
#     include/kerascpp/backend/training_kernels.hpp) each hold at most the stated number of virtual
#     functions. A new op raises its interface's cap here, in the same commit, with a reason.
#  7. One way to refuse bad input: KERASCPP_CHECK_<CATEGORY>(condition, message...) (src/check.hpp),
#     never `if (...) throw`, the old KERASCPP_CHECK(cond, Type, ...) or a throw of the bare Error
#     base class (scripts/throw_idiom.py --check; --fix rewrites). Public headers are exempt: they
#     cannot include src/check.hpp and a macro there would be the user's too.
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
training='#include "(training/|kerascpp/training/|kerascpp/callbacks/)'
report "src/core, src/data, layers, src/tensor and src/backend include the training floor" \
  "$(grep -rnE "$training" src/core src/data layers src/tensor src/backend)"
report "src/tensor includes the GPU seam (include backend/device_memory.hpp instead)" \
  "$(grep -rn '#include "backend/gpu_support.hpp"' src/tensor)"
report "src/io includes src/distribute (take what is needed, a replica count, as an argument)" \
  "$(grep -rn '#include "distribute/' src/io)"
report "layers/*.cpp leave the Backend (host tensors or loops over host data)" \
  "$(grep -nE 'on_host\(|Device\{\}|data<' layers/*.cpp)"
report "a KERASCPP_* environment variable read outside src/core/knobs.cpp (use detail::knob and add it to the table)" \
  "$(grep -rnE 'getenv\("KERASCPP_' src layers callbacks include | grep -v '^src/core/knobs\.cpp:')"
table=$(grep -oE '\{"KERASCPP_[A-Z0-9_]+"' src/core/knobs.cpp | tr -d '{"' | sort)
documented=$(grep -oE '^\| `KERASCPP_[A-Z0-9_]+`' docs/environment.md | tr -d '|` ' | sort)
report "src/core/knobs.cpp's table and docs/environment.md list different variables (< table only, > docs only)" \
  "$(diff <(echo "$table") <(echo "$documented") | grep '^[<>]')"
report "a throw outside the library's idiom" \
  "$(find src layers callbacks -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' |
     xargs python3 scripts/throw_idiom.py --check 2>&1)"
# Virtual functions declared in `class NAME` of a header (to the class's closing "};").
virtuals() { awk -v cls="$2" '$0 ~ "^class "cls" " {inside=1} inside && /virtual / {n++} inside && /^};/ {inside=0} END {print n+0}' "$1"; }
backend_cap=64          # primitives: 60 at the cut (issue 45), + l2_normalize_rows and its backward (Dot), + mask_not_equal (Masking), + random_normal (GaussianNoise, GaussianDropout)
training_kernels_cap=27 # losses, metric sums, optimizer updates, penalties and constraints; + row_loss (issue 50: every other Keras loss and the loss-shaped metrics, one kernel with a kind); + optimizer_update (one generic kernel for every newer optimizer rule)
n=$(virtuals include/kerascpp/backend/backend.hpp Backend)
((n <= backend_cap)) || report "class Backend has $n virtual functions, over its cap of $backend_cap" "raise backend_cap in scripts/check_structure.sh with the new op"
n=$(virtuals include/kerascpp/backend/training_kernels.hpp TrainingKernels)
((n <= training_kernels_cap)) || report "class TrainingKernels has $n virtual functions, over its cap of $training_kernels_cap" "raise training_kernels_cap in scripts/check_structure.sh with the new kernel"
[ $status -eq 0 ] && echo "house rules: all hold"
exit $status
