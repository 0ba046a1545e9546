// Small helpers shared by the layer implementations.
#pragma once
#include <fmt/format.h>

#include "kerascpp/layer.hpp"

namespace kerascpp::detail {

// Full tensor shape for a batch of `batch` examples of per-example shape `s`.
inline Shape with_batch(std::int64_t batch, const Shape& s) {
  Shape out{batch};
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

inline void expect_inputs(const std::vector<Shape>& in, std::size_t n, const std::string& where) {
  if (in.size() != n)
    throw ValueError(fmt::format("{} expects {} input(s) but was called on {}", where, n, in.size()));
}

// Keras output length of a windowed op along one axis.
inline std::int64_t window_output(std::int64_t in, std::int64_t k, std::int64_t s, bool same) {
  return same ? (in + s - 1) / s : (in - k) / s + 1;
}

// "same" padding split like TensorFlow: the extra pixel goes to the bottom/right.
inline void same_padding(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t& before, std::int64_t& after) {
  std::int64_t out = (in + s - 1) / s;
  std::int64_t total = std::max<std::int64_t>((out - 1) * s + k - in, 0);
  before = total / 2;
  after = total - before;
}

inline bool parse_padding(const std::string& padding, const std::string& where) {
  if (padding == "same") return true;
  if (padding == "valid") return false;
  throw ValueError(fmt::format("{}: unknown padding '{}'; use \"valid\" or \"same\"", where, padding));
}

// Gradient before a fused activation, from the layer's output y and dL/dy (no copy for linear).
inline Tensor through_activation(ReplicaContext& ctx, Activation act, const Tensor& y, const Tensor& dy) {
  if (act == Activation::linear) return dy;
  Tensor dz(dy.shape());
  ctx.backend->activation_backward(act, y, dy, dz);
  return dz;
}

inline std::string json_string(const std::string& s) { return fmt::format("\"{}\"", s); }

}  // namespace kerascpp::detail
