#include "kerascpp/initializers.hpp"

#include <fmt/format.h>

#include <cmath>

#include "kerascpp/random.hpp"

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
  else if (name == "uniform" || name == "random_uniform") fill_uniform(t, 0.05, rng);
  else
    throw ValueError(
        fmt::format("{}: unknown initializer '{}'; use glorot_uniform, glorot_normal, he_normal, "
                    "he_uniform, lecun_uniform, uniform, zeros or ones",
                    where, name));
}

}  // namespace kerascpp::initializers

namespace kerascpp::initializers {

void Initializer::operator()(Tensor& t, std::uint64_t seed, const std::string& where) const {
  if (value_) t.fill(*value_);
  else initialize(t, name_, seed, where);
}

}  // namespace kerascpp::initializers
