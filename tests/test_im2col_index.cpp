// The GPU's convolution-as-matrix-product index arithmetic (src/backend/cuda/kernels/im2col_index.hpp),
// checked on every machine: the patch matrix and its adjoint, built here on the host with the
// same functions the CUDA kernels call, multiplied by the kernel with plain loops, must give the
// CPU backend's convolution forward, backward data and backward weights. The geometries are the
// GPU convolution test's (tests/gpu/test_gpu_backend_ops.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/kernels/im2col_index.hpp"
#include "kerascpp/kerascpp.hpp"

namespace K = kerascpp;
namespace kern = kerascpp::cuda::kern;

namespace {

std::vector<float> random_values(std::int64_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = dist(gen);
  return v;
}

// Keras "same" padding along one axis: out = ceil(in / s), the extra row/column goes after.
void same_padding(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t& before, std::int64_t& after) {
  const std::int64_t out = (in + s - 1) / s;
  const std::int64_t total = std::max<std::int64_t>((out - 1) * s + k - in, 0);
  before = total / 2;
  after = total - before;
}

struct Case {
  std::int64_t n, h, w, c, o, kh, kw, sh, sw;
  bool same;
};

void check_close(const std::vector<float>& got, const K::Tensor& want, const std::string& what) {
  const std::vector<float> w = want.to_vector();
  REQUIRE(got.size() == w.size());
  double worst = 0;
  for (std::size_t i = 0; i < w.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(got[i]) - w[i]) / (1.0 + std::abs(w[i])));
  CHECK_MESSAGE(worst <= 1e-5, what << ": worst relative error " << worst);
}

void check_case(const Case& cc, K::Backend& cpu, std::uint32_t seed) {
  K::Conv2DGeometry g;
  g.kernel_h = cc.kh;
  g.kernel_w = cc.kw;
  g.stride_h = cc.sh;
  g.stride_w = cc.sw;
  if (cc.same) {
    same_padding(cc.h, cc.kh, cc.sh, g.pad_top, g.pad_bottom);
    same_padding(cc.w, cc.kw, cc.sw, g.pad_left, g.pad_right);
  }
  const std::int64_t oh = (cc.h + g.pad_top + g.pad_bottom - cc.kh) / cc.sh + 1;
  const std::int64_t ow = (cc.w + g.pad_left + g.pad_right - cc.kw) / cc.sw + 1;
  const kern::ConvGeometry kg{cc.n, cc.h, cc.w, cc.c, oh, ow, cc.kh, cc.kw, cc.sh, cc.sw, g.pad_top, g.pad_left};
  const std::int64_t M = cc.n * oh * ow, Kw = cc.kh * cc.kw * cc.c, O = cc.o;
  const std::string label = "x " + std::to_string(cc.n) + "x" + std::to_string(cc.h) + "x" + std::to_string(cc.w) +
                            "x" + std::to_string(cc.c) + ", kernel " + std::to_string(cc.kh) + "x" +
                            std::to_string(cc.kw) + ", strides " + std::to_string(cc.sh) + "," + std::to_string(cc.sw) +
                            (cc.same ? ", same" : ", valid");

  const auto x = random_values(cc.n * cc.h * cc.w * cc.c, seed);
  const auto w = random_values(Kw * O, seed + 1);  // HWIO = [Kw, O]
  const auto dy = random_values(M * O, seed + 2);

  // The patch matrix, as im2col_kernel fills it.
  std::vector<float> col(static_cast<std::size_t>(M * Kw));
  for (std::int64_t m = 0; m < M; ++m) {
    const kern::PatchRow r = kern::patch_row(kg, m);
    for (int k = 0; k < Kw; ++k) {
      const std::int64_t src = kern::patch_source(kg, r, k);
      col[m * Kw + k] = src >= 0 ? x[src] : 0.f;
    }
  }
  std::vector<float> y(static_cast<std::size_t>(M * O)), dw(static_cast<std::size_t>(Kw * O)), dcol(col.size());
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t o = 0; o < O; ++o) {
      double s = 0;
      for (std::int64_t k = 0; k < Kw; ++k) s += static_cast<double>(col[m * Kw + k]) * w[k * O + o];
      y[m * O + o] = static_cast<float>(s);
    }
  for (std::int64_t k = 0; k < Kw; ++k)
    for (std::int64_t o = 0; o < O; ++o) {
      double s = 0;
      for (std::int64_t m = 0; m < M; ++m) s += static_cast<double>(col[m * Kw + k]) * dy[m * O + o];
      dw[k * O + o] = static_cast<float>(s);
    }
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t k = 0; k < Kw; ++k) {
      double s = 0;
      for (std::int64_t o = 0; o < O; ++o) s += static_cast<double>(dy[m * O + o]) * w[k * O + o];
      dcol[m * Kw + k] = static_cast<float>(s);
    }
  // The adjoint, as col2im_kernel gathers it.
  std::vector<float> dx(x.size());
  for (std::int64_t p = 0; p < cc.n * cc.h * cc.w; ++p)
    for (std::int64_t ch = 0; ch < cc.c; ++ch) {
      float s = 0.f;
      kern::for_each_patch_reading(kg, p,
                                   [&](std::int64_t m, std::int64_t tap) { s += dcol[m * Kw + tap * cc.c + ch]; });
      dx[p * cc.c + ch] = s;
    }

  const K::Tensor xt = K::Tensor::from_vector({cc.n, cc.h, cc.w, cc.c}, x);
  const K::Tensor wt = K::Tensor::from_vector({cc.kh, cc.kw, cc.c, O}, w);
  const K::Tensor dyt = K::Tensor::from_vector({cc.n, oh, ow, O}, dy);
  K::Tensor yc, dxc = K::Tensor::zeros(xt.shape()), dwc, no_db;
  cpu.conv2d_forward(xt, wt, K::Tensor(), g, K::ActivationKind::linear, yc);
  cpu.conv2d_backward_data(dyt, wt, g, dxc);
  cpu.conv2d_backward_weights(xt, dyt, g, dwc, no_db, false);
  check_close(y, yc, label + " forward");
  check_close(dx, dxc, label + " backward data");
  check_close(dw, dwc, label + " backward weights");
}

}  // namespace

TEST_CASE("GPU im2col index arithmetic: patch matrix products equal the CPU convolutions") {
  auto cpu = K::make_cpu_backend(2);
  const std::vector<Case> cases = {
      {2, 7, 7, 3, 4, 3, 3, 1, 1, true},      {2, 8, 8, 3, 5, 3, 3, 2, 2, true},
      {4, 12, 12, 8, 16, 3, 3, 2, 2, true},   {2, 11, 7, 3, 4, 4, 2, 2, 2, true},
      {1, 9, 6, 2, 3, 5, 3, 2, 1, true},      {3, 6, 6, 1, 8, 2, 2, 2, 2, false},
      {2, 9, 9, 4, 6, 3, 3, 2, 2, false},     {2, 10, 10, 16, 32, 3, 3, 1, 1, false},
      {2, 5, 5, 3, 7, 1, 1, 1, 1, false},     {2, 8, 8, 4, 6, 1, 1, 2, 2, true},
      {2, 9, 7, 3, 5, 1, 1, 2, 2, false},     {1, 15, 13, 3, 4, 7, 7, 2, 2, true},
      {2, 192, 192, 4, 8, 1, 1, 2, 2, false},  // the GPU conv test's large strided 1x1 case
  };
  std::uint32_t seed = 7;
  for (const auto& cc : cases) check_case(cc, *cpu, seed += 3);
}
