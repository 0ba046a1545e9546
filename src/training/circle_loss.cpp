// Keras' Circle loss. Its terms are over the pairs of a replica's batch: cosine distances
// D = max(1 − P·Pᵀ, 0), masks of same-label (positive) and other-label (negative) pairs, and a
// masked logsumexp per row. No Backend op does masked logsumexps over pairs, so this loss reads
// the shard's embeddings and labels on the host (one copy on a GPU: the batch is small, N×N
// pairs) and computes the loss and its gradient there in double.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "check.hpp"
#include "kerascpp/training/losses.hpp"

namespace kerascpp::losses {

Circle::Circle(double gamma, double margin, bool remove_diagonal)
    : gamma_(gamma), margin_(margin), remove_diagonal_(remove_diagonal) {
  KERASCPP_CHECK_VALUE(
      std::isfinite(gamma) && gamma > 0 && std::isfinite(margin),
      "Circle: gamma must be finite and > 0 and margin finite (Keras' defaults 80.0 and 0.4), got gamma={} "
      "margin={}",
      gamma, margin);
}

void Circle::compute(Backend&, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
                     float grad_scale) const {
  KERASCPP_CHECK_SHAPE(pred.rank() == 2 && target.numel() == pred.dim(0),
                       "circle: pred {} must be [batch, embedding] and target {} one class id per example",
                       shape_str(pred.shape()), shape_str(target.shape()));
  const std::int64_t n = pred.dim(0), e = pred.dim(1);
  const std::vector<float> p = pred.to_vector(), ids = target.to_vector();
  const double m = margin_, g = gamma_, inf = std::numeric_limits<double>::infinity();
  // Per pair: the distance, whether it is a positive / negative pair, and its weighted distance.
  std::vector<double> dist(static_cast<std::size_t>(n * n)), wd(dist.size());
  std::vector<signed char> kind(dist.size());  // 1 positive, −1 negative, 0 neither (the diagonal)
  std::vector<double> row_loss(static_cast<std::size_t>(n)), p_lse(row_loss.size()), n_lse(row_loss.size());
  for (std::int64_t i = 0; i < n; ++i) {
    double pmax = -inf, nmax = -inf;
    for (std::int64_t j = 0; j < n; ++j) {
      const std::size_t k = static_cast<std::size_t>(i * n + j);
      double s = 0;
      for (std::int64_t c = 0; c < e; ++c) s += static_cast<double>(p[i * e + c]) * p[j * e + c];
      const double d = std::max(1.0 - s, 0.0);
      dist[k] = d;
      const bool same = ids[i] == ids[j];
      kind[k] = same ? ((remove_diagonal_ && i == j) ? 0 : 1) : -1;
      if (kind[k] == 1) pmax = std::max(pmax, wd[k] = -g * std::max(m + d, 0.0) * (m - d));
      if (kind[k] == -1) nmax = std::max(nmax, wd[k] = g * std::max(1 + m - d, 0.0) * (1 - m - d));
    }
    // logsumexp over each mask (−inf for an empty one, as Keras' where(mask, ·, −inf)).
    auto lse = [&](int which, double top) {
      if (top == -inf) return -inf;
      double sum = 0;
      for (std::int64_t j = 0; j < n; ++j)
        if (kind[static_cast<std::size_t>(i * n + j)] == which)
          sum += std::exp(wd[static_cast<std::size_t>(i * n + j)] - top);
      return top + std::log(sum);
    };
    p_lse[i] = lse(1, pmax);
    n_lse[i] = lse(-1, nmax);
    const double z = p_lse[i] + n_lse[i];
    row_loss[i] = z == -inf ? 0.0 : std::max(z, 0.0) + std::log1p(std::exp(-std::fabs(z)));  // softplus
  }
  // Keras masks rows whose loss is 0 out of its sum_over_batch_size mean: Σ L / (valid + ε). Each
  // example carries L_i·N/(valid + ε), so the engine's mean over the batch is that value.
  double valid = 0;
  for (double l : row_loss) valid += l > 0 ? 1.0 : 0.0;
  const double factor = static_cast<double>(n) / (valid + 1e-7);
  Tensor host_loss({n}, DType::float32, Device{});
  for (std::int64_t i = 0; i < n; ++i) host_loss.data<float>()[i] = static_cast<float>(row_loss[i] * factor);
  loss.copy_from(host_loss);
  if (!grad.defined()) return;
  // dL_i/dD_ij = sigmoid(z_i)·softmax weight of (i, j) in its mask·d(wd_ij)/dD_ij; then through
  // D = max(1 − S, 0) and S = P·Pᵀ: dP = (G + Gᵀ)·P with G_ij = d/dS_ij.
  std::vector<double> G(dist.size(), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    if (row_loss[i] <= 0) continue;
    const double z = p_lse[i] + n_lse[i], sig = 1.0 / (1.0 + std::exp(-z));
    for (std::int64_t j = 0; j < n; ++j) {
      const std::size_t k = static_cast<std::size_t>(i * n + j);
      const double d = dist[k];
      double slope = 0;
      if (kind[k] == 1)
        slope = std::exp(wd[k] - p_lse[i]) * -g * ((m - d) * (m + d > 0 ? 1.0 : 0.0) - std::max(m + d, 0.0));
      else if (kind[k] == -1)
        slope =
            std::exp(wd[k] - n_lse[i]) * g * (-(1 - m - d) * (1 + m - d > 0 ? 1.0 : 0.0) - std::max(1 + m - d, 0.0));
      G[k] = d > 0 ? -sig * slope : 0.0;  // dD/dS = −1 where 1 − S > 0
    }
  }
  const double scale = factor * grad_scale;
  Tensor host_grad({n, e}, DType::float32, Device{});
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t c = 0; c < e; ++c) {
      double sum = 0;
      for (std::int64_t j = 0; j < n; ++j)
        sum += (G[static_cast<std::size_t>(i * n + j)] + G[static_cast<std::size_t>(j * n + i)]) * p[j * e + c];
      host_grad.data<float>()[i * e + c] = static_cast<float>(sum * scale);
    }
  grad.copy_from(host_grad);
}

}  // namespace kerascpp::losses
