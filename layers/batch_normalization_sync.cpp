#include "batch_normalization_sync.hpp"

#include <algorithm>
#include <vector>

#include "kerascpp/backend.hpp"

namespace kerascpp::layers::sync_bn {

namespace {
const Device kHost{};
}  // namespace

Tensor gather_slots(int replica, int num_replicas, std::int64_t channels, double count, const Tensor& mean,
                    const Tensor& var) {
  const std::int64_t size = slot_size(channels);
  Tensor t = Tensor::zeros({num_replicas * size}, DType::float32, kHost);
  float* slot = t.data<float>() + replica * size;
  slot[0] = static_cast<float>(count);
  if (count > 0) {
    std::copy_n(mean.to(kHost).data<float>(), channels, slot + 1);
    std::copy_n(var.to(kHost).data<float>(), channels, slot + 1 + channels);
  }
  return t;
}

double combine(const Tensor& gathered, int num_replicas, std::int64_t channels, Tensor& mean, Tensor& var) {
  const std::int64_t size = slot_size(channels);
  Tensor host = gathered.to(kHost);
  const float* p = host.data<float>();
  double total = 0.0;
  for (int r = 0; r < num_replicas; ++r) total += p[r * size];
  float* pm = mean.data<float>();
  float* pv = var.data<float>();
  if (total <= 0) {  // no replica had rows: nothing to learn from, keep (0, 0) rather than NaN
    std::fill_n(pm, channels, 0.f);
    std::fill_n(pv, channels, 0.f);
    return total;
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
  return total;
}

void all_replica_moments(ReplicaContext& ctx, std::int64_t channels, double count, const Tensor& local_mean,
                         const Tensor& local_var, Tensor& mean, Tensor& var) {
  Tensor gathered = gather_slots(ctx.replica_id, ctx.num_replicas, channels, count, local_mean, local_var)
                        .to(ctx.backend->device());
  ctx.cross->all_reduce_sum(ctx.replica_id, {gathered});
  combine(gathered, ctx.num_replicas, channels, mean, var);
}

}  // namespace kerascpp::layers::sync_bn
