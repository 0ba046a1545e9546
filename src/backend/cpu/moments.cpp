// Keras' ops.moments over every axis but the last, plain and synchronized. The local moments
// are batchnorm_stats' double, fixed-order sums rounded once to float; the synchronized form
// combines every replica's (count, mean, var) slot after one all-reduce, in double and in
// replica order, so every replica computes the same bits whoever reduced the slots.
#include <fmt/format.h>

#include <algorithm>

#include "backend/cpu/batchnorm_stats.hpp"
#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "check.hpp"

namespace kerascpp::cpu {

namespace {

void require_vector(const Tensor& t, std::int64_t channels, const Tensor& x, const char* op, const char* arg) {
  require_float(t, op, arg);
  op_shapes::check_channel_vector(t, channels, x, op, arg);
}

// Channels of a packed tensor of `num_replicas` slots of (count, mean[C], var[C]).
std::int64_t packed_channels(const Tensor& packed, int num_replicas, const char* op) {
  require_float(packed, op, "packed");
  KERASCPP_CHECK_VALUE(num_replicas > 0, "{}: num_replicas is {}; it must be at least 1", op, num_replicas);
  const std::int64_t slot = packed.numel() / num_replicas;
  KERASCPP_CHECK_SHAPE(packed.rank() == 1 && packed.numel() % num_replicas == 0 && slot % 2 == 1,
                       "{}: packed {} is not {} slots of (count, mean[C], var[C]); make it with pack_moments "
                       "(moments_packed_size floats)",
                       op, shape_str(packed.shape()), num_replicas);
  return (slot - 1) / 2;
}

}  // namespace

void CpuBackend::moments(const Tensor& x, Tensor& mean, Tensor& var) {
  enter();
  const char* op = "moments";
  require_float(x, op, "x");
  const std::int64_t C = op_shapes::channels_of(x, op), M = C == 0 ? 0 : x.numel() / C;
  prepare_output(mean, {C}, op, "mean");
  prepare_output(var, {C}, op, "var");
  if (C == 0) return;
  KERASCPP_CHECK_SHAPE(M > 0, "{}: x {} holds no rows; batch statistics need at least one", op, shape_str(x.shape()));
  sums_.resize(static_cast<std::size_t>(2 * C));
  bn::moments(x.data<float>(), M, C, partials_, sums_.data(), sums_.data() + C);
  float* pm = mean.data<float>();
  float* pv = var.data<float>();
  for (std::int64_t c = 0; c < C; ++c) {
    pm[c] = static_cast<float>(sums_[c]);
    pv[c] = static_cast<float>(sums_[C + c]);
  }
}

void CpuBackend::pack_moments(const Tensor& mean, const Tensor& var, std::int64_t count, int replica, int num_replicas,
                              Tensor& packed) {
  enter();
  const char* op = "pack_moments";
  require_float(mean, op, "mean");
  require_rank_at_least(mean, 1, op, "mean");
  const std::int64_t C = mean.dim(-1);
  require_vector(mean, C, mean, op, "mean");
  require_vector(var, C, mean, op, "var");
  KERASCPP_CHECK_VALUE(replica >= 0 && replica < num_replicas,
                       "{}: replica {} is not one of the {} replicas (0 to num_replicas − 1)", op, replica,
                       num_replicas);
  KERASCPP_CHECK_VALUE(count >= 0, "{}: count is {}; it is this replica's number of rows, >= 0", op, count);
  prepare_output(packed, {moments_packed_size(C, num_replicas)}, op, "packed");
  float* p = packed.data<float>();
  std::fill_n(p, packed.numel(), 0.f);
  float* slot = p + replica * (2 * C + 1);
  slot[0] = static_cast<float>(count);
  if (count > 0) {
    std::copy_n(mean.data<float>(), C, slot + 1);
    std::copy_n(var.data<float>(), C, slot + 1 + C);
  }
}

void CpuBackend::synchronized_moments(const Tensor& packed, int num_replicas, Tensor& mean, Tensor& var) {
  enter();
  const char* op = "synchronized_moments";
  const std::int64_t channels = packed_channels(packed, num_replicas, op);
  prepare_output(mean, {channels}, op, "mean");
  prepare_output(var, {channels}, op, "var");
  const std::int64_t size = 2 * channels + 1;
  const float* p = packed.data<float>();
  double total = 0.0;
  for (int r = 0; r < num_replicas; ++r) total += p[r * size];
  float* pm = mean.data<float>();
  float* pv = var.data<float>();
  if (total <= 0) {  // no replica had rows: nothing to learn from, keep (0, 0) rather than NaN
    std::fill_n(pm, channels, 0.f);
    std::fill_n(pv, channels, 0.f);
    return;
  }
  for (std::int64_t c = 0; c < channels; ++c) {
    double mu = 0.0;
    for (int r = 0; r < num_replicas; ++r) mu += p[r * size] * static_cast<double>(p[r * size + 1 + c]);
    mu /= total;
    // Σnᵣ·(vᵣ + (μᵣ − μ)²): within- plus between-replica spread, each term non-negative.
    double m2 = 0.0;
    for (int r = 0; r < num_replicas; ++r) {
      const float* s = p + r * size;
      if (s[0] == 0.f) continue;
      double d = static_cast<double>(s[1 + c]) - mu;
      m2 += s[0] * (static_cast<double>(s[1 + channels + c]) + d * d);
    }
    pm[c] = static_cast<float>(mu);
    pv[c] = static_cast<float>(m2 / total);
  }
}

void CpuBackend::average_moments(const Tensor& packed, int num_replicas, Tensor& mean, Tensor& var) {
  enter();
  const char* op = "average_moments";
  const std::int64_t channels = packed_channels(packed, num_replicas, op);
  prepare_output(mean, {channels}, op, "mean");
  prepare_output(var, {channels}, op, "var");
  const std::int64_t size = 2 * channels + 1;
  const float* p = packed.data<float>();
  // Float products nᵣ·μᵣ added from 0 in replica order, then one division: the same roundings
  // as scaling each replica's moments by its count and all-reducing them in shared memory.
  float total = 0.f;
  for (int r = 0; r < num_replicas; ++r) total += p[r * size];
  float* pm = mean.data<float>();
  float* pv = var.data<float>();
  for (std::int64_t c = 0; c < channels; ++c) {
    float sum_mean = 0.f, sum_var = 0.f;
    for (int r = 0; r < num_replicas; ++r) {
      const float* s = p + r * size;
      float weighted_mean = s[1 + c] * s[0];
      float weighted_var = s[1 + channels + c] * s[0];
      sum_mean += weighted_mean;
      sum_var += weighted_var;
    }
    pm[c] = sum_mean / total;
    pv[c] = sum_var / total;
  }
}

}  // namespace kerascpp::cpu
