// A CPU-only process maps no CUDA library: it trains a tiny model under MirroredStrategy<>(),
// which probes for GPUs, and then looks through /proc/self/maps for cuBLAS, cuDNN, NCCL and the
// CUDA runtime. On a machine with an NVIDIA driver the probe must load the CUDA backend, so the
// check is skipped there (exit 77).
#include <fstream>
#include <iostream>
#include <string>

#include "kerascpp/kerascpp.hpp"

namespace K = kerascpp;

int main() {
  K::distribute::MirroredStrategy<> strategy;  // probes for GPUs
  if (strategy.devices().front().kind == K::Device::Kind::gpu) {
    std::cout << "skipped: this machine has a GPU, so the CUDA backend is loaded on purpose\n";
    return 77;
  }
  K::Sequential model({K::layers::InputLayer({4}), K::layers::Dense(8, {.activation = "relu"}), K::layers::Dense(1)});
  model.compile({.optimizer = K::optimizers::SGD(0.01), .loss = "mse", .distribute = strategy});
  K::Tensor x = K::Tensor::zeros({8, 4}), y = K::Tensor::zeros({8, 1});
  model.fit(K::Dataset::from_tensor_slices(x, y).batch(8), {.epochs = 1, .verbose = 0});

  std::ifstream maps("/proc/self/maps");
  std::string line;
  int bad = 0;
  while (std::getline(maps, line))
    for (const char* lib : {"libcublas", "libcudnn", "libnccl", "libcudart", "libkerascpp_cuda"})
      if (line.find(lib) != std::string::npos) {
        std::cout << "mapped in a CPU-only process: " << line << '\n';
        ++bad;
        break;
      }
  if (bad) return 1;
  std::cout << "ok: no CUDA library mapped after a CPU fit\n";
  return 0;
}
