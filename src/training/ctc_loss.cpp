// Keras' CTC loss (Graves et al. 2006) with Keras' conventions: class 0 is the blank and pads the
// labels, an example's labels are its first count(labels != 0) entries, and every example uses all
// T steps of y_pred. The forward-backward recursion runs per example over T × (2L + 1) states, a
// dynamic programme no Backend op provides, so this loss reads the shard on the host (one copy on a
// GPU) and computes it in double, in log space.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "check.hpp"
#include "kerascpp/training/losses.hpp"

namespace kerascpp::losses {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double log_add(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double m = std::max(a, b);
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}

}  // namespace

void CTC::compute(Backend&, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
                  float grad_scale) const {
  KERASCPP_CHECK_SHAPE(pred.rank() == 3, "ctc: y_pred {} must be (batch_size, max_length, num_classes) logits",
                       shape_str(pred.shape()));
  KERASCPP_CHECK_SHAPE(target.rank() == 2 && target.dim(0) == pred.dim(0),
                       "ctc: y_true {} must be (batch_size, max_label_length) class ids for y_pred {}",
                       shape_str(target.shape()), shape_str(pred.shape()));
  const std::int64_t n = pred.dim(0), steps = pred.dim(1), classes = pred.dim(2), max_len = target.dim(1);
  const std::vector<float> z = pred.to_vector(), ids = target.to_vector();
  Tensor host_loss({n}, DType::float32, Device{});
  Tensor host_grad;
  if (grad.defined()) host_grad = Tensor(pred.shape(), DType::float32, Device{});
  for (std::int64_t b = 0; b < n; ++b) {
    // The labels: the first count(!= 0) entries (Keras' label_length), checked against the classes.
    std::int64_t length = 0;
    for (std::int64_t i = 0; i < max_len; ++i) length += ids[b * max_len + i] != 0 ? 1 : 0;
    std::vector<std::int64_t> ext(static_cast<std::size_t>(2 * length + 1), 0);  // blank, l1, blank, l2, ..., blank
    for (std::int64_t i = 0; i < length; ++i) {
      const float id = ids[b * max_len + i];
      KERASCPP_CHECK_VALUE(id >= 0 && id < classes && id == std::floor(id),
                           "ctc: label {} of example {} is not a class id in [0, {})", id, b, classes);
      ext[static_cast<std::size_t>(2 * i + 1)] = static_cast<std::int64_t>(id);
    }
    const std::size_t S = ext.size();
    // log-softmax of each step's logits.
    std::vector<double> lp(static_cast<std::size_t>(steps * classes));
    for (std::int64_t t = 0; t < steps; ++t) {
      const float* row = z.data() + (b * steps + t) * classes;
      const double m = *std::max_element(row, row + classes);
      double sum = 0;
      for (std::int64_t k = 0; k < classes; ++k) sum += std::exp(row[k] - m);
      for (std::int64_t k = 0; k < classes; ++k) lp[t * classes + k] = row[k] - m - std::log(sum);
    }
    // Whether state s may come from s − 2 (a label different from the one two states back).
    auto skip = [&](std::size_t s) { return s >= 2 && ext[s] != 0 && ext[s] != ext[s - 2]; };
    std::vector<double> alpha(static_cast<std::size_t>(steps) * S, kNegInf), beta(alpha.size(), kNegInf);
    for (std::int64_t t = 0; t < steps; ++t)
      for (std::size_t s = 0; s < S; ++s) {
        double a = kNegInf;
        if (t == 0) a = s < 2 ? 0.0 : kNegInf;
        else {
          const double* prev = alpha.data() + (t - 1) * S;
          a = prev[s];
          if (s >= 1) a = log_add(a, prev[s - 1]);
          if (skip(s)) a = log_add(a, prev[s - 2]);
        }
        alpha[t * S + s] = a == kNegInf ? kNegInf : a + lp[t * classes + ext[s]];
      }
    for (std::int64_t t = steps - 1; t >= 0; --t)
      for (std::size_t s = S; s-- > 0;) {
        double v = kNegInf;
        if (t == steps - 1) v = s + 2 >= S ? 0.0 : kNegInf;
        else {
          const double* next = beta.data() + (t + 1) * S;
          v = next[s];
          if (s + 1 < S) v = log_add(v, next[s + 1]);
          if (s + 2 < S && skip(s + 2)) v = log_add(v, next[s + 2]);
        }
        beta[t * S + s] = v == kNegInf ? kNegInf : v + lp[t * classes + ext[s]];
      }
    double log_p = alpha[(steps - 1) * S + S - 1];
    if (S >= 2) log_p = log_add(log_p, alpha[(steps - 1) * S + S - 2]);
    host_loss.data<float>()[b] = static_cast<float>(-log_p);
    if (!grad.defined()) continue;
    // d(−log p)/dz_tk = softmax_tk − Σ_{s: ext_s = k} α_t(s)·β_t(s) / (p·y_tk)   (α, β both hold y_t).
    for (std::int64_t t = 0; t < steps; ++t) {
      std::vector<double> occupancy(static_cast<std::size_t>(classes), kNegInf);
      for (std::size_t s = 0; s < S; ++s)
        occupancy[ext[s]] = log_add(occupancy[ext[s]], alpha[t * S + s] + beta[t * S + s]);
      for (std::int64_t k = 0; k < classes; ++k) {
        const double y = lp[t * classes + k];
        const double d = std::exp(y) - (occupancy[k] == kNegInf ? 0.0 : std::exp(occupancy[k] - log_p - y));
        host_grad.data<float>()[(b * steps + t) * classes + k] = static_cast<float>(d * grad_scale);
      }
    }
  }
  loss.copy_from(host_loss);
  if (grad.defined()) grad.copy_from(host_grad);
}

}  // namespace kerascpp::losses
