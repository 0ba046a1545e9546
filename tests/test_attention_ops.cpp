// The CPU backend's attention ops (batched_matmul, transpose, masked_fill) against naive loops
// on random inputs, and the errors bad shapes give.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "backend/cpu/cpu_backend.hpp"
#include "kerascpp/backend/backend.hpp"
#include "kerascpp/error.hpp"

namespace K = kerascpp;

namespace {

K::Tensor random_tensor(const K::Shape& shape, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(static_cast<std::size_t>(K::shape_numel(shape)));
  for (auto& x : v) x = dist(gen);
  return K::Tensor::from_vector(shape, v);
}

}  // namespace

TEST_CASE("cpu backend: batched_matmul with each transpose, accumulate and an allocated output") {
  auto be = K::make_cpu_backend(2);
  const std::int64_t B = 3, M = 4, Kd = 5, N = 2;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (bool acc : {false, true}) {
        CAPTURE(ta);
        CAPTURE(tb);
        CAPTURE(acc);
        K::Tensor a = random_tensor(ta ? K::Shape{B, Kd, M} : K::Shape{B, M, Kd}, 1);
        K::Tensor b = random_tensor(tb ? K::Shape{B, N, Kd} : K::Shape{B, Kd, N}, 2);
        K::Tensor c = random_tensor({B, M, N}, 3);
        const auto c0 = c.to_vector(), pa = a.to_vector(), pb = b.to_vector();
        be->batched_matmul(a, ta, b, tb, c, acc);
        const auto pc = c.to_vector();
        for (std::int64_t s = 0; s < B; ++s)
          for (std::int64_t i = 0; i < M; ++i)
            for (std::int64_t j = 0; j < N; ++j) {
              double want = acc ? c0[std::size_t((s * M + i) * N + j)] : 0.0;
              for (std::int64_t k = 0; k < Kd; ++k) {
                const float av = ta ? pa[std::size_t((s * Kd + k) * M + i)] : pa[std::size_t((s * M + i) * Kd + k)];
                const float bv = tb ? pb[std::size_t((s * N + j) * Kd + k)] : pb[std::size_t((s * Kd + k) * N + j)];
                want += double(av) * bv;
              }
              CHECK(pc[std::size_t((s * M + i) * N + j)] == doctest::Approx(want).epsilon(1e-5));
            }
      }
  K::Tensor a = random_tensor({B, M, Kd}, 4), b = random_tensor({B, Kd, N}, 5), fresh;
  be->batched_matmul(a, false, b, false, fresh, true);
  CHECK(fresh.shape() == K::Shape{B, M, N});
  K::Tensor wrong_batch = random_tensor({B + 1, Kd, N}, 6), out;
  CHECK_THROWS_AS(be->batched_matmul(a, false, wrong_batch, false, out, false), K::ShapeError);
  K::Tensor wrong_inner = random_tensor({B, Kd + 1, N}, 7);
  CHECK_THROWS_AS(be->batched_matmul(a, false, wrong_inner, false, out, false), K::ShapeError);
}

TEST_CASE("cpu backend: transpose permutes axes (rank 2 to 4) and refuses a bad permutation") {
  auto be = K::make_cpu_backend(2);
  K::Tensor x = random_tensor({2, 3, 4, 5}, 10);
  const auto px = x.to_vector();
  K::Tensor y;
  be->transpose(x, {0, 2, 1, 3}, y);
  REQUIRE(y.shape() == K::Shape{2, 4, 3, 5});
  const auto py = y.to_vector();
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c)
        for (int d = 0; d < 5; ++d)
          CHECK(py[std::size_t(((a * 4 + c) * 3 + b) * 5 + d)] == px[std::size_t(((a * 3 + b) * 4 + c) * 5 + d)]);
  K::Tensor z;
  be->transpose(x, {3, 0, 2, 1}, z);
  REQUIRE(z.shape() == K::Shape{5, 2, 4, 3});
  const auto pz = z.to_vector();
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c)
        for (int d = 0; d < 5; ++d)
          CHECK(pz[std::size_t(((d * 2 + a) * 4 + c) * 3 + b)] == px[std::size_t(((a * 3 + b) * 4 + c) * 5 + d)]);
  K::Tensor m = random_tensor({3, 7}, 11), mt;
  be->transpose(m, {1, 0}, mt);
  CHECK(mt.to_vector()[std::size_t(2 * 3 + 1)] == m.to_vector()[std::size_t(1 * 7 + 2)]);
  K::Tensor bad;
  CHECK_THROWS_AS(be->transpose(x, {0, 1, 1, 3}, bad), K::ValueError);
  CHECK_THROWS_AS(be->transpose(x, {0, 1, 2}, bad), K::ValueError);
}

TEST_CASE("cpu backend: masked_fill writes the value where the mask is 0, per batch row") {
  auto be = K::make_cpu_backend(2);
  const std::int64_t B = 2, G = 3, L = 4;
  K::Tensor x = random_tensor({B, G, L}, 20);
  const auto x0 = x.to_vector();
  std::vector<std::uint8_t> mv = {1, 0, 1, 1, 0, 0, 1, 0};
  K::Tensor mask = K::Tensor::from_vector({B, L}, mv);
  be->masked_fill(x, mask, -1e9f);
  const auto px = x.to_vector();
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t g = 0; g < G; ++g)
      for (std::int64_t l = 0; l < L; ++l) {
        const auto i = std::size_t((b * G + g) * L + l);
        CHECK(px[i] == (mv[std::size_t(b * L + l)] ? x0[i] : -1e9f));
      }
  K::Tensor short_mask = K::Tensor::from_vector({B, L - 1}, std::vector<std::uint8_t>(std::size_t(B * (L - 1)), 1));
  CHECK_THROWS_AS(be->masked_fill(x, short_mask, 0.f), K::ShapeError);
}

TEST_CASE("cpu backend: mask_and and attention_mask combine Keras masks (query, value, explicit, causal)") {
  auto be = K::make_cpu_backend(1);
  K::Tensor a = K::Tensor::from_vector({2, 3}, std::vector<std::uint8_t>{1, 0, 1, 1, 1, 0});
  K::Tensor b = K::Tensor::from_vector({2, 3}, std::vector<std::uint8_t>{1, 1, 0, 0, 1, 1});
  K::Tensor both;
  be->mask_and(a, b, both);
  CHECK(std::vector<std::uint8_t>(static_cast<const std::uint8_t*>(both.raw()),
                                  static_cast<const std::uint8_t*>(both.raw()) + 6) ==
        std::vector<std::uint8_t>{1, 0, 0, 0, 1, 0});
  K::Tensor wrong = K::Tensor::from_vector({3, 2}, std::vector<std::uint8_t>(6, 1));
  CHECK_THROWS_AS(be->mask_and(a, wrong, both), K::ShapeError);

  const std::int64_t B = 2, T = 3, S = 4;
  std::vector<std::uint8_t> q = {1, 0, 1, 1, 1, 1}, v = {1, 1, 0, 1, 0, 1, 1, 1}, e(B * T * S);
  for (std::size_t i = 0; i < e.size(); ++i) e[i] = static_cast<std::uint8_t>(i % 5 != 0);
  K::Tensor qm = K::Tensor::from_vector({B, T}, q), vm = K::Tensor::from_vector({B, S}, v),
            em = K::Tensor::from_vector({B, T, S}, e);
  for (int variant = 0; variant < 5; ++variant) {
    CAPTURE(variant);
    const bool use_q = variant != 1, use_v = variant != 2, use_e = variant != 3, causal = variant >= 3;
    K::Tensor out({B, T, S}, K::DType::uint8);
    be->attention_mask(use_q ? qm : K::Tensor(), use_v ? vm : K::Tensor(), use_e ? em : K::Tensor(), causal, out);
    const auto* o = static_cast<const std::uint8_t*>(out.raw());
    for (std::int64_t bb = 0; bb < B; ++bb)
      for (std::int64_t t = 0; t < T; ++t)
        for (std::int64_t s = 0; s < S; ++s) {
          const std::size_t i = std::size_t((bb * T + t) * S + s);
          const bool keep = (!use_q || q[std::size_t(bb * T + t)]) && (!use_v || v[std::size_t(bb * S + s)]) &&
                            (!use_e || e[i]) && (!causal || s <= t);
          CHECK(o[i] == (keep ? 1 : 0));
        }
  }
  K::Tensor out({B, T, S}, K::DType::uint8);
  CHECK_THROWS_AS(be->attention_mask(vm, K::Tensor(), K::Tensor(), false, out), K::ShapeError);
}
