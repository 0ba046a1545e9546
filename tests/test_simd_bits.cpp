// The hand-vectorised loops (src/simd_clones.hpp) come in AVX-512, AVX2 and baseline builds, and
// the loader picks one for the processor; each must give the bits of the scalar formula it
// vectorises, so that training is bit-identical across processor families for the same oneDNN
// kernels. These cases compare with that formula written out here, bit for bit. The main suite
// runs the processor's widest build; scripts/asan.sh builds the AVX2 one alone
// (-DKERASCPP_SIMD_AVX2_ONLY=ON), so CI checks both on an AVX-512 machine.
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "bit_equal.hpp"
#include "data/dataset_node.hpp"
#include "kerascpp/backend/backend.hpp"

namespace K = kerascpp;
using kerascpp_test::bit_equal;

namespace {

using Vec = std::vector<float>;

// Values that tell builds apart: random magnitudes over many binades, plus zeros of both signs,
// infinities, NaN and denormals at fixed places (some past the last full vector).
Vec edgy_values(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> mantissa(-1.f, 1.f);
  std::uniform_int_distribution<int> exponent(-40, 20);
  Vec v(n);
  for (auto& x : v) x = std::ldexp(mantissa(gen), exponent(gen));
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float specials[] = {0.f, -0.f, inf, -inf, nan, FLT_MIN / 4, -FLT_MIN / 3, 1e-30f};
  for (std::size_t i = 0; i < std::size(specials) && i * 97 < n; ++i) v[i * 97] = specials[i];
  if (n > 3) v[n - 2] = nan;
  return v;
}

K::Tensor tensor_of(K::Shape shape, const Vec& v) { return K::Tensor::from_vector(std::move(shape), v); }

}  // namespace

TEST_CASE("simd builds: Adam gives the scalar update's bits") {
  auto be = K::make_cpu_backend(2);
  // Two parallel blocks of 16,384 and a third of 29, which no vector width divides.
  const std::int64_t n = 2 * 16384 + 29;
  const auto size = static_cast<std::size_t>(n);
  Vec w0(size), g = edgy_values(size, 2), m0 = edgy_values(size, 3), v0 = edgy_values(size, 4);
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (auto& x : w0) x = dist(gen);
  for (auto& x : v0) x = std::fabs(x);  // a second moment is never negative
  // Moments that decay below FLT_MIN under a zero gradient (the flush is part of the formula).
  g[5] = g[6] = 0.f;
  m0[5] = 1.2e-38f;
  v0[6] = 1e-38f;
  const float lr_t = 1e-3f * std::sqrt(1.f - 0.999f) / (1.f - 0.9f), b1 = 0.9f, b2 = 0.999f, eps = 1e-7f;

  K::Tensor w = tensor_of({n}, w0), m = tensor_of({n}, m0), v = tensor_of({n}, v0);
  be->adam_update(w, tensor_of({n}, g), m, v, lr_t, b1, b2, eps);

  auto flush = [](float x) { return std::fabs(x) < FLT_MIN ? 0.f : x; };
  Vec w_ref = w0, m_ref = m0, v_ref = v0;
  for (std::size_t i = 0; i < w_ref.size(); ++i) {
    m_ref[i] = flush(m0[i] + (g[i] - m0[i]) * (1.f - b1));
    v_ref[i] = flush(v0[i] + (g[i] * g[i] - v0[i]) * (1.f - b2));
    w_ref[i] = w0[i] - (m_ref[i] * lr_t) / (std::sqrt(v_ref[i]) + eps);
  }
  CHECK((m_ref[5] == 0.f && v_ref[6] == 0.f));  // the flushes above were reached
  CHECK(bit_equal(m, tensor_of({n}, m_ref)));
  CHECK(bit_equal(v, tensor_of({n}, v_ref)));
  CHECK(bit_equal(w, tensor_of({n}, w_ref)));
}

TEST_CASE("simd builds: ReLU forward and backward give the scalar formula's bits") {
  auto be = K::make_cpu_backend(2);
  const std::int64_t rows = 9, cols = 4001;  // > one parallel block, odd width
  const Vec x = edgy_values(static_cast<std::size_t>(rows * cols), 7), dy = edgy_values(x.size(), 8);
  K::Tensor y, dx;
  be->activation_forward(K::ActivationKind::relu, tensor_of({rows, cols}, x), y);
  Vec y_ref(x.size()), dx_ref(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    y_ref[i] = x[i] <= 0.f ? 0.f : x[i];                 // NaN stays, -0 becomes +0
    dx_ref[i] = y_ref[i] > 0.f ? dy[i] : dy[i] - dy[i];  // +0, or NaN for a NaN/Inf dy
  }
  CHECK(bit_equal(y, tensor_of({rows, cols}, y_ref)));
  be->activation_backward(K::ActivationKind::relu, y, tensor_of({rows, cols}, dy), dx);
  CHECK(bit_equal(dx, tensor_of({rows, cols}, dx_ref)));
}

TEST_CASE("simd builds: bias-gradient row sums give the in-order double sums' bits") {
  auto be = K::make_cpu_backend(2);
  // Up to 256 rows stay one reduction chunk, so each channel is one in-order sum in double.
  const std::int64_t rows = 200;
  for (std::int64_t C : {5, 16, 37, 300}) {
    CAPTURE(C);
    Vec x = edgy_values(static_cast<std::size_t>(rows * C), 11);
    for (auto& e : x)
      if (!std::isfinite(e)) e = 1.f;  // the sums are compared as numbers
    K::Tensor out;
    be->sum_to_last_axis(tensor_of({rows, C}, x), out, false);
    Vec ref(static_cast<std::size_t>(C));
    for (std::int64_t c = 0; c < C; ++c) {
      double s = 0.0;
      for (std::int64_t r = 0; r < rows; ++r) s += x[static_cast<std::size_t>(r * C + c)];
      ref[static_cast<std::size_t>(c)] = static_cast<float>(s);
    }
    CHECK(bit_equal(out, tensor_of({C}, ref)));
  }
}

TEST_CASE("simd builds: the byte decode gives the scalar division's bits") {
  const std::size_t n = 28 * 28 * 3 + 5;
  std::vector<std::uint8_t> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<std::uint8_t>((i * 37 + 11) % 256);
  for (float divisor : {255.f, 1.f, 3.f}) {
    CAPTURE(divisor);
    Vec out(n), ref(n);
    K::detail::decode_uint8(bytes.data(), out.data(), n, divisor);
    for (std::size_t i = 0; i < n; ++i) ref[i] = static_cast<float>(bytes[i]) / divisor;
    CHECK(bit_equal(tensor_of({static_cast<std::int64_t>(n)}, out), tensor_of({static_cast<std::int64_t>(n)}, ref)));
  }
}
