#include "core/knobs.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "kerascpp/error.hpp"

namespace kerascpp::detail {

const std::vector<Knob>& knobs() {
  static const std::vector<Knob> table = {
      {"KERASCPP_DATA", "/usr/share/datasets/fashion-mnist (Debian's dataset-fashion-mnist)",
       "a directory holding the Fashion-MNIST IDX files (or a fashion-mnist/ folder with them)",
       "where datasets::fashion_mnist::load() reads from"},
      {"KERASCPP_MAX_THREADS", "every core", "a whole number in [1, 2^20]",
       "the most threads any replica's CPU backend may use"},
      {"KERASCPP_ADAPTIVE_THREADS", "on, unless OMP_WAIT_POLICY=passive", "0, 1 or verbose",
       "the thread governor that lowers a replica's threads while other processes hold cores; verbose logs it"},
      {"KERASCPP_COLLECTIVE_TIMEOUT", "StrategyOptions::collective_timeout (300 s)", "a whole number of seconds",
       "how long a worker waits for its peers in one collective before failing with an error"},
      {"KERASCPP_CLUSTER_TOKEN", "unset (ParameterServerStrategy refuses to start)", "any secret string",
       "the job's token: every ParameterServerStrategy request carries it and a server refuses one without it"},
      {"KERASCPP_PROGRESS", "live on a terminal or in a Jupyter kernel, else lines", "live or lines",
       "how fit()'s progress bar (verbose=1) draws: redrawn in place, or one line per epoch"},
      {"KERASCPP_LOW_PRECISION_ACTIVATIONS", "1", "0 or 1",
       "0 keeps float32 tensors between layers under a mixed policy (for comparisons)"},
      {"KERASCPP_BF16_ONEDNN_EMULATION", "0", "0 or 1",
       "1 runs oneDNN's bfloat16 kernels even where they only emulate bfloat16 (tests of that path)"},
      {"KERASCPP_H5_PROBE", "1", "0 or 1",
       "0 reads weights files in-process without the crash-isolating probe process"},
      {"KERASCPP_GPU_WORKSPACE_MB", "4096, or an eighth of the GPU's memory where that is less (at least 256)",
       "a whole number in [1, 2^24)", "the cuDNN/cuBLAS workspace limit in MiB per GPU"},
      {"KERASCPP_CUDNN_ALGO_SEARCH", "heuristic", "heuristic or find",
       "find times every convolution algorithm once per shape"},
      {"KERASCPP_CUDNN_VERBOSE", "0", "0 or 1", "1 prints each convolution's algorithm"},
      {"KERASCPP_GPU_CONV", "timed", "timed, pointwise, gemm, nchw or cudnn",
       "which engine runs the GPU's convolutions (docs/gpus.md)"},
      {"KERASCPP_GPU_BN", "own", "own or cudnn", "cudnn runs batch norm on cuDNN's kernels"},
      {"KERASCPP_GPU_GRAPHS", "1", "0 or 1", "0 runs predict op by op instead of replaying a recorded CUDA graph"},
      {"KERASCPP_GPU_UPLOAD", "thread", "thread or caller",
       "caller fills the pinned buffers of the next batch on the fit loop's thread"},
      {"KERASCPP_GPU_PHASES", "0", "0, 1 or layers",
       "1 prints each phase's host and GPU time per step at exit; layers also each layer of an inference forward"},
  };
  return table;
}

const char* knob(const char* name) {
  for (const Knob& k : knobs())
    if (std::strcmp(k.name, name) == 0) return std::getenv(name);
  throw StateError(
      fmt::format("environment variable {} is read but missing from the table in src/core/knobs.cpp "
                  "(and docs/environment.md); add it there",
                  name));
}

}  // namespace kerascpp::detail
