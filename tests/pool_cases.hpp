// Pooling test inputs shared by the pooling tests: the windows every CPU path takes (disjoint,
// padded, input-skipping, overlapping on oneDNN, average), a ReLU's input and output over them,
// and a loop over every case, activation dtype and NaN-input choice.
#pragma once
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "cast_tensor.hpp"
#include "full_mantissa_tensor.hpp"
#include "kerascpp/kerascpp.hpp"

namespace kerascpp_test {

namespace K = kerascpp;

inline void set(K::Tensor& t, std::int64_t i, float v) {
  std::vector<float> values = t.to_vector();
  values.at(static_cast<std::size_t>(i)) = v;
  t = K::Tensor::from_vector(t.shape(), values);
}

struct PoolCase {
  const char* name;
  K::Pool2DGeometry g;
  K::Shape x;
  std::int64_t nan_at = 7;  // the element of x made NaN in the NaN-input runs
};

// Disjoint windows (max_pool_disjoint's loops), padded, skipping inputs, overlapping (oneDNN's
// pooling) and an average pooling (which the CPU does not mask early).
inline std::vector<PoolCase> pool_cases() {
  return {
      {"2x2 stride 2", {.pool_h = 2, .pool_w = 2, .stride_h = 2, .stride_w = 2}, {3, 8, 10, 16}},
      // Large enough for several parallel blocks (each masks its own gradients; 32 channels have
      // a build of their own).
      {"2x2 stride 2, several blocks", {.pool_h = 2, .pool_w = 2, .stride_h = 2, .stride_w = 2}, {4, 26, 26, 32}},
      {"3x3 stride 3, padded",
       {.pool_h = 3, .pool_w = 3, .stride_h = 3, .stride_w = 3, .pad_bottom = 1, .pad_right = 2},
       {2, 8, 7, 5}},
      // Row 2 lies in no window: its NaN leaves y without one, and the mask is still exact.
      {"2x2 stride 3 (skips inputs)",
       {.pool_h = 2, .pool_w = 2, .stride_h = 3, .stride_w = 3},
       {2, 7, 7, 4},
       2 * 7 * 4},
      {"3x3 stride 2 (overlapping)",
       {.pool_h = 3,
        .pool_w = 3,
        .stride_h = 2,
        .stride_w = 2,
        .pad_top = 1,
        .pad_left = 1,
        .pad_bottom = 1,
        .pad_right = 1},
       {2, 9, 9, 8}},
      {"average 2x2", {.kind = K::PoolKind::average}, {2, 6, 6, 4}},
  };
}

// A ReLU's input z and output x for case c, in `dtype`: z from values in [-1.6, 0.4) (full
// mantissas), a -0, and with nan_input a NaN at c.nan_at; so x is mostly zeros, with ties at 0,
// windows of zeros and windows with a positive value.
struct ReluPair {
  K::Tensor z, x;
};
inline ReluPair relu_pair(K::Backend& be, const PoolCase& c, K::DType dtype, bool nan_input) {
  std::vector<float> zv = full_mantissa_tensor(c.x, 11).to_vector();
  for (float& v : zv) v -= 0.6f;
  zv.at(3) = -0.f;
  K::Tensor z = K::Tensor::from_vector(c.x, zv);
  if (nan_input) set(z, c.nan_at, std::numeric_limits<float>::quiet_NaN());
  K::Tensor x(c.x);
  be.activation_forward(K::ActivationKind::relu, z, x);
  if (dtype == K::DType::float32) return {z, x};
  return {cast(be, z, dtype), cast(be, x, dtype)};
}

// The float32, bfloat16 and float16 activations this backend keeps (mixed precision's).
inline std::vector<K::DType> activation_dtypes(K::Backend& be) {
  std::vector<K::DType> dtypes{K::DType::float32};
  for (K::DType d : {K::DType::bfloat16, K::DType::float16})
    if (be.low_precision_activations(d)) dtypes.push_back(d);
  return dtypes;
}

// f(case, dtype, nan_input) for every case, activation dtype and NaN-input choice, with the
// backend's compute dtype set to `dtype` during the call.
template <class F>
void for_each_run(K::Backend& be, F&& f) {
  for (const PoolCase& c : pool_cases())
    for (K::DType dtype : activation_dtypes(be))
      for (bool nan_input : {false, true}) {
        CAPTURE(c.name);
        CAPTURE(K::dtype_name(dtype));
        CAPTURE(nan_input);
        be.set_compute_dtype(dtype);
        f(c, dtype, nan_input);
        be.set_compute_dtype(K::DType::float32);
      }
}

}  // namespace kerascpp_test
