#include "kerascpp/core/initializers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "check.hpp"
#include "kerascpp/core/random.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::initializers {
namespace {

struct Fans {
  double in, out;
};

Fans compute_fans(const Shape& s) {
  if (s.empty()) return {1, 1};
  if (s.size() == 1) return {double(s[0]), double(s[0])};
  if (s.size() == 2) return {double(s[0]), double(s[1])};
  double receptive = 1;
  for (std::size_t i = 0; i + 2 < s.size(); ++i) receptive *= double(s[i]);
  return {double(s[s.size() - 2]) * receptive, double(s[s.size() - 1]) * receptive};
}

void fill_uniform(Tensor& t, double limit, Rng& rng) {
  float* p = t.data<float>();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>((rng.uniform_double() * 2 - 1) * limit);
}

// Keras' VarianceScaling(distribution="truncated_normal"): normal truncated at two standard
// deviations, with the stddev corrected for the truncation.
void fill_truncated_normal(Tensor& t, double stddev, Rng& rng) {
  float* p = t.data<float>();
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    double z;
    do z = rng.normal();
    while (std::fabs(z) > 2.0);
    p[i] = static_cast<float>(z * stddev);
  }
}

// Keras' Orthogonal(gain=1): rows = Π shape[:-1], cols = shape[-1]; the Q of the QR decomposition
// of a normal [max, min] matrix with its columns' signs made those of R's diagonal, transposed
// when rows < cols. Gram-Schmidt (modified, in double) gives that Q directly: its R has a positive
// diagonal, which is what the sign correction makes of any QR.
void fill_orthogonal(Tensor& t, Rng& rng) {
  const Shape& s = t.shape();
  std::int64_t rows = 1;
  for (std::size_t i = 0; i + 1 < s.size(); ++i) rows *= s[i];
  const std::int64_t cols = s.empty() ? 1 : s.back();
  const std::int64_t m = std::max(rows, cols), n = std::min(rows, cols);
  std::vector<double> a(static_cast<std::size_t>(m * n));  // row-major [m, n]
  for (double& v : a) v = rng.normal();
  auto at = [&](std::int64_t i, std::int64_t j) -> double& { return a[static_cast<std::size_t>(i * n + j)]; };
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t k = 0; k < j; ++k) {
      double dot = 0;
      for (std::int64_t i = 0; i < m; ++i) dot += at(i, k) * at(i, j);
      for (std::int64_t i = 0; i < m; ++i) at(i, j) -= dot * at(i, k);
    }
    double norm = 0;
    for (std::int64_t i = 0; i < m; ++i) norm += at(i, j) * at(i, j);
    norm = std::sqrt(norm);
    for (std::int64_t i = 0; i < m; ++i) at(i, j) /= norm;
  }
  float* p = t.data<float>();
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) p[r * cols + c] = static_cast<float>(rows >= cols ? at(r, c) : at(c, r));
}

constexpr double kTruncationCorrection = 0.87962566103423978;

}  // namespace

void initialize(Tensor& t, const std::string& name, std::uint64_t seed, const std::string& where) {
  Rng rng(seed);
  Fans f = compute_fans(t.shape());
  if (name == "zeros") t.fill(0.f);
  else if (name == "ones") t.fill(1.f);
  else if (name == "glorot_uniform") fill_uniform(t, std::sqrt(6.0 / (f.in + f.out)), rng);
  else if (name == "glorot_normal")
    fill_truncated_normal(t, std::sqrt(2.0 / (f.in + f.out)) / kTruncationCorrection, rng);
  else if (name == "he_normal") fill_truncated_normal(t, std::sqrt(2.0 / f.in) / kTruncationCorrection, rng);
  else if (name == "he_uniform") fill_uniform(t, std::sqrt(6.0 / f.in), rng);
  // Keras' LecunUniform: VarianceScaling(1, "fan_in", "uniform"), limit sqrt(3 / fan_in) (the
  // official NCF's output layer).
  else if (name == "lecun_uniform") fill_uniform(t, std::sqrt(3.0 / f.in), rng);
  // Keras' "uniform" / "random_uniform": RandomUniform(-0.05, 0.05), Embedding's default.
  else if (name == "orthogonal") fill_orthogonal(t, rng);
  else if (name == "uniform" || name == "random_uniform") fill_uniform(t, 0.05, rng);
  else
    throw ValueError(
        fmt::format("{}: unknown initializer '{}'; use glorot_uniform, glorot_normal, he_normal, "
                    "he_uniform, lecun_uniform, orthogonal, uniform, zeros or ones",
                    where, name));
}

}  // namespace kerascpp::initializers

namespace kerascpp::initializers {

void Initializer::operator()(Tensor& t, std::uint64_t seed, const std::string& where) const {
  if (value_) t.fill(*value_);
  else initialize(t, name_, seed, where);
  if (ones_begin_ >= ones_end_) return;
  KERASCPP_CHECK_VALUE(ones_begin_ >= 0 && ones_end_ <= t.numel(),
                       "{}: the initializer's ones range [{}, {}) lies outside a weight of {} elements", where,
                       ones_begin_, ones_end_, t.numel());
  std::fill(t.data<float>() + ones_begin_, t.data<float>() + ones_end_, 1.f);
}

}  // namespace kerascpp::initializers
