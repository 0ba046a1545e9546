// A layer run directly on one CPU replica, for the forward checks beside run_layer_test: outputs
// against a reference computed in the test (a formula or a loop), masks, gradients in training.
#pragma once
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "kerascpp/kerascpp.hpp"

namespace layer_on_cpu {

namespace K = kerascpp;

struct Replica {
  std::unique_ptr<K::Backend> backend = K::make_cpu_backend(1);
  K::ReplicaContext ctx;
  explicit Replica(bool training = false) {
    ctx.backend = backend.get();
    ctx.training = training;
  }
};

// A host tensor whose element i (row-major) is value(i).
inline K::Tensor tensor_of(const K::Shape& shape, const std::function<float(std::int64_t)>& value) {
  K::Tensor t(shape, K::DType::float32, K::Device{});
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = value(i);
  return t;
}

// Builds `layer` on inputs of these per-example shapes (as a model would) and runs its forward.
inline std::vector<K::Tensor> forward(Replica& rep, const K::LayerRef& layer, const std::vector<K::Tensor>& xs,
                                      K::LayerState& st) {
  std::vector<K::KerasTensor> symbolic;
  for (const K::Tensor& x : xs) symbolic.push_back(K::Input(K::Shape(x.shape().begin() + 1, x.shape().end())));
  if (!layer->built()) (void)layer->call_multi(symbolic);
  return layer->forward(rep.ctx, xs, st);
}

// The element of a row-major tensor of `shape` at `index`.
inline std::int64_t offset(const K::Shape& shape, const std::vector<std::int64_t>& index) {
  std::int64_t o = 0;
  for (std::size_t a = 0; a < shape.size(); ++a) o = o * shape[a] + index[a];
  return o;
}

}  // namespace layer_on_cpu
