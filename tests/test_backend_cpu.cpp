// CPU backend: every op against a naive reference loop on random inputs, gradients of the
// losses against finite differences, optimizer steps against their formulas, and bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backend/cpu/cpu_backend.hpp"
#include "bit_equal.hpp"
#include "kerascpp/backend/backend.hpp"
#include "kerascpp/error.hpp"

namespace K = kerascpp;

namespace {

using Vec = std::vector<float>;

Vec random_vec(std::size_t n, std::uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Vec v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

K::Tensor random_tensor(K::Shape shape, std::uint32_t seed, float lo = -1.f, float hi = 1.f) {
  auto n = static_cast<std::size_t>(K::shape_numel(shape));
  return K::Tensor::from_vector(std::move(shape), random_vec(n, seed, lo, hi));
}

// max |a − e| / max(1, |e|) over all elements.
double max_error(const Vec& actual, const Vec& expected) {
  REQUIRE(actual.size() == expected.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    double e = expected[i];
    double err = std::fabs(actual[i] - e) / std::max(1.0, std::fabs(e));
    if (!(err <= worst)) worst = err;  // NaN propagates as a failure
  }
  return worst;
}

void check_close(const K::Tensor& actual, const Vec& expected, double tol = 1e-4) {
  CHECK(max_error(actual.to_vector(), expected) <= tol);
}

using kerascpp_test::bit_equal;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const K::Error& e) { return e.what(); }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// ---------------------------------------------------------------- reference loops

Vec ref_matmul(const Vec& a, bool ta, const Vec& b, bool tb, std::int64_t M, std::int64_t Kd, std::int64_t N) {
  Vec c(static_cast<std::size_t>(M * N));
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (std::int64_t k = 0; k < Kd; ++k)
        s += double(ta ? a[k * M + i] : a[i * Kd + k]) * (tb ? b[j * Kd + k] : b[k * N + j]);
      c[i * N + j] = float(s);
    }
  return c;
}

void ref_softmax_rows(Vec& v, std::int64_t C) {
  for (std::size_t r = 0; r < v.size() / C; ++r) {
    float* row = v.data() + r * C;
    double m = *std::max_element(row, row + C), s = 0;
    for (std::int64_t j = 0; j < C; ++j) s += std::exp(row[j] - m);
    for (std::int64_t j = 0; j < C; ++j) row[j] = float(std::exp(row[j] - m) / s);
  }
}

void ref_activation(Vec& v, K::ActivationKind act, std::int64_t C) {
  switch (act) {
    case K::ActivationKind::relu:
      for (auto& x : v) x = std::max(x, 0.f);
      break;
    case K::ActivationKind::sigmoid:
      for (auto& x : v) x = float(1 / (1 + std::exp(-double(x))));
      break;
    case K::ActivationKind::tanh:
      for (auto& x : v) x = std::tanh(x);
      break;
    case K::ActivationKind::softmax:
      ref_softmax_rows(v, C);
      break;
    case K::ActivationKind::linear:
      break;
  }
}

Vec ref_activation_backward(K::ActivationKind act, const Vec& y, const Vec& dy, std::int64_t C) {
  Vec dx(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) {
    switch (act) {
      case K::ActivationKind::relu:
        dx[i] = y[i] > 0 ? dy[i] : 0.f;
        break;
      case K::ActivationKind::sigmoid:
        dx[i] = dy[i] * y[i] * (1 - y[i]);
        break;
      case K::ActivationKind::tanh:
        dx[i] = dy[i] * (1 - y[i] * y[i]);
        break;
      case K::ActivationKind::linear:
        dx[i] = dy[i];
        break;
      case K::ActivationKind::softmax:
        break;
    }
  }
  if (act == K::ActivationKind::softmax)
    for (std::size_t r = 0; r < y.size() / C; ++r) {
      double dot = 0;
      for (std::int64_t j = 0; j < C; ++j) dot += double(dy[r * C + j]) * y[r * C + j];
      for (std::int64_t j = 0; j < C; ++j) dx[r * C + j] = float(y[r * C + j] * (dy[r * C + j] - dot));
    }
  return dx;
}

struct ConvCase {
  std::int64_t n, h, w, c, o;
  K::Conv2DGeometry g;
  std::int64_t oh() const { return (h + g.pad_top + g.pad_bottom - g.kernel_h) / g.stride_h + 1; }
  std::int64_t ow() const { return (w + g.pad_left + g.pad_right - g.kernel_w) / g.stride_w + 1; }
};

// Calls f(x index, w index, y index) for every multiply of the convolution.
template <class F>
void for_each_tap(const ConvCase& cc, F&& f) {
  const auto& g = cc.g;
  for (std::int64_t n = 0; n < cc.n; ++n)
    for (std::int64_t oy = 0; oy < cc.oh(); ++oy)
      for (std::int64_t ox = 0; ox < cc.ow(); ++ox)
        for (std::int64_t ky = 0; ky < g.kernel_h; ++ky)
          for (std::int64_t kx = 0; kx < g.kernel_w; ++kx) {
            std::int64_t iy = oy * g.stride_h - g.pad_top + ky, ix = ox * g.stride_w - g.pad_left + kx;
            if (iy < 0 || iy >= cc.h || ix < 0 || ix >= cc.w) continue;
            for (std::int64_t c = 0; c < cc.c; ++c)
              for (std::int64_t o = 0; o < cc.o; ++o)
                f(((n * cc.h + iy) * cc.w + ix) * cc.c + c, ((ky * g.kernel_w + kx) * cc.c + c) * cc.o + o,
                  ((n * cc.oh() + oy) * cc.ow() + ox) * cc.o + o);
          }
}

struct PoolCase {
  std::int64_t n, h, w, c;
  K::Pool2DGeometry g;
  std::int64_t oh() const { return (h + g.pad_top + g.pad_bottom - g.pool_h) / g.stride_h + 1; }
  std::int64_t ow() const { return (w + g.pad_left + g.pad_right - g.pool_w) / g.stride_w + 1; }
};

// Calls f(y index, list of x indices in the window) for every output position.
template <class F>
void for_each_window(const PoolCase& pc, F&& f) {
  const auto& g = pc.g;
  std::vector<std::int64_t> idx;
  for (std::int64_t n = 0; n < pc.n; ++n)
    for (std::int64_t oy = 0; oy < pc.oh(); ++oy)
      for (std::int64_t ox = 0; ox < pc.ow(); ++ox)
        for (std::int64_t c = 0; c < pc.c; ++c) {
          idx.clear();
          for (std::int64_t ky = 0; ky < g.pool_h; ++ky)
            for (std::int64_t kx = 0; kx < g.pool_w; ++kx) {
              std::int64_t iy = oy * g.stride_h - g.pad_top + ky, ix = ox * g.stride_w - g.pad_left + kx;
              if (iy >= 0 && iy < pc.h && ix >= 0 && ix < pc.w) idx.push_back(((n * pc.h + iy) * pc.w + ix) * pc.c + c);
            }
          f(((n * pc.oh() + oy) * pc.ow() + ox) * pc.c + c, idx);
        }
}

// Keras 3 numpy-backend losses, per row, in double.
double ref_crossentropy_row(const float* p, const float* t, std::int64_t C, bool from_logits) {
  std::vector<double> logp(C);
  if (from_logits) {
    double m = *std::max_element(p, p + C), s = 0;
    for (std::int64_t j = 0; j < C; ++j) s += std::exp(p[j] - m);
    for (std::int64_t j = 0; j < C; ++j) logp[j] = p[j] - m - std::log(s);
  } else {
    double s = 0;
    for (std::int64_t j = 0; j < C; ++j) s += p[j];
    for (std::int64_t j = 0; j < C; ++j) logp[j] = std::log(std::clamp(p[j] / s, 1e-7, 1 - 1e-7));
  }
  double loss = 0;
  for (std::int64_t j = 0; j < C; ++j) loss -= t[j] * logp[j];
  return loss;
}

double ref_bce(float x, float t, bool from_logits) {
  double p = from_logits ? 1 / (1 + std::exp(-double(x))) : x;
  p = std::clamp(p, 1e-7, 1 - 1e-7);
  return -(t * std::log(p) + (1 - t) * std::log(1 - p));
}

// Central finite differences of a scalar function of v, in double.
Vec finite_differences(const Vec& v, const std::function<double(const Vec&)>& f, double h = 1e-3) {
  Vec g(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    Vec a = v, b = v;
    a[i] += float(h);
    b[i] -= float(h);
    g[i] = float((f(a) - f(b)) / (double(a[i]) - double(b[i])));
  }
  return g;
}

}  // namespace

// ============================================================================ activation names

TEST_CASE("activation names round-trip and unknown names are rejected") {
  for (auto act : {K::ActivationKind::linear, K::ActivationKind::relu, K::ActivationKind::sigmoid,
                   K::ActivationKind::tanh, K::ActivationKind::softmax})
    CHECK(K::activation_from_name(K::activation_name(act), "dense") == act);
  CHECK(K::activation_from_name("", "dense") == K::ActivationKind::linear);
  std::string msg = error_of([] { K::activation_from_name("gelu_fast", "dense_3"); });
  CHECK(contains(msg, "dense_3"));
  CHECK(contains(msg, "gelu_fast"));
  CHECK(contains(msg, "relu"));
  CHECK(contains(msg, "softmax"));
}

TEST_CASE("cpu backend: name and threads") {
  auto be = K::make_cpu_backend(2);
  CHECK(be->num_threads() == 2);
  CHECK(contains(be->name(), "oneDNN"));
  CHECK(contains(be->name(), "2 threads"));
  CHECK(be->device() == K::Device{});
  auto all = K::make_cpu_backend(0);
  CHECK(all->num_threads() >= 1);
}

// ============================================================================ dense algebra

// Each runs twice: on oneDNN's matmul primitive (these sizes' path) and, with the threshold
// lowered to 0, on the sgemm path that float32 GEMMs of 1024³ multiply-adds and more take.
TEST_CASE("cpu backend: dense_forward with bias and each activation") {
  for (std::int64_t sgemm_threshold : {K::cpu::CpuBackend::kSgemmMacs, std::int64_t{0}}) {
    CAPTURE(sgemm_threshold);
    auto be = std::make_unique<K::cpu::CpuBackend>(2);
    be->set_sgemm_threshold(sgemm_threshold);
    const std::int64_t N = 7, I = 13, O = 5;
    auto x = random_tensor({N, I}, 1), w = random_tensor({I, O}, 2), b = random_tensor({O}, 3);
    for (auto act : {K::ActivationKind::linear, K::ActivationKind::relu, K::ActivationKind::sigmoid,
                     K::ActivationKind::tanh, K::ActivationKind::softmax}) {
      CAPTURE(K::activation_name(act));
      for (bool bias : {true, false}) {
        K::Tensor y;
        be->dense_forward(x, w, bias ? b : K::Tensor(), act, y);
        Vec ref = ref_matmul(x.to_vector(), false, w.to_vector(), false, N, I, O);
        if (bias)
          for (std::int64_t i = 0; i < N * O; ++i) ref[i] += b.to_vector()[i % O];
        ref_activation(ref, act, O);
        CHECK(y.shape() == K::Shape{N, O});
        check_close(y, ref);
      }
    }
    // Leading axes are batch axes, as in Keras's Dense on (batch, steps, features).
    K::Tensor y3, y2;
    be->dense_forward(x.reshape({N, 1, I}), w, b, K::ActivationKind::tanh, y3);
    be->dense_forward(x, w, b, K::ActivationKind::tanh, y2);
    CHECK(y3.shape() == K::Shape{N, 1, O});
    CHECK(bit_equal(y3, y2));
  }
}

// The sgemm path adds the bias to the finished product, as the primitive does, in one pass with
// the ReLU. The contraction (1000) is longer than sgemm's blocks of k, so adding the bias first
// and accumulating the product onto it (beta = 1) would round differently.
TEST_CASE("cpu backend: dense_forward's sgemm path adds the bias after the product, then ReLU") {
  auto be = std::make_unique<K::cpu::CpuBackend>(2);
  be->set_sgemm_threshold(0);
  const std::int64_t N = 64, I = 1000, O = 48;
  auto x = random_tensor({N, I}, 4), w = random_tensor({I, O}, 5);
  Vec bv = random_tensor({O}, 6).to_vector();
  bv[3] = std::numeric_limits<float>::quiet_NaN();  // a NaN column stays NaN through ReLU
  const K::Tensor b = K::Tensor::from_vector({O}, bv);
  K::Tensor product, y_linear, y_relu;
  be->dense_forward(x, w, K::Tensor(), K::ActivationKind::linear, product);
  be->dense_forward(x, w, b, K::ActivationKind::linear, y_linear);
  be->dense_forward(x, w, b, K::ActivationKind::relu, y_relu);
  Vec want_linear = product.to_vector(), want_relu(want_linear.size());
  for (std::size_t i = 0; i < want_linear.size(); ++i) {
    want_linear[i] += bv[i % O];
    want_relu[i] = want_linear[i] <= 0.f ? 0.f : want_linear[i];
  }
  CHECK(bit_equal(y_linear, K::Tensor::from_vector({N, O}, want_linear)));
  CHECK(bit_equal(y_relu, K::Tensor::from_vector({N, O}, want_relu)));
  CHECK(std::isnan(y_relu.to_vector()[3]));
}

TEST_CASE("cpu backend: matmul with transposes and accumulate") {
  for (std::int64_t sgemm_threshold : {K::cpu::CpuBackend::kSgemmMacs, std::int64_t{0}}) {
    CAPTURE(sgemm_threshold);
    auto be = std::make_unique<K::cpu::CpuBackend>(2);
    be->set_sgemm_threshold(sgemm_threshold);
    const std::int64_t M = 6, Kd = 9, N = 4;
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        CAPTURE(ta);
        CAPTURE(tb);
        auto a = random_tensor(ta ? K::Shape{Kd, M} : K::Shape{M, Kd}, 10);
        auto b = random_tensor(tb ? K::Shape{N, Kd} : K::Shape{Kd, N}, 11);
        Vec ref = ref_matmul(a.to_vector(), ta, b.to_vector(), tb, M, Kd, N);
        K::Tensor c = random_tensor({M, N}, 12);
        be->matmul(a, ta, b, tb, c, false);
        check_close(c, ref);
        be->matmul(a, ta, b, tb, c, true);
        Vec twice(ref.size());
        for (std::size_t i = 0; i < ref.size(); ++i) twice[i] = 2 * ref[i];
        check_close(c, twice);
      }
  }
}

TEST_CASE("cpu backend: sum_to_last_axis with accumulate") {
  auto be = K::make_cpu_backend(2);
  auto x = random_tensor({3, 50, 7}, 20);
  Vec ref(7, 0.f), xv = x.to_vector();
  for (std::size_t i = 0; i < xv.size(); ++i) ref[i % 7] += xv[i];
  K::Tensor out;
  be->sum_to_last_axis(x, out, false);
  check_close(out, ref);
  be->sum_to_last_axis(x, out, true);
  for (auto& r : ref) r *= 2;
  check_close(out, ref);
}

// ============================================================================ convolution

TEST_CASE("cpu backend: conv2d forward, backward data and backward weights") {
  auto be = K::make_cpu_backend(2);
  std::vector<ConvCase> cases = {
      {2, 7, 7, 3, 4, {3, 3, 1, 1, 1, 1, 1, 1}},      // "same", stride 1
      {2, 8, 8, 3, 5, {3, 3, 2, 2, 0, 0, 1, 1}},      // "same", stride 2: pad_top=0, pad_bottom=1
      {1, 9, 6, 2, 3, {5, 3, 2, 1, 1, 0, 2, 1}},      // non-square kernel, mixed strides and pads
      {3, 6, 6, 1, 8, {2, 2, 2, 2, 0, 0, 0, 0}},      // "valid", one input channel
      {2, 10, 10, 16, 32, {3, 3, 1, 1, 0, 0, 0, 0}},  // wide enough for the blocked kernels
  };
  std::uint32_t seed = 100;
  for (const auto& cc : cases) {
    CAPTURE(cc.g.kernel_h);
    CAPTURE(cc.g.stride_h);
    CAPTURE(cc.c);
    const auto& g = cc.g;
    auto x = random_tensor({cc.n, cc.h, cc.w, cc.c}, seed++);
    auto w = random_tensor({g.kernel_h, g.kernel_w, cc.c, cc.o}, seed++);
    auto b = random_tensor({cc.o}, seed++);
    auto dy = random_tensor({cc.n, cc.oh(), cc.ow(), cc.o}, seed++);
    Vec xv = x.to_vector(), wv = w.to_vector(), bv = b.to_vector(), dyv = dy.to_vector();

    Vec y_ref(static_cast<std::size_t>(cc.n * cc.oh() * cc.ow() * cc.o));
    for (std::size_t i = 0; i < y_ref.size(); ++i) y_ref[i] = bv[i % cc.o];
    for_each_tap(cc, [&](auto xi, auto wi, auto yi) { y_ref[yi] += xv[xi] * wv[wi]; });
    for (auto act :
         {K::ActivationKind::linear, K::ActivationKind::relu, K::ActivationKind::tanh, K::ActivationKind::softmax}) {
      CAPTURE(K::activation_name(act));
      K::Tensor y;
      be->conv2d_forward(x, w, b, g, act, y);
      CHECK(y.shape() == K::Shape{cc.n, cc.oh(), cc.ow(), cc.o});
      Vec ref = y_ref;
      ref_activation(ref, act, cc.o);
      check_close(y, ref);
    }
    K::Tensor y_nobias;
    be->conv2d_forward(x, w, K::Tensor(), g, K::ActivationKind::linear, y_nobias);
    Vec ref_nobias = y_ref;
    for (std::size_t i = 0; i < ref_nobias.size(); ++i) ref_nobias[i] -= bv[i % cc.o];
    check_close(y_nobias, ref_nobias);

    Vec dx_ref(xv.size(), 0.f), dw_ref(wv.size(), 0.f), db_ref(bv.size(), 0.f);
    for_each_tap(cc, [&](auto xi, auto wi, auto yi) {
      dx_ref[xi] += dyv[yi] * wv[wi];
      dw_ref[wi] += dyv[yi] * xv[xi];
    });
    for (std::size_t i = 0; i < dyv.size(); ++i) db_ref[i % cc.o] += dyv[i];

    K::Tensor dx = K::Tensor::full(x.shape(), 7.f);
    be->conv2d_backward_data(dy, w, g, dx);
    check_close(dx, dx_ref);

    K::Tensor dw = K::Tensor::full(w.shape(), 3.f), db = K::Tensor::full({cc.o}, 3.f);
    be->conv2d_backward_weights(x, dy, g, dw, db, false);
    check_close(dw, dw_ref);
    check_close(db, db_ref);
    be->conv2d_backward_weights(x, dy, g, dw, db, true);
    for (auto& v : dw_ref) v *= 2;
    for (auto& v : db_ref) v *= 2;
    check_close(dw, dw_ref);
    check_close(db, db_ref);
    K::Tensor no_db, dw2;
    be->conv2d_backward_weights(x, dy, g, dw2, no_db, false);
    for (auto& v : dw_ref) v /= 2;
    check_close(dw2, dw_ref);
  }
}

TEST_CASE("cpu backend: conv2d rejects mismatched shapes") {
  auto be = K::make_cpu_backend(1);
  K::Conv2DGeometry g{3, 3, 1, 1, 0, 0, 0, 0};
  auto x = random_tensor({1, 5, 5, 3}, 1), w = random_tensor({3, 3, 4, 2}, 2);
  K::Tensor y;
  std::string msg = error_of([&] { be->conv2d_forward(x, w, K::Tensor(), g, K::ActivationKind::linear, y); });
  CHECK(contains(msg, "(1, 5, 5, 3)"));
  CHECK(contains(msg, "(3, 3, 4, 2)"));
  auto w5 = random_tensor({5, 5, 3, 2}, 3);
  msg = error_of([&] { be->conv2d_forward(x, w5, K::Tensor(), g, K::ActivationKind::linear, y); });
  CHECK(contains(msg, "3x3"));
  auto w_ok = random_tensor({3, 3, 3, 2}, 4);
  K::Tensor dx = K::Tensor::zeros({1, 5, 5, 3});
  auto bad_dy = random_tensor({1, 4, 4, 2}, 5);
  msg = error_of([&] { be->conv2d_backward_data(bad_dy, w_ok, g, dx); });
  CHECK(contains(msg, "(1, 3, 3, 2)"));
  K::Tensor wrong_y = K::Tensor::zeros({1, 4, 4, 2});
  msg = error_of([&] { be->conv2d_forward(x, w_ok, K::Tensor(), g, K::ActivationKind::linear, wrong_y); });
  CHECK(contains(msg, "(1, 3, 3, 2)"));
}

// ============================================================================ pooling

TEST_CASE("cpu backend: max and average pooling forward and backward") {
  auto be = K::make_cpu_backend(2);
  std::vector<PoolCase> cases = {
      {2, 6, 6, 3, {K::PoolKind::max, 2, 2, 2, 2, 0, 0, 0, 0}},
      {2, 7, 7, 4, {K::PoolKind::max, 3, 3, 2, 2, 1, 1, 1, 1}},  // overlapping windows, padding
      {1, 5, 8, 2, {K::PoolKind::max, 2, 2, 2, 2, 0, 0, 1, 0}},  // "same" on odd height
      {2, 6, 6, 3, {K::PoolKind::average, 2, 2, 2, 2, 0, 0, 0, 0}},
      {2, 7, 7, 4, {K::PoolKind::average, 3, 3, 2, 2, 1, 1, 1, 1}},  // padding excluded from the mean
      {1, 5, 8, 2, {K::PoolKind::average, 2, 3, 2, 1, 0, 1, 1, 1}},
  };
  std::uint32_t seed = 300;
  for (const auto& pc : cases) {
    CAPTURE(static_cast<int>(pc.g.kind));
    CAPTURE(pc.g.pool_h);
    auto x = random_tensor({pc.n, pc.h, pc.w, pc.c}, seed++);
    auto dy = random_tensor({pc.n, pc.oh(), pc.ow(), pc.c}, seed++);
    Vec xv = x.to_vector(), dyv = dy.to_vector();
    Vec y_ref(dyv.size()), dx_ref(xv.size(), 0.f);
    for_each_window(pc, [&](std::int64_t yi, const std::vector<std::int64_t>& idx) {
      if (pc.g.kind == K::PoolKind::max) {
        std::int64_t best = idx[0];
        for (auto i : idx)
          if (xv[i] > xv[best]) best = i;
        y_ref[yi] = xv[best];
        dx_ref[best] += dyv[yi];
      } else {
        double s = 0;
        for (auto i : idx) s += xv[i];
        y_ref[yi] = float(s / idx.size());
        for (auto i : idx) dx_ref[i] += dyv[yi] / float(idx.size());
      }
    });
    K::Tensor y, workspace, dx;
    be->pool2d_forward(x, pc.g, y, workspace);
    CHECK(y.shape() == K::Shape{pc.n, pc.oh(), pc.ow(), pc.c});
    check_close(y, y_ref);
    be->pool2d_backward(dy, x, pc.g, workspace, dx);
    check_close(dx, dx_ref);
  }
}

TEST_CASE("cpu backend: max pooling backward needs the forward workspace") {
  auto be = K::make_cpu_backend(1);
  K::Pool2DGeometry g;
  auto x = random_tensor({1, 4, 4, 2}, 1), dy = random_tensor({1, 2, 2, 2}, 2);
  K::Tensor dx;
  std::string msg = error_of([&] { be->pool2d_backward(dy, x, g, K::Tensor(), dx); });
  CHECK(contains(msg, "workspace"));
  auto bad_dy = random_tensor({1, 3, 3, 2}, 3);
  K::Tensor y, ws;
  be->pool2d_forward(x, g, y, ws);
  msg = error_of([&] { be->pool2d_backward(bad_dy, x, g, ws, dx); });
  CHECK(contains(msg, "(1, 3, 3, 2)"));
  CHECK(contains(msg, "(1, 2, 2, 2)"));
}

// ============================================================================ elementwise

TEST_CASE("cpu backend: activations forward and backward, including in place") {
  auto be = K::make_cpu_backend(2);
  const std::int64_t C = 6;
  auto x = random_tensor({5, 3, C}, 40, -3.f, 3.f);
  auto dy = random_tensor({5, 3, C}, 41);
  for (auto act : {K::ActivationKind::linear, K::ActivationKind::relu, K::ActivationKind::sigmoid,
                   K::ActivationKind::tanh, K::ActivationKind::softmax}) {
    CAPTURE(K::activation_name(act));
    K::Tensor y, dx;
    be->activation_forward(act, x, y);
    Vec y_ref = x.to_vector();
    ref_activation(y_ref, act, C);
    check_close(y, y_ref);
    be->activation_backward(act, y, dy, dx);
    Vec dx_ref = ref_activation_backward(act, y.to_vector(), dy.to_vector(), C);
    check_close(dx, dx_ref);
    // dx aliasing dy, y aliasing x
    K::Tensor g = dy.clone();
    be->activation_backward(act, y, g, g);
    check_close(g, dx_ref);
    K::Tensor xi = x.clone();
    be->activation_forward(act, xi, xi);
    check_close(xi, y_ref);
  }
}

TEST_CASE("cpu backend: add, add_inplace, multiply, scale, copy") {
  auto be = K::make_cpu_backend(2);
  K::Shape s{4, 33};
  auto a = random_tensor(s, 50), b = random_tensor(s, 51), c = random_tensor(s, 52);
  Vec av = a.to_vector(), bv = b.to_vector(), cv = c.to_vector();
  Vec sum3(av.size()), sum2(av.size()), prod(av.size()), scaled(av.size());
  for (std::size_t i = 0; i < av.size(); ++i) {
    sum3[i] = av[i] + bv[i] + cv[i];
    sum2[i] = av[i] + bv[i];
    prod[i] = av[i] * bv[i];
    scaled[i] = av[i] * -2.5f;
  }
  K::Tensor y;
  be->add({a, b, c}, y);
  check_close(y, sum3);
  K::Tensor y1;
  be->add({a}, y1);
  check_close(y1, av);
  K::Tensor acc = a.clone();
  be->add_inplace(acc, b);
  check_close(acc, sum2);
  K::Tensor p;
  be->multiply(a, b, p);
  check_close(p, prod);
  K::Tensor sc = a.clone();
  be->scale(sc, -2.5f);
  check_close(sc, scaled);
  K::Tensor dst = K::Tensor::zeros({132});
  be->copy(a, dst);
  check_close(dst, av);
  std::string msg = error_of([&] { be->add_inplace(acc, random_tensor({4, 32}, 1)); });
  CHECK(contains(msg, "(4, 32)"));
  CHECK(contains(msg, "(4, 33)"));
  msg = error_of([&] {
    K::Tensor small = K::Tensor::zeros({10});
    be->copy(a, small);
  });
  CHECK(contains(msg, "(10,)"));
}

TEST_CASE("cpu backend: concat and split on every axis") {
  auto be = K::make_cpu_backend(2);
  for (int axis : {0, 1, 2, -1}) {
    CAPTURE(axis);
    int a = axis < 0 ? axis + 3 : axis;
    K::Shape s1{2, 3, 4}, s2{2, 3, 4};
    s2[a] = 5;
    auto x1 = random_tensor(s1, 60), x2 = random_tensor(s2, 61);
    K::Tensor y;
    be->concat({x1, x2}, axis, y);
    K::Shape ys = s1;
    ys[a] += 5;
    REQUIRE(y.shape() == ys);
    Vec v1 = x1.to_vector(), v2 = x2.to_vector(), ref(y.numel());
    for (std::int64_t i = 0; i < ys[0]; ++i)
      for (std::int64_t j = 0; j < ys[1]; ++j)
        for (std::int64_t k = 0; k < ys[2]; ++k) {
          std::int64_t idx[3] = {i, j, k};
          bool first = idx[a] < s1[a];
          if (!first) idx[a] -= s1[a];
          const K::Shape& s = first ? s1 : s2;
          ref[(i * ys[1] + j) * ys[2] + k] = (first ? v1 : v2)[(idx[0] * s[1] + idx[1]) * s[2] + idx[2]];
        }
    check_close(y, ref);
    std::vector<K::Tensor> parts = {K::Tensor::zeros(s1), K::Tensor::zeros(s2)};
    be->split(y, axis, parts);
    CHECK(bit_equal(parts[0], x1));
    CHECK(bit_equal(parts[1], x2));
  }
  K::Tensor y;
  std::string msg = error_of([&] { be->concat({random_tensor({2, 3}, 1), random_tensor({3, 3}, 2)}, 1, y); });
  CHECK(contains(msg, "(3, 3)"));
}

TEST_CASE("cpu backend: dropout is inverted, seeded and deterministic") {
  auto be = K::make_cpu_backend(2);
  auto x = random_tensor({100, 200}, 70);
  const float rate = 0.3f;
  K::Tensor y, mask, y2, mask2, y3, mask3;
  be->dropout_forward(x, rate, 1234, y, mask);
  be->dropout_forward(x, rate, 1234, y2, mask2);
  be->dropout_forward(x, rate, 999, y3, mask3);
  CHECK(bit_equal(mask, mask2));
  CHECK(!bit_equal(mask, mask3));
  Vec m = mask.to_vector(), yv = y.to_vector(), xv = x.to_vector();
  std::size_t kept = 0;
  bool values_ok = true;
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (m[i] != 0.f) {
      ++kept;
      values_ok &= std::fabs(m[i] - 1.f / (1.f - rate)) < 1e-6f;
    }
    values_ok &= yv[i] == xv[i] * m[i];
  }
  CHECK(values_ok);
  double frac = double(kept) / m.size();
  CHECK(frac > 0.68);
  CHECK(frac < 0.72);
  auto be1 = K::make_cpu_backend(1);
  K::Tensor y4, mask4;
  be1->dropout_forward(x, rate, 1234, y4, mask4);
  CHECK(bit_equal(mask, mask4));
  CHECK(!error_of([&] { be->dropout_forward(x, 1.f, 1, y, mask); }).empty());
}

// ============================================================================ batch normalization

TEST_CASE("cpu backend: batchnorm fused path against reference, decomposed path against fused") {
  auto be = K::make_cpu_backend(2);
  const std::int64_t M = 2 * 5 * 5, C = 16;
  const float eps = 1e-3f;
  auto x = random_tensor({2, 5, 5, C}, 80, -2.f, 3.f);
  auto gamma = random_tensor({C}, 81, 0.5f, 1.5f), beta = random_tensor({C}, 82);
  auto dy = random_tensor({2, 5, 5, C}, 83);
  Vec xv = x.to_vector(), gv = gamma.to_vector(), bv = beta.to_vector(), dyv = dy.to_vector();

  std::vector<double> mean(C, 0), var(C, 0), sdy(C, 0), sdyx(C, 0);
  for (std::int64_t i = 0; i < M * C; ++i) mean[i % C] += xv[i] / double(M);
  for (std::int64_t i = 0; i < M * C; ++i) var[i % C] += std::pow(xv[i] - mean[i % C], 2) / double(M);
  for (std::int64_t i = 0; i < M * C; ++i) {
    sdy[i % C] += dyv[i];
    sdyx[i % C] += dyv[i] * (xv[i] - mean[i % C]);
  }
  Vec y_ref(xv.size()), dx_ref(xv.size()), dg_ref(C), db_ref(C), mean_ref(C), var_ref(C);
  for (std::int64_t i = 0; i < M * C; ++i) {
    std::int64_t c = i % C;
    double inv = 1 / std::sqrt(var[c] + eps);
    y_ref[i] = float(gv[c] * (xv[i] - mean[c]) * inv + bv[c]);
    dx_ref[i] = float(gv[c] * inv * (dyv[i] - sdy[c] / M - (xv[i] - mean[c]) * inv * inv * sdyx[c] / M));
  }
  for (std::int64_t c = 0; c < C; ++c) {
    dg_ref[c] = float(sdyx[c] / std::sqrt(var[c] + eps));
    db_ref[c] = float(sdy[c]);
    mean_ref[c] = float(mean[c]);
    var_ref[c] = float(var[c]);
  }

  K::Tensor y, bmean, bvar;
  be->batchnorm_forward_training(x, gamma, beta, eps, y, bmean, bvar);
  check_close(bmean, mean_ref);
  check_close(bvar, var_ref);
  check_close(y, y_ref);
  K::Tensor dx, dgamma = K::Tensor::zeros({C}), dbeta = K::Tensor::zeros({C});
  be->batchnorm_backward(dy, x, gamma, bmean, bvar, eps, dx, dgamma, dbeta);
  check_close(dx, dx_ref);
  check_close(dgamma, dg_ref);
  check_close(dbeta, db_ref);

  // Decomposed (synchronized BN's path on one replica): moments -> inference-style
  // normalisation; backward reduce -> apply.
  K::Tensor dmean, dvar;
  be->moments(x, dmean, dvar);
  CHECK(bit_equal(dmean, bmean));
  CHECK(bit_equal(dvar, bvar));
  K::Tensor y_dec;
  be->batchnorm_forward_inference(x, gamma, beta, dmean, dvar, eps, y_dec);
  CHECK(bit_equal(y_dec, y));
  K::Tensor sums, dg_dec = K::Tensor::zeros({C}), db_dec = K::Tensor::zeros({C}), dx_dec;
  be->batchnorm_backward_reduce(dy, x, bmean, bvar, eps, sums, dg_dec, db_dec);
  REQUIRE(sums.numel() == K::batchnorm_grad_sums_size(C));
  CHECK(sums.to_vector()[2 * C] == float(M));
  CHECK(bit_equal(db_dec, dbeta));
  check_close(dg_dec, dgamma.to_vector(), 1e-6);
  be->batchnorm_backward_apply(dy, x, gamma, bmean, bvar, eps, sums, dx_dec);
  check_close(dx_dec, dx.to_vector());  // the fused op keeps its sums in double

  // Without gamma/beta (scale=False, center=False) the defaults are 1 and 0.
  K::Tensor y_plain, m2, v2, dx_plain, no_dg, no_db;
  be->batchnorm_forward_training(x, K::Tensor(), K::Tensor(), eps, y_plain, m2, v2);
  Vec plain_ref(xv.size());
  for (std::int64_t i = 0; i < M * C; ++i) plain_ref[i] = float((xv[i] - mean[i % C]) / std::sqrt(var[i % C] + eps));
  check_close(y_plain, plain_ref);
  be->batchnorm_backward(dy, x, K::Tensor(), m2, v2, eps, dx_plain, no_dg, no_db);
  CHECK(!no_dg.defined());
  K::Tensor dx_plain_dec;
  be->batchnorm_backward_apply(dy, x, K::Tensor(), m2, v2, eps, sums, dx_plain_dec);
  check_close(dx_plain, dx_plain_dec.to_vector());

  std::string msg = error_of([&] {
    K::Tensor out;
    be->batchnorm_forward_inference(x, random_tensor({C + 1}, 1), beta, bmean, bvar, eps, out);
  });
  CHECK(contains(msg, "(17,)"));
  CHECK(contains(msg, "16"));
}

// ============================================================================ moments

namespace {

// The layer code these ops replaced (layers/batch_normalization_sync.cpp and the unsynchronized
// moving-statistics average of batch_normalization.cpp before issue 11), kept as the reference
// the backend ops must reproduce bit for bit.
void old_synchronized_moments(const std::vector<std::int64_t>& counts, const std::vector<Vec>& means,
                              const std::vector<Vec>& vars, Vec& mean, Vec& var) {
  const std::size_t C = means[0].size();
  double total = 0.0;
  for (auto n : counts) total += static_cast<float>(n);
  mean.assign(C, 0.f);
  var.assign(C, 0.f);
  for (std::size_t c = 0; c < C; ++c) {
    double mu = 0.0;
    for (std::size_t r = 0; r < counts.size(); ++r)
      mu += static_cast<float>(counts[r]) * static_cast<double>(means[r][c]);
    mu /= total;
    double m2 = 0.0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      if (counts[r] == 0) continue;
      double d = static_cast<double>(means[r][c]) - mu;
      m2 += static_cast<float>(counts[r]) * (static_cast<double>(vars[r][c]) + d * d);
    }
    mean[c] = static_cast<float>(mu);
    var[c] = static_cast<float>(m2 / total);
  }
}

// Each replica scaled its moments by its count (Backend::scale) and the shared-memory
// all-reduce summed them from 0 in replica order; then one float division by the summed count.
void old_average_moments(K::Backend& be, const std::vector<std::int64_t>& counts, const std::vector<K::Tensor>& means,
                         const std::vector<K::Tensor>& vars, Vec& mean, Vec& var) {
  const std::size_t C = static_cast<std::size_t>(means[0].numel());
  Vec sum_mean(C, 0.f), sum_var(C, 0.f);
  float total = 0.f;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    K::Tensor wm = means[r].clone(), wv = vars[r].clone();
    be.scale(wm, static_cast<float>(counts[r]));
    be.scale(wv, static_cast<float>(counts[r]));
    for (std::size_t c = 0; c < C; ++c) {
      sum_mean[c] += wm.to_vector()[c];
      sum_var[c] += wv.to_vector()[c];
    }
    total += static_cast<float>(counts[r]);
  }
  mean.resize(C);
  var.resize(C);
  for (std::size_t c = 0; c < C; ++c) {
    mean[c] = sum_mean[c] / total;
    var[c] = sum_var[c] / total;
  }
}

}  // namespace

TEST_CASE("cpu backend: moments, and synchronized moments over 2 simulated replicas") {
  auto be = K::make_cpu_backend(2);
  const std::int64_t C = 5, rows0 = 37, rows1 = 23, M = rows0 + rows1;
  auto x = random_tensor({M, C}, 120, 3.f, 5.f);  // means far from 0: the case Σx² − (Σx)² gets wrong
  Vec xv = x.to_vector();

  // Plain moments: the fused training op's statistics bit for bit, and the two-pass reference.
  K::Tensor mean, var;
  be->moments(x, mean, var);
  K::Tensor y, fused_mean, fused_var;
  be->batchnorm_forward_training(x, K::Tensor(), K::Tensor(), 1e-3f, y, fused_mean, fused_var);
  CHECK(bit_equal(mean, fused_mean));
  CHECK(bit_equal(var, fused_var));
  Vec ref_mean(C), ref_var(C);
  {
    std::vector<double> m(C, 0.0), v(C, 0.0);
    for (std::int64_t i = 0; i < M * C; ++i) m[i % C] += xv[i] / double(M);
    for (std::int64_t i = 0; i < M * C; ++i) v[i % C] += std::pow(xv[i] - m[i % C], 2) / double(M);
    for (std::int64_t c = 0; c < C; ++c) {
      ref_mean[c] = float(m[c]);
      ref_var[c] = float(v[c]);
    }
  }
  check_close(mean, ref_mean, 1e-6);
  check_close(var, ref_var, 1e-6);

  // Each replica packs its moments into its own slot; the all-reduce is the elementwise sum.
  const std::vector<std::int64_t> counts{rows0, rows1};
  std::vector<K::Tensor> m(2), v(2), packed(2);
  be->moments(x.slice(0, rows0), m[0], v[0]);
  be->moments(x.slice(rows0, M), m[1], v[1]);
  for (int r = 0; r < 2; ++r) be->pack_moments(m[r], v[r], counts[r], r, 2, packed[r]);
  REQUIRE(packed[0].numel() == K::moments_packed_size(C, 2));
  K::Tensor reduced = packed[0].clone();
  be->add_inplace(reduced, packed[1]);

  // Synchronized: the moments of the concatenated batch, within float rounding ...
  K::Tensor sync_mean, sync_var;
  be->synchronized_moments(reduced, 2, sync_mean, sync_var);
  check_close(sync_mean, mean.to_vector(), 1e-6);
  check_close(sync_var, var.to_vector(), 1e-6);
  // ... and bit for bit what the layer computed before these ops existed.
  Vec old_mean, old_var;
  old_synchronized_moments(counts, {m[0].to_vector(), m[1].to_vector()}, {v[0].to_vector(), v[1].to_vector()}, old_mean,
                           old_var);
  CHECK(bit_equal(sync_mean, K::Tensor::from_vector({C}, old_mean)));
  CHECK(bit_equal(sync_var, K::Tensor::from_vector({C}, old_var)));

  // Average (unsynchronized BN's moving statistics): the old layer path bit for bit.
  K::Tensor avg_mean, avg_var;
  be->average_moments(reduced, 2, avg_mean, avg_var);
  old_average_moments(*be, counts, m, v, old_mean, old_var);
  CHECK(bit_equal(avg_mean, K::Tensor::from_vector({C}, old_mean)));
  CHECK(bit_equal(avg_var, K::Tensor::from_vector({C}, old_var)));
  check_close(avg_mean, mean.to_vector(), 1e-6);  // the means' weighted average is the batch mean

  // A replica without rows contributes an all-zero packed tensor: the union is the other one's moments.
  K::Tensor alone = packed[0].clone();
  be->add_inplace(alone, K::Tensor::zeros({K::moments_packed_size(C, 2)}));
  K::Tensor alone_mean, alone_var;
  be->synchronized_moments(alone, 2, alone_mean, alone_var);
  CHECK(bit_equal(alone_mean, m[0]));
  CHECK(bit_equal(alone_var, v[0]));
  // No rows anywhere: zeros, not NaN.
  be->synchronized_moments(K::Tensor::zeros({K::moments_packed_size(C, 2)}), 2, alone_mean, alone_var);
  CHECK(alone_mean.to_vector() == Vec(C, 0.f));
  CHECK(alone_var.to_vector() == Vec(C, 0.f));

  // Misuse is a typed error naming the op.
  K::Tensor a, b;
  CHECK_THROWS_AS(be->synchronized_moments(K::Tensor::zeros({8}), 2, a, b), K::ShapeError);
  CHECK_THROWS_AS(be->pack_moments(m[0], v[0], rows0, 2, 2, a), K::ValueError);
  CHECK_THROWS_AS(be->moments(K::Tensor::zeros({0, C}), a, b), K::ShapeError);
}

TEST_CASE("cpu backend: synchronized batchnorm backward over 2 simulated replicas equals the fused op") {
  auto be = K::make_cpu_backend(2);
  const std::int64_t C = 6, rows0 = 20, rows1 = 13, M = rows0 + rows1;
  const float eps = 1e-3f;
  auto x = random_tensor({M, C}, 130, -2.f, 3.f), dy = random_tensor({M, C}, 131);
  auto gamma = random_tensor({C}, 132, 0.5f, 1.5f);
  K::Tensor mean, var, dx, dgamma = K::Tensor::zeros({C}), dbeta = K::Tensor::zeros({C});
  be->moments(x, mean, var);
  be->batchnorm_backward(dy, x, gamma, mean, var, eps, dx, dgamma, dbeta);

  const std::int64_t bounds[] = {0, rows0, M};
  std::vector<K::Tensor> sums(2), dg(2), db(2);
  for (int r = 0; r < 2; ++r) {
    dg[r] = K::Tensor::zeros({C});
    db[r] = K::Tensor::zeros({C});
    be->batchnorm_backward_reduce(dy.slice(bounds[r], bounds[r + 1]), x.slice(bounds[r], bounds[r + 1]), mean, var, eps,
                                  sums[r], dg[r], db[r]);
  }
  K::Tensor total = sums[0].clone();
  be->add_inplace(total, sums[1]);  // the all-reduce
  CHECK(total.to_vector()[2 * C] == float(M));
  be->add_inplace(dg[0], dg[1]);  // the gradient all-reduce of the parameters
  be->add_inplace(db[0], db[1]);
  check_close(dg[0], dgamma.to_vector(), 1e-5);
  check_close(db[0], dbeta.to_vector(), 1e-5);
  Vec dx_sync;
  for (int r = 0; r < 2; ++r) {
    K::Tensor part;
    be->batchnorm_backward_apply(dy.slice(bounds[r], bounds[r + 1]), x.slice(bounds[r], bounds[r + 1]), gamma, mean,
                                 var, eps, total, part);
    Vec pv = part.to_vector();
    dx_sync.insert(dx_sync.end(), pv.begin(), pv.end());
  }
  check_close(K::Tensor::from_vector({M, C}, dx_sync), dx.to_vector(), 1e-5);
  // The row count travels in the sums: all-zero sums (no rows anywhere) cannot be applied.
  K::Tensor out;
  CHECK_THROWS_AS(be->batchnorm_backward_apply(dy, x, gamma, mean, var, eps,
                                               K::Tensor::zeros({K::batchnorm_grad_sums_size(C)}), out),
                  K::ValueError);
}

TEST_CASE("cpu backend: moving_average_update is moving·m + value·(1 − m) in place") {
  auto be = K::make_cpu_backend(1);
  auto moving = random_tensor({7}, 140), value = random_tensor({7}, 141);
  Vec mv = moving.to_vector(), vv = value.to_vector(), expected(7);
  const float m = 0.99f;
  for (std::size_t i = 0; i < 7; ++i) expected[i] = mv[i] * m + vv[i] * (1.f - m);
  be->moving_average_update(moving, value, m);
  CHECK(bit_equal(moving, K::Tensor::from_vector({7}, expected)));
  CHECK_THROWS_AS(be->moving_average_update(moving, random_tensor({6}, 1), m), K::ShapeError);
}

// ============================================================================ losses

TEST_CASE("cpu backend: sparse categorical crossentropy and its gradient") {
  auto be = K::make_cpu_backend(2);
  const std::int64_t N = 6, C = 5;
  const float scale = 0.25f;
  std::vector<std::int32_t> labels32 = {0, 4, 2, 2, 1, 3};
  for (bool from_logits : {true, false}) {
    CAPTURE(from_logits);
    auto pred = from_logits ? random_tensor({N, C}, 90, -3.f, 3.f) : random_tensor({N, C}, 90, 0.05f, 1.f);
    Vec pv = pred.to_vector();
    auto row_loss = [&](const Vec& p, std::int64_t n) {
      Vec t(C, 0.f);
      t[labels32[n]] = 1.f;
      return ref_crossentropy_row(p.data() + n * C, t.data(), C, from_logits);
    };
    Vec loss_ref(N);
    for (std::int64_t n = 0; n < N; ++n) loss_ref[n] = float(row_loss(pv, n));
    // Gradient of Σ_n loss_n (each row only depends on its own preds) times the scale.
    Vec grad_ref = finite_differences(pv, [&](const Vec& p) {
      double s = 0;
      for (std::int64_t n = 0; n < N; ++n) s += row_loss(p, n);
      return s * scale;
    });
    for (auto label_tensor :
         {K::Tensor::from_vector({N}, labels32),
          K::Tensor::from_vector({N, 1}, std::vector<std::int64_t>(labels32.begin(), labels32.end())),
          K::Tensor::from_vector({N}, std::vector<std::uint8_t>(labels32.begin(), labels32.end()))}) {
      K::Tensor loss, grad;
      grad = K::Tensor::zeros({N, C});
      be->sparse_categorical_crossentropy(pred, label_tensor, from_logits, loss, grad, scale);
      check_close(loss, loss_ref);
      check_close(grad, grad_ref, 2e-4);
    }
    // Coarse finite differences on the backend's own float loss.
    K::Tensor loss, grad = K::Tensor::zeros({N, C});
    auto labels = K::Tensor::from_vector({N}, labels32);
    be->sparse_categorical_crossentropy(pred, labels, from_logits, loss, grad, 1.f);
    Vec own = finite_differences(
        pv,
        [&](const Vec& p) {
          K::Tensor l, no_grad;
          be->sparse_categorical_crossentropy(K::Tensor::from_vector({N, C}, p), labels, from_logits, l, no_grad, 1.f);
          double s = 0;
          for (float v : l.to_vector()) s += v;
          return s;
        },
        1e-2);
    CHECK(max_error(grad.to_vector(), own) < 1e-2);
  }
}

TEST_CASE("cpu backend: sparse labels are checked") {
  auto be = K::make_cpu_backend(1);
  auto pred = random_tensor({3, 10}, 1, 0.1f, 1.f);
  K::Tensor loss, grad;
  std::string msg = error_of([&] {
    be->sparse_categorical_crossentropy(pred, K::Tensor::from_vector({3}, std::vector<std::int32_t>{1, 12, 3}), false,
                                        loss, grad, 1.f);
  });
  CHECK(contains(msg, "label 12"));
  CHECK(contains(msg, "10 classes"));
  msg = error_of([&] {
    be->sparse_categorical_crossentropy(pred, K::Tensor::from_vector({3}, std::vector<std::int32_t>{1, -1, 3}), false,
                                        loss, grad, 1.f);
  });
  CHECK(contains(msg, "label -1"));
  msg = error_of([&] {
    be->sparse_categorical_crossentropy(pred, K::Tensor::from_vector({3}, Vec{1, 2, 3}), false, loss, grad, 1.f);
  });
  CHECK(contains(msg, "cast"));
  msg = error_of([&] {
    be->sparse_categorical_crossentropy(pred, K::Tensor::from_vector({4}, std::vector<std::int32_t>{1, 2, 3, 4}), false,
                                        loss, grad, 1.f);
  });
  CHECK(contains(msg, "(4,)"));
  CHECK(contains(msg, "(3, 10)"));
  msg = error_of([&] {
    be->sparse_categorical_accuracy_sum(pred, K::Tensor::from_vector({3}, std::vector<std::int64_t>{0, 10, 1}));
  });
  CHECK(contains(msg, "label 10"));
}

TEST_CASE("cpu backend: categorical crossentropy and its gradient") {
  auto be = K::make_cpu_backend(2);
  const std::int64_t N = 5, C = 4;
  const float scale = 0.5f;
  // Soft targets exercise the Σt ≠ 1 terms of the gradient.
  auto target = random_tensor({N, C}, 101, 0.f, 1.f);
  Vec tv = target.to_vector();
  for (bool from_logits : {true, false}) {
    CAPTURE(from_logits);
    auto pred = from_logits ? random_tensor({N, C}, 100, -3.f, 3.f) : random_tensor({N, C}, 100, 0.05f, 1.f);
    Vec pv = pred.to_vector(), loss_ref(N);
    for (std::int64_t n = 0; n < N; ++n)
      loss_ref[n] = float(ref_crossentropy_row(pv.data() + n * C, tv.data() + n * C, C, from_logits));
    Vec grad_ref = finite_differences(pv, [&](const Vec& p) {
      double s = 0;
      for (std::int64_t n = 0; n < N; ++n)
        s += ref_crossentropy_row(p.data() + n * C, tv.data() + n * C, C, from_logits);
      return s * scale;
    });
    K::Tensor loss, grad = K::Tensor::zeros({N, C});
    be->categorical_crossentropy(pred, target, from_logits, loss, grad, scale);
    check_close(loss, loss_ref);
    check_close(grad, grad_ref, 2e-4);
  }
  // Clipping: a probability of 0 for the true class gives -log(1e-7) like Keras, and no gradient
  // through the clipped entry.
  auto pred = K::Tensor::from_vector({1, 3}, Vec{0.f, 0.5f, 0.5f});
  auto onehot = K::Tensor::from_vector({1, 3}, Vec{1.f, 0.f, 0.f});
  K::Tensor loss, grad = K::Tensor::zeros({1, 3});
  be->categorical_crossentropy(pred, onehot, false, loss, grad, 1.f);
  CHECK(loss.to_vector()[0] == doctest::Approx(-std::log(1e-7)).epsilon(1e-5));
  check_close(grad, Vec{0.f, 0.f, 0.f});
  std::string msg =
      error_of([&] { be->categorical_crossentropy(pred, random_tensor({1, 4}, 1), false, loss, grad, 1.f); });
  CHECK(contains(msg, "(1, 4)"));
}

TEST_CASE("cpu backend: binary crossentropy and its gradient") {
  auto be = K::make_cpu_backend(2);
  const std::int64_t N = 4, D = 3;
  const float scale = 2.f;
  auto target = random_tensor({N, D}, 111, 0.f, 1.f);
  Vec tv = target.to_vector();
  for (bool from_logits : {true, false}) {
    CAPTURE(from_logits);
    auto pred = from_logits ? random_tensor({N, D}, 110, -4.f, 4.f) : random_tensor({N, D}, 110, 0.02f, 0.98f);
    Vec pv = pred.to_vector(), loss_ref(N, 0.f);
    for (std::int64_t i = 0; i < N * D; ++i) loss_ref[i / D] += float(ref_bce(pv[i], tv[i], from_logits) / D);
    Vec grad_ref = finite_differences(pv, [&](const Vec& p) {
      double s = 0;
      for (std::int64_t i = 0; i < N * D; ++i) s += ref_bce(p[i], tv[i], from_logits) / D;
      return s * scale;
    });
    K::Tensor loss, grad = K::Tensor::zeros({N, D});
    be->binary_crossentropy(pred, target, from_logits, loss, grad, scale);
    check_close(loss, loss_ref);
    check_close(grad, grad_ref, 2e-4);
  }
  // (N,) predictions against (N, 1) targets, as Keras squeezes them.
  auto p1 = random_tensor({N}, 112, 0.1f, 0.9f);
  auto t1 = K::Tensor::from_vector({N, 1}, Vec{0.f, 1.f, 1.f, 0.f});
  K::Tensor loss, no_grad;
  be->binary_crossentropy(p1, t1, false, loss, no_grad, 1.f);
  CHECK(!no_grad.defined());
  Vec l_ref(N);
  for (std::int64_t i = 0; i < N; ++i) l_ref[i] = float(ref_bce(p1.to_vector()[i], t1.to_vector()[i], false));
  check_close(loss, l_ref);
}

TEST_CASE("cpu backend: mean squared error and its gradient") {
  auto be = K::make_cpu_backend(2);
  const std::int64_t N = 3;
  auto pred = random_tensor({N, 2, 4}, 120), target = random_tensor({N, 2, 4}, 121);
  Vec pv = pred.to_vector(), tv = target.to_vector(), loss_ref(N, 0.f);
  for (std::size_t i = 0; i < pv.size(); ++i) loss_ref[i / 8] += (pv[i] - tv[i]) * (pv[i] - tv[i]) / 8.f;
  Vec grad_ref = finite_differences(pv, [&](const Vec& p) {
    double s = 0;
    for (std::size_t i = 0; i < p.size(); ++i) s += std::pow(double(p[i]) - tv[i], 2) / 8.0;
    return s * 0.1;
  });
  K::Tensor loss, grad = K::Tensor::zeros(pred.shape());
  be->mean_squared_error(pred, target, loss, grad, 0.1f);
  check_close(loss, loss_ref);
  check_close(grad, grad_ref);
  std::string msg = error_of([&] { be->mean_squared_error(pred, random_tensor({N, 8}, 1), loss, grad, 1.f); });
  CHECK(contains(msg, "(3, 8)"));
  CHECK(contains(msg, "(3, 2, 4)"));
}

// ============================================================================ metrics

TEST_CASE("cpu backend: metric sums") {
  auto be = K::make_cpu_backend(2);
  // Ties pick the first maximum, like numpy's argmax.
  auto pred = K::Tensor::from_vector({4, 3}, Vec{0.1f, 0.7f, 0.2f, 0.5f, 0.5f, 0.f, 0.3f, 0.3f, 0.4f, 1.f, 0.f, 0.f});
  auto labels = K::Tensor::from_vector({4, 1}, std::vector<std::int32_t>{1, 1, 2, 0});
  CHECK(be->sparse_categorical_accuracy_sum(pred, labels) == 3.0);
  auto onehot = K::Tensor::from_vector({4, 3}, Vec{0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0});
  CHECK(be->categorical_accuracy_sum(pred, onehot) == 3.0);

  auto bp = K::Tensor::from_vector({2, 2}, Vec{0.6f, 0.4f, 0.5f, 0.9f});
  auto bt = K::Tensor::from_vector({2, 2}, Vec{1.f, 1.f, 0.f, 1.f});
  CHECK(be->binary_accuracy_sum(bp, bt, 0.5f) == 3.0);  // elements: the caller divides by values per row

  auto a = random_tensor({50, 7}, 130), b = random_tensor({50, 7}, 131);
  Vec av = a.to_vector(), bv = b.to_vector();
  double mae = 0, total = 0;
  for (std::size_t i = 0; i < av.size(); ++i) {
    mae += std::fabs(av[i] - bv[i]);
    total += av[i];
  }
  CHECK(be->absolute_error_sum(a, b) == doctest::Approx(mae).epsilon(1e-6));
  CHECK(be->sum(a) == doctest::Approx(total).epsilon(1e-6));

  // Random rows against a naive argmax.
  auto rp = random_tensor({200, 10}, 132);
  Vec rv = rp.to_vector();
  std::vector<std::int64_t> lab(200);
  std::mt19937 gen(5);
  for (auto& l : lab) l = gen() % 10;
  double hits = 0;
  for (int n = 0; n < 200; ++n)
    hits += std::max_element(rv.begin() + n * 10, rv.begin() + n * 10 + 10) - (rv.begin() + n * 10) == lab[n];
  CHECK(be->sparse_categorical_accuracy_sum(rp, K::Tensor::from_vector({200}, lab)) == hits);
}

// ============================================================================ optimizers

TEST_CASE("cpu backend: optimizer updates follow the Keras formulas") {
  auto be = K::make_cpu_backend(2);
  const std::int64_t n = 1000;
  auto w0 = random_tensor({n}, 140), g = random_tensor({n}, 141), s1 = random_tensor({n}, 142),
       s2 = random_tensor({n}, 143, 0.f, 1.f);
  Vec wv = w0.to_vector(), gv = g.to_vector(), s1v = s1.to_vector(), s2v = s2.to_vector();

  SUBCASE("sgd") {
    for (float momentum : {0.f, 0.9f})
      for (bool nesterov : {false, true}) {
        K::Tensor w = w0.clone(), v = s1.clone(), none;
        be->sgd_update(w, g, momentum == 0.f ? none : v, 0.1f, momentum, nesterov);
        Vec w_ref(n), v_ref = s1v;
        for (std::int64_t i = 0; i < n; ++i) {
          if (momentum == 0.f) {
            w_ref[i] = wv[i] - 0.1f * gv[i];
          } else {
            v_ref[i] = momentum * s1v[i] - 0.1f * gv[i];
            w_ref[i] = wv[i] + (nesterov ? momentum * v_ref[i] - 0.1f * gv[i] : v_ref[i]);
          }
        }
        check_close(w, w_ref, 1e-6);
        check_close(v, v_ref, 1e-6);
      }
  }
  SUBCASE("adam") {
    K::Tensor w = w0.clone(), m = s1.clone(), v = s2.clone();
    const float lr = 1e-3f, b1 = 0.9f, b2 = 0.999f, eps = 1e-7f;
    const float lr_t = lr * std::sqrt(1 - b2) / (1 - b1);
    be->adam_update(w, g, m, v, lr_t, b1, b2, eps);
    Vec w_ref(n), m_ref(n), v_ref(n);
    for (std::int64_t i = 0; i < n; ++i) {
      m_ref[i] = b1 * s1v[i] + (1 - b1) * gv[i];
      v_ref[i] = b2 * s2v[i] + (1 - b2) * gv[i] * gv[i];
      w_ref[i] = wv[i] - lr_t * m_ref[i] / (std::sqrt(v_ref[i]) + eps);
    }
    check_close(m, m_ref, 1e-6);
    check_close(v, v_ref, 1e-6);
    check_close(w, w_ref, 1e-6);
  }
  SUBCASE("rmsprop") {
    K::Tensor w = w0.clone(), v = s2.clone();
    be->rmsprop_update(w, g, v, 1e-2f, 0.9f, 1e-7f);
    Vec w_ref(n), v_ref(n);
    for (std::int64_t i = 0; i < n; ++i) {
      v_ref[i] = 0.9f * s2v[i] + 0.1f * gv[i] * gv[i];
      w_ref[i] = wv[i] - 1e-2f * gv[i] / std::sqrt(v_ref[i] + 1e-7f);
    }
    check_close(v, v_ref, 1e-6);
    check_close(w, w_ref, 1e-5);
  }
  SUBCASE("slot shapes are checked") {
    K::Tensor w = w0.clone(), m = K::Tensor::zeros({n + 1}), v = s2.clone();
    std::string msg = error_of([&] { be->adam_update(w, g, m, v, 1e-3f, 0.9f, 0.999f, 1e-7f); });
    CHECK(contains(msg, "(1001,)"));
    CHECK(contains(msg, "(1000,)"));
  }
}

// ============================================================================ bad input, caching, determinism

TEST_CASE("cpu backend: dense algebra rejects mismatched shapes") {
  auto be = K::make_cpu_backend(1);
  auto x = random_tensor({4, 8}, 1), w = random_tensor({7, 3}, 2);
  K::Tensor y;
  std::string msg = error_of([&] { be->dense_forward(x, w, K::Tensor(), K::ActivationKind::relu, y); });
  CHECK(contains(msg, "(4, 8)"));
  CHECK(contains(msg, "(7, 3)"));
  msg = error_of([&] { be->matmul(x, false, w, false, y, false); });
  CHECK(contains(msg, "(4, 8)"));
  CHECK(contains(msg, "(7, 3)"));
  auto w_ok = random_tensor({8, 3}, 3);
  msg = error_of([&] { be->dense_forward(x, w_ok, random_tensor({4}, 4), K::ActivationKind::linear, y); });
  CHECK(contains(msg, "(4,)"));
  K::Tensor bad_y = K::Tensor::zeros({4, 4});
  msg = error_of([&] { be->dense_forward(x, w_ok, K::Tensor(), K::ActivationKind::linear, bad_y); });
  CHECK(contains(msg, "(4, 3)"));
  msg = error_of([&] {
    K::Tensor ints = K::Tensor::zeros({4, 8}, K::DType::int32), out;
    be->dense_forward(ints, w_ok, K::Tensor(), K::ActivationKind::linear, out);
  });
  CHECK(contains(msg, "int32"));
}

TEST_CASE("cpu backend: steady state creates no primitives") {
  auto be = K::make_cpu_backend(2);
  auto* cpu = dynamic_cast<K::cpu::CpuBackend*>(be.get());
  REQUIRE(cpu != nullptr);
  auto x = random_tensor({4, 6, 6, 3}, 1), w = random_tensor({3, 3, 3, 4}, 2), b = random_tensor({4}, 3);
  K::Conv2DGeometry g{3, 3, 1, 1, 1, 1, 1, 1};
  K::Pool2DGeometry pg;
  auto step = [&] {
    K::Tensor y, p, ws, dp, dy, dx = K::Tensor::zeros(x.shape()), dw, db = K::Tensor::zeros({4});
    cpu->conv2d_forward(x, w, b, g, K::ActivationKind::relu, y);
    cpu->pool2d_forward(y, pg, p, ws);
    cpu->pool2d_backward(p, y, pg, ws, dp);
    cpu->activation_backward(K::ActivationKind::relu, y, dp, dp);
    cpu->conv2d_backward_data(dp, w, g, dx);
    cpu->conv2d_backward_weights(x, dp, g, dw, db, false);
  };
  step();
  const std::size_t cached = cpu->cached_primitives();
  CHECK(cached > 0);
  step();
  step();
  CHECK(cpu->cached_primitives() == cached);
}

TEST_CASE("cpu backend: results are bit-identical run to run") {
  auto x = random_tensor({8, 12, 12, 16}, 1), w = random_tensor({3, 3, 16, 32}, 2);
  auto dy = random_tensor({8, 12, 12, 32}, 3);
  K::Conv2DGeometry g{3, 3, 1, 1, 1, 1, 1, 1};
  auto run = [&](int threads) {
    auto be = K::make_cpu_backend(threads);
    std::vector<K::Tensor> out(8);
    be->conv2d_forward(x, w, K::Tensor(), g, K::ActivationKind::linear, out[0]);
    out[1] = K::Tensor::zeros(w.shape());
    K::Tensor db = K::Tensor::zeros({32});
    be->conv2d_backward_weights(x, dy, g, out[1], db, false);
    out[2] = db;
    K::Tensor mean, var;
    be->batchnorm_forward_training(dy, K::Tensor(), K::Tensor(), 1e-3f, out[3], mean, var);
    out[4] = var;
    be->moments(x, out[5], out[6]);
    be->sum_to_last_axis(dy, out[7], false);
    return out;
  };
  auto a = run(2), b = run(2);
  for (std::size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    CHECK(bit_equal(a[i], b[i]));
  }
  // The hand-written reductions use fixed chunks, so they match across thread counts too.
  auto c = run(1);
  CHECK(bit_equal(a[5], c[5]));
  CHECK(bit_equal(a[6], c[6]));
  CHECK(bit_equal(a[7], c[7]));
}

TEST_CASE("cpu backend: replicas on separate threads each use their own backend") {
  auto x = random_tensor({4, 10, 10, 8}, 1), w = random_tensor({3, 3, 8, 16}, 2);
  K::Conv2DGeometry g{3, 3, 2, 2, 0, 0, 1, 1};
  auto forward = [&](K::Tensor& y) {
    auto be = K::make_cpu_backend(1);
    K::Tensor loss, grad;
    be->conv2d_forward(x, w, K::Tensor(), g, K::ActivationKind::relu, y);
    be->mean_squared_error(y, K::Tensor::zeros(y.shape()), loss, grad, 1.f);
  };
  K::Tensor serial, a, b;
  forward(serial);
  std::thread t1([&] { forward(a); }), t2([&] { forward(b); });
  t1.join();
  t2.join();
  CHECK(bit_equal(serial, a));
  CHECK(bit_equal(serial, b));
}

TEST_CASE("adam_update: the vectorised builds give the scalar loop's bits (any block split, any tail)") {
  auto be = K::make_cpu_backend(2);
  const std::int64_t n = 3 * (1 << 14) + 37;  // several parallel blocks and a ragged vector tail
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.f, 1.f);
  std::vector<float> w0(n), g(n), m0(n), v0(n);
  for (std::int64_t i = 0; i < n; ++i) {
    w0[i] = dist(rng);
    g[i] = dist(rng) * 0.1f;
    m0[i] = dist(rng) * 0.01f;
    v0[i] = std::abs(dist(rng)) * 1e-4f;
  }
  K::Tensor w = K::Tensor::from_vector({n}, w0), gt = K::Tensor::from_vector({n}, g);
  K::Tensor m = K::Tensor::from_vector({n}, m0), v = K::Tensor::from_vector({n}, v0);
  const float lr_t = 1e-3f, b1 = 0.9f, b2 = 0.999f, eps = 1e-7f;
  for (int step = 0; step < 3; ++step) be->adam_update(w, gt, m, v, lr_t, b1, b2, eps);
  for (int step = 0; step < 3; ++step)
    for (std::int64_t i = 0; i < n; ++i) {
      float mi = m0[i] + (g[i] - m0[i]) * (1.f - b1);
      float vi = v0[i] + (g[i] * g[i] - v0[i]) * (1.f - b2);
      m0[i] = mi;
      v0[i] = vi;
      w0[i] -= (mi * lr_t) / (std::sqrt(vi) + eps);
    }
  CHECK(w.to_vector() == w0);
  CHECK(m.to_vector() == m0);
  CHECK(v.to_vector() == v0);
}

TEST_CASE("cpu backend: layer_norm_forward/backward against the formulas, optional gamma/beta, bad shapes") {
  auto be = K::make_cpu_backend(2);
  const std::int64_t M = 5, C = 7;
  K::Tensor x = K::Tensor::from_vector({M, C}, random_vec(M * C, 300, -2.f, 3.f));
  K::Tensor dy = K::Tensor::from_vector({M, C}, random_vec(M * C, 301, -1.f, 1.f));
  K::Tensor gamma = K::Tensor::from_vector({C}, random_vec(C, 302, 0.5f, 1.5f));
  K::Tensor beta = K::Tensor::from_vector({C}, random_vec(C, 303, -0.5f, 0.5f));
  K::Tensor y, mean, rstd;
  be->layer_norm_forward(x, gamma, beta, 1e-3f, y, mean, rstd);
  K::Tensor dx, dgamma({C}), dbeta({C});
  be->layer_norm_backward(dy, x, gamma, mean, rstd, dx, dgamma, dbeta);
  const float *px = x.data<float>(), *pdy = dy.data<float>(), *pg = gamma.data<float>(), *pb = beta.data<float>();
  std::vector<double> rg(C, 0.0), rb(C, 0.0);
  for (std::int64_t r = 0; r < M; ++r) {
    double mu = 0, var = 0;
    for (std::int64_t c = 0; c < C; ++c) mu += px[r * C + c] / double(C);
    for (std::int64_t c = 0; c < C; ++c) var += (px[r * C + c] - mu) * (px[r * C + c] - mu) / double(C);
    const double inv = 1.0 / std::sqrt(var + 1e-3);
    CHECK(mean.data<float>()[r] == doctest::Approx(mu).epsilon(1e-5));
    CHECK(rstd.data<float>()[r] == doctest::Approx(inv).epsilon(1e-5));
    double sg = 0, sgx = 0;
    for (std::int64_t c = 0; c < C; ++c) {
      const double xh = (px[r * C + c] - mu) * inv, g = pdy[r * C + c] * double(pg[c]);
      CHECK(y.data<float>()[r * C + c] == doctest::Approx(xh * pg[c] + pb[c]).epsilon(1e-5));
      sg += g;
      sgx += g * xh;
      rg[c] += pdy[r * C + c] * xh;
      rb[c] += pdy[r * C + c];
    }
    for (std::int64_t c = 0; c < C; ++c) {
      const double xh = (px[r * C + c] - mu) * inv, g = pdy[r * C + c] * double(pg[c]);
      CHECK(dx.data<float>()[r * C + c] == doctest::Approx(inv * (g - sg / C - xh * sgx / C)).epsilon(1e-4));
    }
  }
  for (std::int64_t c = 0; c < C; ++c) {
    CHECK(dgamma.data<float>()[c] == doctest::Approx(rg[c]).epsilon(1e-5));
    CHECK(dbeta.data<float>()[c] == doctest::Approx(rb[c]).epsilon(1e-5));
  }
  // No gamma/beta: plain x̂; undefined dgamma/dbeta are skipped.
  K::Tensor y0, m0, s0, dx0, ng, nb;
  be->layer_norm_forward(x, K::Tensor(), K::Tensor(), 1e-3f, y0, m0, s0);
  CHECK(y0.data<float>()[3] == doctest::Approx((px[3] - m0.data<float>()[0]) * s0.data<float>()[0]));
  be->layer_norm_backward(dy, x, K::Tensor(), m0, s0, dx0, ng, nb);
  CHECK(!ng.defined());
  CHECK(!nb.defined());
  // Row statistics of the wrong length are refused.
  K::Tensor bad_mean({M + 1}), dx1, g1, b1;
  CHECK_THROWS_AS(be->layer_norm_backward(dy, x, gamma, bad_mean, rstd, dx1, g1, b1), K::ShapeError);
}

TEST_CASE("cpu backend: softmax_axis_forward/backward over any axis; the last axis equals the activation") {
  auto be = K::make_cpu_backend(2);
  K::Tensor x = K::Tensor::from_vector({2, 3, 5}, random_vec(30, 310, -3.f, 3.f));
  K::Tensor dy = K::Tensor::from_vector({2, 3, 5}, random_vec(30, 311));
  const auto px = x.to_vector(), pdy = dy.to_vector();
  for (int axis : {0, 1, 2, -1}) {
    CAPTURE(axis);
    K::Tensor y, dx;
    be->softmax_axis_forward(x, axis, y);
    be->softmax_axis_backward(y, dy, axis, dx);
    const int a = axis < 0 ? axis + 3 : axis;
    const std::int64_t dims[3] = {2, 3, 5}, strides[3] = {15, 5, 1};
    const auto py = y.to_vector(), pdx = dx.to_vector();
    for (std::int64_t i = 0; i < 30; ++i) {
      // The fibre through element i along the axis.
      const std::int64_t base = i - ((i / strides[a]) % dims[a]) * strides[a];
      double total = 0, dot = 0;
      for (std::int64_t k = 0; k < dims[a]; ++k) total += std::exp(double(px[std::size_t(base + k * strides[a])]));
      const double yi = std::exp(double(px[std::size_t(i)])) / total;
      for (std::int64_t k = 0; k < dims[a]; ++k) {
        const auto j = std::size_t(base + k * strides[a]);
        dot += double(pdy[j]) * std::exp(double(px[j])) / total;
      }
      CHECK(py[std::size_t(i)] == doctest::Approx(yi).epsilon(1e-5));
      CHECK(pdx[std::size_t(i)] == doctest::Approx(yi * (pdy[std::size_t(i)] - dot)).epsilon(1e-4).scale(1e-6));
    }
  }
  K::Tensor y_last, y_act;
  be->softmax_axis_forward(x, -1, y_last);
  be->activation_forward(K::ActivationKind::softmax, x, y_act);
  for (std::int64_t i = 0; i < 30; ++i)
    CHECK(y_last.data<float>()[i] == doctest::Approx(y_act.data<float>()[i]).epsilon(1e-6));
  K::Tensor bad;
  CHECK_THROWS_AS(be->softmax_axis_forward(x, 3, bad), K::ValueError);
  CHECK_THROWS_AS(be->softmax_axis_forward(x, -4, bad), K::ValueError);
}

TEST_CASE("cpu backend: gather_rows / scatter_add_rows with every id dtype, repeats, mask and bad ids") {
  auto be = K::make_cpu_backend(2);
  const std::int64_t V = 6, D = 3;
  K::Tensor table = K::Tensor::from_vector({V, D}, random_vec(V * D, 320));
  const std::vector<std::int32_t> ids32 = {4, 0, 4, 2, 5, 1};  // a repeated id and a zero
  K::Tensor dy = K::Tensor::from_vector({2, 3, D}, random_vec(6 * D, 321));
  std::vector<float> expected_dtable(V * D, 0.f);
  for (std::size_t p = 0; p < ids32.size(); ++p)
    for (std::int64_t c = 0; c < D; ++c)
      expected_dtable[std::size_t(ids32[p] * D + c)] += dy.data<float>()[std::int64_t(p) * D + c];
  std::vector<std::int64_t> ids64(ids32.begin(), ids32.end());
  std::vector<std::uint8_t> ids8(ids32.begin(), ids32.end());
  std::vector<float> idsf(ids32.begin(), ids32.end());
  for (const K::Tensor& ids : {K::Tensor::from_vector({2, 3}, ids32), K::Tensor::from_vector({2, 3}, ids64),
                               K::Tensor::from_vector({2, 3}, ids8), K::Tensor::from_vector({2, 3}, idsf)}) {
    CAPTURE(ids.dtype());
    K::Tensor out, mask(ids.shape(), K::DType::uint8);
    be->gather_rows(table, ids, out, mask);
    REQUIRE(out.shape() == K::Shape{2, 3, D});
    for (std::size_t p = 0; p < ids32.size(); ++p) {
      CHECK(mask.data<std::uint8_t>()[p] == (ids32[p] != 0 ? 1 : 0));
      for (std::int64_t c = 0; c < D; ++c)
        CHECK(out.data<float>()[std::int64_t(p) * D + c] == table.data<float>()[ids32[p] * D + c]);
    }
    K::Tensor dtable({V, D});
    dtable.fill(7.f);  // overwritten without accumulate
    be->scatter_add_rows(ids, dy, dtable, false);
    CHECK(dtable.to_vector() == expected_dtable);
    be->scatter_add_rows(ids, dy, dtable, true);
    for (std::size_t i = 0; i < expected_dtable.size(); ++i)
      CHECK(dtable.to_vector()[i] == doctest::Approx(2 * expected_dtable[i]).epsilon(1e-6));
  }
  // Undefined mask: not computed.
  K::Tensor out, no_mask;
  be->gather_rows(table, K::Tensor::from_vector({2}, std::vector<std::int32_t>{1, 2}), out, no_mask);
  CHECK(!no_mask.defined());
  // Out of range (too large, negative, NaN as a float id): a ValueError naming the id and the rows.
  K::Tensor m;
  try {
    be->gather_rows(table, K::Tensor::from_vector({3}, std::vector<std::int32_t>{1, 6, 2}), out, m);
    FAIL("no error for id 6 of a 6-row table");
  } catch (const K::ValueError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("index 6") != std::string::npos);
    CHECK(msg.find("position 1") != std::string::npos);
    CHECK(msg.find("[0, 6)") != std::string::npos);
  }
  CHECK_THROWS_AS(be->gather_rows(table, K::Tensor::from_vector({1}, std::vector<std::int32_t>{-1}), out, m),
                  K::ValueError);
  CHECK_THROWS_AS(be->gather_rows(table, K::Tensor::from_vector({1}, std::vector<float>{std::nanf("")}), out, m),
                  K::ValueError);
  K::Tensor dt({V, D});
  CHECK_THROWS_AS(be->scatter_add_rows(K::Tensor::from_vector({1}, std::vector<std::int32_t>{9}),
                                       K::Tensor::from_vector({1, D}, random_vec(D, 322)), dt, false),
                  K::ValueError);
  // dy of the wrong shape is a ShapeError.
  CHECK_THROWS_AS(be->scatter_add_rows(K::Tensor::from_vector({2}, std::vector<std::int32_t>{1, 2}),
                                       K::Tensor::from_vector({1, D}, random_vec(D, 323)), dt, false),
                  K::ShapeError);
}

TEST_CASE("cpu backend: Huber loss and its gradient on both sides of delta") {
  auto be = K::make_cpu_backend(2);
  const std::int64_t N = 3;
  // Errors spread over [-3, 3]: some inside delta = 1.5, some beyond, none at the kink.
  auto pred =
      K::Tensor::from_vector({N, 4}, {-3.0f, -1.2f, -0.4f, 0.3f, 0.9f, 1.4f, 2.2f, 2.9f, -2.6f, -0.1f, 1.7f, 0.05f});
  auto target = K::Tensor::zeros({N, 4});
  const float delta = 1.5f;
  Vec pv = pred.to_vector(), loss_ref(N, 0.f);
  auto huber = [&](double e) {
    double a = std::fabs(e), q = std::min(a, double(delta));
    return 0.5 * q * q + delta * (a - q);
  };
  for (std::size_t i = 0; i < pv.size(); ++i) loss_ref[i / 4] += float(huber(pv[i]) / 4.0);
  Vec grad_ref = finite_differences(pv, [&](const Vec& p) {
    double s = 0;
    for (float v : p) s += huber(v) / 4.0;
    return s * 0.1;
  });
  K::Tensor loss, grad = K::Tensor::zeros(pred.shape());
  be->huber(pred, target, delta, loss, grad, 0.1f);
  check_close(loss, loss_ref);
  check_close(grad, grad_ref);
  // Beyond delta the gradient is delta's, not the error's: -3 -> -1.5 * 0.1 / 4.
  CHECK(grad.to_vector()[0] == doctest::Approx(-1.5 * 0.1 / 4));
  std::string msg = error_of([&] { be->huber(pred, random_tensor({N, 8}, 1), delta, loss, grad, 1.f); });
  CHECK(contains(msg, "huber"));
}

TEST_CASE("cpu backend: all_finite finds one Inf or NaN anywhere in any of its tensors") {
  auto be = K::make_cpu_backend(2);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (std::int64_t n : {std::int64_t(1), std::int64_t(4097), std::int64_t(100000)}) {
    for (std::int64_t at : {std::int64_t(0), n / 2, n - 1}) {
      for (float bad : {inf, -inf, nan}) {
        K::Tensor a = K::Tensor::full({n}, 3e38f), b = K::Tensor::full({2, 3}, -1.f);  // large but finite
        CHECK(be->all_finite({a, b}));
        a.data<float>()[at] = bad;
        CAPTURE(n);
        CAPTURE(at);
        CHECK_FALSE(be->all_finite({b, a}));
      }
    }
  }
  CHECK(be->all_finite({}));
  CHECK_THROWS_AS(be->all_finite({K::Tensor::from_vector({2}, std::vector<std::int32_t>{1, 2})}), K::Error);
}

TEST_CASE("cpu backend: l2_normalize_rows against a double reference, a zero row stays zero") {
  auto be = K::make_cpu_backend(2);
  K::Tensor x = random_tensor({4, 7}, 910);
  for (std::int64_t k = 0; k < 7; ++k) x.data<float>()[2 * 7 + k] = 0.f;  // row 2: zeros
  K::Tensor dy = random_tensor({4, 7}, 911);
  K::Tensor y, inv, dx;
  be->l2_normalize_rows(x, y, inv);
  be->l2_normalize_rows_backward(y, dy, inv, dx);
  const float* px = x.data<float>();
  const float* pdy = dy.data<float>();
  for (std::int64_t r = 0; r < 4; ++r) {
    double norm = 0.0, dot = 0.0;
    for (std::int64_t k = 0; k < 7; ++k) norm += double(px[r * 7 + k]) * px[r * 7 + k];
    norm = std::sqrt(norm);
    const double f = norm > 0 ? std::min(1.0 / norm, 1e7) : 1e7;
    CHECK(inv.data<float>()[r] == doctest::Approx(f).epsilon(1e-6));
    for (std::int64_t k = 0; k < 7; ++k) {
      CHECK(y.data<float>()[r * 7 + k] == doctest::Approx(px[r * 7 + k] * f).epsilon(1e-6));
      dot += double(pdy[r * 7 + k]) * px[r * 7 + k] * f;
    }
    if (r == 2) dot = 0;  // the clamped factor is a constant: dx = f·dy
    for (std::int64_t k = 0; k < 7; ++k)
      CHECK(dx.data<float>()[r * 7 + k] ==
            doctest::Approx(f * (pdy[r * 7 + k] - px[r * 7 + k] * f * dot)).epsilon(1e-5).scale(f));
  }
  for (std::int64_t k = 0; k < 7; ++k) CHECK(y.data<float>()[2 * 7 + k] == 0.f);
  CHECK_THROWS_AS(be->l2_normalize_rows(random_tensor({2, 3, 4}, 912), y, inv), K::ShapeError);
}
