// The CUDA backend against the CPU backend: every Backend op, on seeded random inputs and
// several shapes each, gives the CPU backend's result within rel_error <= 1e-4 (see
// gpu_test_util.hpp: max_i |gpu_i − cpu_i| / max(1, |cpu_i|)); data movement (concat, split,
// dropout masks) is compared bit for bit. Both backends get identical inputs (the GPU a copy on
// gpu:0); preallocated GPU outputs are filled with NaN first, so an op that fails to write
// every element is caught. Last, bad input must raise kerascpp::Error and leave the backend usable.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "backend/cuda/cuda_backend.hpp"
#include "gpu_test_util.hpp"
#include "kerascpp/kerascpp.hpp"

using namespace gputest;

namespace {

const K::ActivationKind kAllActivations[] = {K::ActivationKind::linear, K::ActivationKind::relu,
                                             K::ActivationKind::sigmoid, K::ActivationKind::tanh,
                                             K::ActivationKind::softmax};

// Keras "same" padding along one axis: out = ceil(in / s), the extra row/column goes after.
void same_padding(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t& before, std::int64_t& after) {
  std::int64_t out = (in + s - 1) / s;
  std::int64_t total = std::max<std::int64_t>((out - 1) * s + k - in, 0);
  before = total / 2;
  after = total - before;
}

struct ConvCase {
  std::int64_t n, h, w, c, o, kh, kw, sh, sw;
  bool same;
  K::Conv2DGeometry geometry() const {
    K::Conv2DGeometry g;
    g.kernel_h = kh;
    g.kernel_w = kw;
    g.stride_h = sh;
    g.stride_w = sw;
    if (same) {
      same_padding(h, kh, sh, g.pad_top, g.pad_bottom);
      same_padding(w, kw, sw, g.pad_left, g.pad_right);
    }
    return g;
  }
  std::int64_t oh() const {
    auto g = geometry();
    return (h + g.pad_top + g.pad_bottom - kh) / sh + 1;
  }
  std::int64_t ow() const {
    auto g = geometry();
    return (w + g.pad_left + g.pad_right - kw) / sw + 1;
  }
  std::string label() const {
    auto g = geometry();
    return "conv x(" + std::to_string(n) + "," + std::to_string(h) + "," + std::to_string(w) + "," + std::to_string(c) +
           ") k" + std::to_string(kh) + "x" + std::to_string(kw) + " o" + std::to_string(o) + " s" +
           std::to_string(sh) + "x" + std::to_string(sw) + (same ? " same" : " valid") + " pads(t" +
           std::to_string(g.pad_top) + ",b" + std::to_string(g.pad_bottom) + ",l" + std::to_string(g.pad_left) + ",r" +
           std::to_string(g.pad_right) + ")";
  }
};

struct PoolCase {
  std::int64_t n, h, w, c;
  K::Pool2DGeometry g;
  std::string label() const {
    return std::string(g.kind == K::PoolKind::max ? "max" : "avg") + "pool x(" + std::to_string(n) + "," +
           std::to_string(h) + "," + std::to_string(w) + "," + std::to_string(c) + ") " + std::to_string(g.pool_h) +
           "x" + std::to_string(g.pool_w) + " s" + std::to_string(g.stride_h) + "x" + std::to_string(g.stride_w) +
           " pads(t" + std::to_string(g.pad_top) + ",l" + std::to_string(g.pad_left) + ",b" +
           std::to_string(g.pad_bottom) + ",r" + std::to_string(g.pad_right) + ")";
  }
};

K::Pool2DGeometry pool(K::PoolKind kind, std::int64_t ph, std::int64_t pw, std::int64_t sh, std::int64_t sw,
                       std::int64_t top = 0, std::int64_t left = 0, std::int64_t bottom = 0, std::int64_t right = 0) {
  K::Pool2DGeometry g;
  g.kind = kind;
  g.pool_h = ph;
  g.pool_w = pw;
  g.stride_h = sh;
  g.stride_w = sw;
  g.pad_top = top;
  g.pad_left = left;
  g.pad_bottom = bottom;
  g.pad_right = right;
  return g;
}

std::string shape_label(const K::Shape& s) { return K::shape_str(s); }

}  // namespace

// ============================================================================ identity

TEST_CASE("gpu backend: is the CUDA backend on the GPU it was made for") {
  auto be = make_backends(0);
  CHECK(be.gpu->device() == gpu(0));
  CHECK(contains(be.gpu->name(), "gpu:0"));
  auto* cuda_be = dynamic_cast<K::cuda::CudaBackend*>(be.gpu.get());
  REQUIRE(cuda_be != nullptr);
  CHECK(cuda_be->device_index() == 0);
  CHECK_NOTHROW(cuda_be->synchronize());
  MESSAGE("GPU backend: " << be.gpu->name());
}

// ============================================================================ dense algebra

TEST_CASE("gpu backend: dense_forward, each activation, with and without bias") {
  auto be = make_backends();
  struct Case {
    K::Shape x;
    std::int64_t out;
  };
  std::uint32_t seed = 1;
  for (const Case& c :
       {Case{{1, 1}, 1}, Case{{7, 13}, 5}, Case{{64, 100}, 33}, Case{{3, 4, 6}, 10}, Case{{256, 512}, 130}}) {
    const std::int64_t in = c.x.back();
    auto x = random_tensor(c.x, seed++), w = random_tensor({in, c.out}, seed++), b = random_tensor({c.out}, seed++);
    auto xg = on_gpu(x), wg = on_gpu(w), bg = on_gpu(b);
    for (auto act : kAllActivations)
      for (bool bias : {true, false}) {
        std::string what = "dense x" + shape_label(c.x) + " out " + std::to_string(c.out) + " " +
                           K::activation_name(act) + (bias ? " +bias" : " no bias");
        K::Tensor yc, yg;
        be.cpu->dense_forward(x, w, bias ? b : K::Tensor(), act, yc);
        be.gpu->dense_forward(xg, wg, bias ? bg : K::Tensor(), act, yg);
        check_close(yg, yc, what);
        // A preallocated output is overwritten.
        K::Tensor pre = gpu_garbage(yc.shape());
        be.gpu->dense_forward(xg, wg, bias ? bg : K::Tensor(), act, pre);
        check_close(pre, yc, what + " (preallocated y)");
      }
  }
}

TEST_CASE("gpu backend: matmul, every transpose combination, overwrite and accumulate") {
  auto be = make_backends();
  struct Dims {
    std::int64_t m, k, n;
  };
  std::uint32_t seed = 20;
  for (Dims d : {Dims{1, 1, 1}, Dims{6, 9, 4}, Dims{33, 65, 17}, Dims{128, 64, 96}, Dims{1, 300, 7}}) {
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        std::string what = "matmul M" + std::to_string(d.m) + " K" + std::to_string(d.k) + " N" + std::to_string(d.n) +
                           (ta ? " Aᵀ" : " A") + (tb ? " Bᵀ" : " B");
        auto a = random_tensor(ta ? K::Shape{d.k, d.m} : K::Shape{d.m, d.k}, seed++);
        auto b = random_tensor(tb ? K::Shape{d.n, d.k} : K::Shape{d.k, d.n}, seed++);
        auto c0 = random_tensor({d.m, d.n}, seed++);
        auto ag = on_gpu(a), bg = on_gpu(b);
        // Overwrite: the GPU's c starts as NaN, which must not leak into the result.
        K::Tensor cc = c0.clone(), cg = gpu_garbage({d.m, d.n});
        be.cpu->matmul(a, ta, b, tb, cc, false);
        be.gpu->matmul(ag, ta, bg, tb, cg, false);
        check_close(cg, cc, what + " overwrite");
        // Accumulate into the same random c on both.
        K::Tensor ac = c0.clone(), ag_c = on_gpu(c0);
        be.cpu->matmul(a, ta, b, tb, ac, true);
        be.gpu->matmul(ag, ta, bg, tb, ag_c, true);
        check_close(ag_c, ac, what + " accumulate");
      }
  }
}

TEST_CASE("gpu backend: sum_to_last_axis, overwrite and accumulate") {
  auto be = make_backends();
  std::uint32_t seed = 40;
  for (const K::Shape& s : {K::Shape{1, 1}, K::Shape{3, 50, 7}, K::Shape{1000, 3}, K::Shape{4, 1, 2, 129},
                            K::Shape{70000, 2}, K::Shape{5, 1024}}) {
    std::string what = "sum_to_last_axis " + shape_label(s);
    auto x = random_tensor(s, seed++);
    auto out0 = random_tensor({s.back()}, seed++);
    auto xg = on_gpu(x);
    K::Tensor oc, og;
    be.cpu->sum_to_last_axis(x, oc, false);
    be.gpu->sum_to_last_axis(xg, og, false);
    check_close(og, oc, what + " (undefined out)");
    K::Tensor og_pre = gpu_garbage({s.back()});
    be.gpu->sum_to_last_axis(xg, og_pre, false);
    check_close(og_pre, oc, what + " overwrite");
    K::Tensor ac = out0.clone(), ag = on_gpu(out0);
    be.cpu->sum_to_last_axis(x, ac, true);
    be.gpu->sum_to_last_axis(xg, ag, true);
    check_close(ag, ac, what + " accumulate");
  }
}

// ============================================================================ convolution

namespace {

// The cases, on a backend made under KERASCPP_GPU_CONV=`engine` (cudnn; pointwise: the 1x1 cases
// on cuBLAS; gemm: every case on cuBLAS through im2col; nchw: every symmetrically padded case on
// cuDNN over NCHW copies; timed: each pass on the route that ran it fastest when first met,
// conv_route.cpp).
void check_conv2d_against_cpu(const char* engine) {
  auto be = make_backends_with("KERASCPP_GPU_CONV", engine);
  // cuDNN's measured NCHW algorithms include FFT and Winograd ones (ResNet-50's 3x3 passes run on
  // them, as under PyTorch's cudnn.benchmark), whose transforms round differently from a direct
  // sum: on an H200 the 8x14x14x32 case's backward data and filter passes landed 1.3e-4 and
  // 2.4e-4 from the CPU's. The routes that may take them get 5x the tolerance; a wrong layout
  // or filter transform is off by O(1).
  const std::string name(engine);
  const double tol = kOpTol * (name == "nchw" || name == "timed" ? 5.0 : 1.0);
  const std::vector<ConvCase> cases = {
      {2, 7, 7, 3, 4, 3, 3, 1, 1, true},       // same, stride 1, symmetric padding
      {2, 8, 8, 3, 5, 3, 3, 2, 2, true},       // same, stride 2 on even input: pad top/left 0, bottom/right 1
      {4, 12, 12, 8, 16, 3, 3, 2, 2, true},    // same, stride 2, asymmetric, more channels
      {2, 11, 7, 3, 4, 4, 2, 2, 2, true},      // even, non-square kernel: pads (1,2) and (0,1)
      {1, 9, 6, 2, 3, 5, 3, 2, 1, true},       // non-square kernel, mixed strides
      {3, 6, 6, 1, 8, 2, 2, 2, 2, false},      // valid, one input channel
      {2, 9, 9, 4, 6, 3, 3, 2, 2, false},      // valid, stride 2: the last input row/column gets no gradient
      {2, 10, 10, 16, 32, 3, 3, 1, 1, false},  // valid, wider
      {2, 5, 5, 3, 7, 1, 1, 1, 1, false},      // 1x1 kernel
      {2, 8, 8, 4, 6, 1, 1, 2, 2, true},       // 1x1, stride 2, "same" on even input (no padding)
      {2, 9, 7, 3, 5, 1, 1, 2, 2, false},      // 1x1, stride 2, odd input: the last row gets no gradient
      {2, 192, 192, 4, 8, 3, 3, 1, 1, true},   // > 65535 pixels: im2col/col2im loop over grid rows
      {2, 192, 192, 4, 8, 1, 1, 2, 2, false},  // the same for the strided 1x1 path's col2im
      {8, 14, 14, 32, 64, 3, 3, 1, 1, true},   // a real layer's size
  };
  std::uint32_t seed = 100;
  for (const auto& cc : cases) {
    const K::Conv2DGeometry g = cc.geometry();
    const std::string label = std::string(engine) + ": " + cc.label();
    auto x = random_tensor({cc.n, cc.h, cc.w, cc.c}, seed++);
    auto w = random_tensor({cc.kh, cc.kw, cc.c, cc.o}, seed++);
    auto b = random_tensor({cc.o}, seed++);
    auto dy = random_tensor({cc.n, cc.oh(), cc.ow(), cc.o}, seed++);
    auto xg = on_gpu(x), wg = on_gpu(w), bg = on_gpu(b), dyg = on_gpu(dy);

    for (auto act : kAllActivations)
      for (bool bias : {true, false}) {
        K::Tensor yc, yg;
        be.cpu->conv2d_forward(x, w, bias ? b : K::Tensor(), g, act, yc);
        be.gpu->conv2d_forward(xg, wg, bias ? bg : K::Tensor(), g, act, yg);
        REQUIRE(yc.shape() == K::Shape{cc.n, cc.oh(), cc.ow(), cc.o});
        check_close(yg, yc, label + " forward " + K::activation_name(act) + (bias ? " +bias" : " no bias"), tol);
      }

    // Backward data: dx is preallocated (NaN on the GPU) and must be fully overwritten.
    K::Tensor dxc = K::Tensor::full(x.shape(), 7.f), dxg = gpu_garbage(x.shape());
    be.cpu->conv2d_backward_data(dy, w, g, dxc);
    be.gpu->conv2d_backward_data(dyg, wg, g, dxg);
    check_close(dxg, dxc, label + " backward data", tol);

    // Backward weights: overwrite (GPU outputs NaN beforehand) and accumulate onto the same random
    // values, with and without the bias gradient.
    // Each dw/db element sums n·oh·ow products whose magnitudes far exceed the (cancelling) sum:
    // float32 rounding grows with that length, so long sums get a proportionally wider tolerance
    // (cuDNN's 73,728-term sums of the 192x192 case land 1.6e-4..2.0e-4 from the CPU's).
    const double w_tol = tol * std::max(1.0, std::sqrt(static_cast<double>(cc.n * cc.oh() * cc.ow()) / 1024.0));
    auto dw0 = random_tensor(w.shape(), seed++), db0 = random_tensor({cc.o}, seed++);
    for (bool with_db : {true, false}) {
      std::string what = label + (with_db ? " backward weights +db" : " backward weights, no db");
      K::Tensor dwc = K::Tensor::full(w.shape(), 3.f), dbc = with_db ? K::Tensor::full({cc.o}, 3.f) : K::Tensor();
      K::Tensor dwg = gpu_garbage(w.shape()), dbg = with_db ? gpu_garbage({cc.o}) : K::Tensor();
      be.cpu->conv2d_backward_weights(x, dy, g, dwc, dbc, false);
      be.gpu->conv2d_backward_weights(xg, dyg, g, dwg, dbg, false);
      check_close(dwg, dwc, what + " dw overwrite", w_tol);
      if (with_db) check_close(dbg, dbc, what + " db overwrite", w_tol);
      else CHECK_MESSAGE(!dbg.defined(), what << ": an undefined db must stay undefined");

      K::Tensor awc = dw0.clone(), abc = with_db ? db0.clone() : K::Tensor();
      K::Tensor awg = on_gpu(dw0), abg = with_db ? on_gpu(db0) : K::Tensor();
      be.cpu->conv2d_backward_weights(x, dy, g, awc, abc, true);
      be.gpu->conv2d_backward_weights(xg, dyg, g, awg, abg, true);
      check_close(awg, awc, what + " dw accumulate", w_tol);
      if (with_db) check_close(abg, abc, what + " db accumulate", w_tol);
    }
    // An undefined dw is allocated on the GPU.
    K::Tensor dw_new, no_db;
    be.gpu->conv2d_backward_weights(xg, dyg, g, dw_new, no_db, false);
    K::Tensor dw_ref, no_db_ref;
    be.cpu->conv2d_backward_weights(x, dy, g, dw_ref, no_db_ref, false);
    check_close(dw_new, dw_ref, label + " backward weights into an undefined dw", w_tol);
  }
}

}  // namespace

TEST_CASE("gpu backend: conv2d forward, backward data, backward weights (valid/same, stride 1/2)") {
  for (const char* engine : {"cudnn", "pointwise", "gemm", "nchw", "timed"}) check_conv2d_against_cpu(engine);
  // The timed engine timed the 3x3/2x2/4x2/5x3 passes (the 1x1 ones go to cuBLAS untimed).
  CHECK(kerascpp::cuda::timed_conv_choices(0) > 0);
}

// ============================================================================ pooling

TEST_CASE("gpu backend: max and average pooling forward and backward") {
  auto be = make_backends();
  using PK = K::PoolKind;
  std::vector<PoolCase> cases;
  for (PK kind : {PK::max, PK::average}) {
    cases.push_back({2, 6, 6, 3, pool(kind, 2, 2, 2, 2)});               // valid, non-overlapping
    cases.push_back({2, 7, 7, 4, pool(kind, 3, 3, 2, 2, 1, 1, 1, 1)});   // overlapping windows, padding
    cases.push_back({1, 5, 8, 2, pool(kind, 2, 2, 2, 2, 0, 0, 1, 0)});   // "same" on odd height: bottom pad only
    cases.push_back({1, 5, 8, 2, pool(kind, 2, 3, 2, 1, 0, 1, 1, 1)});   // non-square, mixed strides
    cases.push_back({4, 9, 9, 16, pool(kind, 3, 3, 1, 1, 1, 1, 1, 1)});  // "same", stride 1
    cases.push_back({3, 7, 5, 8, pool(kind, 2, 2, 2, 2, 0, 0, 1, 1)});   // "same" on odd h and w
    cases.push_back({8, 28, 28, 32, pool(kind, 2, 2, 2, 2)});            // a real layer's size
    cases.push_back({2, 5, 5, 3, pool(kind, 5, 5, 1, 1)});               // global window
  }
  std::uint32_t seed = 300;
  for (const auto& pc : cases) {
    const std::string label = pc.label();
    auto x = random_tensor({pc.n, pc.h, pc.w, pc.c}, seed++);
    auto xg = on_gpu(x);
    K::Tensor yc, wsc, yg, wsg;
    be.cpu->pool2d_forward(x, pc.g, yc, wsc);
    be.gpu->pool2d_forward(xg, pc.g, yg, wsg);
    check_close(yg, yc, label + " forward");
    auto dy = random_tensor(yc.shape(), seed++);
    K::Tensor dxc, dxg = gpu_garbage(x.shape());
    be.cpu->pool2d_backward(dy, x, pc.g, wsc, dxc);
    be.gpu->pool2d_backward(on_gpu(dy), xg, pc.g, wsg, dxg);
    check_close(dxg, dxc, label + " backward");
  }
}

// ============================================================================ elementwise

TEST_CASE("gpu backend: activations forward and backward (softmax included), in place too") {
  auto be = make_backends();
  struct Case {
    K::Shape s;
    float range;
  };
  std::uint32_t seed = 400;
  for (const Case& c : {Case{{5, 3, 6}, 3.f}, Case{{1, 1}, 3.f}, Case{{128, 10}, 3.f}, Case{{7, 1000}, 3.f},
                        Case{{4, 37}, 100.f}, Case{{3, 1}, 5.f}, Case{{3, 100003}, 4.f}}) {
    auto x = random_tensor(c.s, seed++, -c.range, c.range);
    auto dy = random_tensor(c.s, seed++);
    auto xg = on_gpu(x), dyg = on_gpu(dy);
    for (auto act : kAllActivations) {
      std::string what = std::string(K::activation_name(act)) + " " + shape_label(c.s) + " range ±" +
                         std::to_string(static_cast<int>(c.range));
      K::Tensor yc, yg;
      be.cpu->activation_forward(act, x, yc);
      be.gpu->activation_forward(act, xg, yg);
      check_close(yg, yc, what + " forward");
      // Backward from the same forward output on both sides.
      K::Tensor ycg = on_gpu(yc), dxc, dxg = gpu_garbage(c.s);
      be.cpu->activation_backward(act, yc, dy, dxc);
      be.gpu->activation_backward(act, ycg, dyg, dxg);
      check_close(dxg, dxc, what + " backward");
      // y aliasing x, dx aliasing dy.
      K::Tensor xi = on_gpu(x);
      be.gpu->activation_forward(act, xi, xi);
      check_close(xi, yc, what + " forward in place");
      K::Tensor gi = on_gpu(dy);
      be.gpu->activation_backward(act, ycg, gi, gi);
      check_close(gi, dxc, what + " backward in place");
    }
  }
}

TEST_CASE("gpu backend: scale_rows (per-example weights) matches the CPU") {
  auto be = make_backends();
  std::uint32_t seed = 480;
  // [N], [N, C] and [N, T, C]: each row of numel / N values times its weight; 70001 rows spans many blocks.
  for (const K::Shape& s : {K::Shape{7}, K::Shape{5, 3}, K::Shape{4, 6, 9}, K::Shape{70001, 3}}) {
    K::Tensor x = random_tensor(s, seed++), w = random_tensor({s[0]}, seed++);
    K::Tensor xc = x.clone(), xg = on_gpu(x);
    be.cpu->scale_rows(xc, w);
    be.gpu->scale_rows(xg, on_gpu(w));
    check_close(xg, xc, "scale_rows " + shape_label(s));
  }
}

TEST_CASE("gpu backend: l2_normalize_rows and its backward match the CPU, a zero row included") {
  auto be = make_backends();
  std::uint32_t seed = 490;
  for (const K::Shape& s : {K::Shape{3, 5}, K::Shape{1, 1}, K::Shape{70001, 3}, K::Shape{2, 1000}}) {
    K::Tensor x = random_tensor(s, seed++), dy = random_tensor(s, seed++);
    if (s[0] > 1)
      for (std::int64_t k = 0; k < s[1]; ++k) x.data<float>()[s[1] + k] = 0.f;  // row 1: all zeros, clamped
    K::Tensor yc, invc, dxc, yg, invg, dxg;
    be.cpu->l2_normalize_rows(x, yc, invc);
    be.gpu->l2_normalize_rows(on_gpu(x), yg, invg);
    check_close(yg, yc, "l2_normalize_rows " + shape_label(s));
    check_close(invg, invc, "l2_normalize_rows factors " + shape_label(s));
    be.cpu->l2_normalize_rows_backward(yc, dy, invc, dxc);
    be.gpu->l2_normalize_rows_backward(yg, on_gpu(dy), invg, dxg);
    check_close(dxg, dxc, "l2_normalize_rows_backward " + shape_label(s));
  }
}

TEST_CASE("gpu backend: add, add_inplace, multiply, scale, copy") {
  auto be = make_backends();
  std::uint32_t seed = 500;
  for (const K::Shape& s : {K::Shape{4, 33}, K::Shape{1}, K::Shape{1000, 17}, K::Shape{2, 3, 4, 5}, K::Shape{262147}}) {
    const std::string sl = shape_label(s);
    std::vector<K::Tensor> xs, xgs;
    for (int i = 0; i < 4; ++i) {
      xs.push_back(random_tensor(s, seed++));
      xgs.push_back(on_gpu(xs.back()));
    }
    for (std::size_t k = 1; k <= 4; ++k) {
      std::vector<K::Tensor> in_c(xs.begin(), xs.begin() + k), in_g(xgs.begin(), xgs.begin() + k);
      K::Tensor yc, yg = gpu_garbage(s);
      be.cpu->add(in_c, yc);
      be.gpu->add(in_g, yg);
      check_close(yg, yc, "add of " + std::to_string(k) + " " + sl);
    }
    K::Tensor ac = xs[0].clone(), ag = on_gpu(xs[0]);
    be.cpu->add_inplace(ac, xs[1]);
    be.gpu->add_inplace(ag, xgs[1]);
    check_close(ag, ac, "add_inplace " + sl);

    K::Tensor pc, pg = gpu_garbage(s), pg_new;
    be.cpu->multiply(xs[0], xs[1], pc);
    be.gpu->multiply(xgs[0], xgs[1], pg);
    be.gpu->multiply(xgs[0], xgs[1], pg_new);
    check_close(pg, pc, "multiply " + sl);
    check_close(pg_new, pc, "multiply into undefined " + sl);

    for (float factor : {-2.5f, 0.f, 1e-3f, 1.f}) {
      K::Tensor sc = xs[2].clone(), sg = on_gpu(xs[2]);
      be.cpu->scale(sc, factor);
      be.gpu->scale(sg, factor);
      check_close(sg, sc, "scale by " + std::to_string(factor) + " " + sl);
    }

    // copy: same numel, any shape (here flattened), into a NaN-filled destination.
    K::Tensor dc = K::Tensor::zeros({K::shape_numel(s)}), dg = gpu_garbage({K::shape_numel(s)});
    be.cpu->copy(xs[3], dc);
    be.gpu->copy(xgs[3], dg);
    check_close(dg, dc, "copy " + sl);
    CHECK_MESSAGE(bit_equal(dg, dc), "copy " << sl << " is not bit-exact");
  }
}

TEST_CASE("gpu backend: concat and split on every axis, bit for bit") {
  auto be = make_backends();
  std::uint32_t seed = 600;
  for (const K::Shape& base : {K::Shape{2, 3, 4}, K::Shape{2, 5, 5, 8}, K::Shape{1, 1}}) {
    const int rank = static_cast<int>(base.size());
    for (int axis = -1; axis < rank; ++axis) {
      const int a = axis < 0 ? axis + rank : axis;
      std::string what = "concat " + shape_label(base) + " axis " + std::to_string(axis);
      // Three parts along `a` of sizes base[a], 1 and 5.
      std::vector<K::Shape> shapes(3, base);
      shapes[1][a] = 1;
      shapes[2][a] = 5;
      std::vector<K::Tensor> parts, parts_g;
      for (auto& sh : shapes) {
        parts.push_back(random_tensor(sh, seed++));
        parts_g.push_back(on_gpu(parts.back()));
      }
      K::Tensor yc, yg;
      be.cpu->concat(parts, axis, yc);
      be.gpu->concat(parts_g, axis, yg);
      REQUIRE(yg.defined());
      CHECK(yg.device() == gpu());
      CHECK_MESSAGE(bit_equal(yg, yc), what << ": GPU result differs from the CPU's");
      K::Tensor yg_pre = gpu_garbage(yc.shape());
      be.gpu->concat(parts_g, axis, yg_pre);
      CHECK_MESSAGE(bit_equal(yg_pre, yc), what << " (preallocated y): GPU result differs from the CPU's");

      std::vector<K::Tensor> back;
      for (auto& sh : shapes) back.push_back(gpu_garbage(sh));
      be.gpu->split(on_gpu(yc), axis, back);
      for (std::size_t i = 0; i < back.size(); ++i)
        CHECK_MESSAGE(bit_equal(back[i], parts[i]), what << ": split part " << i << " differs from the original");
    }
  }
}

TEST_CASE("gpu backend: dropout masks equal the CPU's bit for bit for the same seed") {
  auto be = make_backends();
  std::uint32_t seed = 700;
  for (const K::Shape& s : {K::Shape{100, 200}, K::Shape{1, 1}, K::Shape{3, 5, 7}, K::Shape{1025, 1031}}) {
    auto x = random_tensor(s, seed++);
    auto xg = on_gpu(x);
    for (float rate : {0.f, 0.3f, 0.5f, 0.9f})
      for (std::uint64_t dseed : {std::uint64_t(0), std::uint64_t(1234), (std::uint64_t(1) << 63) + 5}) {
        std::string what =
            "dropout " + shape_label(s) + " rate " + std::to_string(rate) + " seed " + std::to_string(dseed);
        K::Tensor yc, mc, yg = gpu_garbage(s), mg = gpu_garbage(s);
        be.cpu->dropout_forward(x, rate, dseed, yc, mc);
        be.gpu->dropout_forward(xg, rate, dseed, yg, mg);
        CHECK(mg.device() == gpu());
        CHECK_MESSAGE(bit_equal(mg, mc), what << ": mask differs from the CPU's");
        CHECK_MESSAGE(bit_equal(yg, yc), what << ": y differs from the CPU's");
      }
  }
  // Different seeds give different masks on the GPU too (the seed is used at all).
  auto x = random_tensor({64, 64}, 1);
  K::Tensor y1, m1, y2, m2;
  be.gpu->dropout_forward(on_gpu(x), 0.5f, 1, y1, m1);
  be.gpu->dropout_forward(on_gpu(x), 0.5f, 2, y2, m2);
  CHECK(!bit_equal(m1, m2));
  K::Tensor y, m;
  CHECK_THROWS_AS(be.gpu->dropout_forward(on_gpu(x), 1.f, 1, y, m), K::Error);
}

// ============================================================================ batch normalization

TEST_CASE("gpu backend: batchnorm training, inference, backward and the decomposed path") {
  auto be = make_backends();
  const float eps = 1e-3f;
  struct Case {
    K::Shape s;
    float lo, hi;
  };
  std::uint32_t seed = 800;
  for (const Case& c : {Case{{2, 5, 5, 16}, -2.f, 3.f}, Case{{64, 3}, -1.f, 1.f}, Case{{1, 7}, -1.f, 1.f},
                        Case{{8, 4, 4, 32}, -1.f, 1.f}, Case{{300, 1}, -1.f, 1.f}, Case{{4096, 8}, 5.f, 7.f},
                        Case{{16, 16, 16, 64}, -1.f, 2.f}}) {
    const std::string sl = shape_label(c.s);
    const std::int64_t C = c.s.back();
    const double M = static_cast<double>(K::shape_numel(c.s) / C);
    auto x = random_tensor(c.s, seed++, c.lo, c.hi), dy = random_tensor(c.s, seed++);
    auto gamma = random_tensor({C}, seed++, 0.5f, 1.5f), beta = random_tensor({C}, seed++);
    auto xg = on_gpu(x), dyg = on_gpu(dy), gg = on_gpu(gamma), bg = on_gpu(beta);

    for (bool affine : {true, false}) {
      const std::string what = "batchnorm " + sl + (affine ? "" : " (no gamma/beta)");
      K::Tensor gam = affine ? gamma : K::Tensor(), bet = affine ? beta : K::Tensor();
      K::Tensor gam_g = affine ? gg : K::Tensor(), bet_g = affine ? bg : K::Tensor();

      // Training: y, batch mean, biased batch variance.
      K::Tensor yc, mc, vc, yg = gpu_garbage(c.s), mg, vg;
      be.cpu->batchnorm_forward_training(x, gam, bet, eps, yc, mc, vc);
      be.gpu->batchnorm_forward_training(xg, gam_g, bet_g, eps, yg, mg, vg);
      check_close(mg, mc, what + " training mean");
      check_close(vg, vc, what + " training var");
      check_close(yg, yc, what + " training y");

      // Inference with given statistics.
      auto mean = random_tensor({C}, seed++), var = random_tensor({C}, seed++, 0.1f, 2.f);
      K::Tensor ic, ig = gpu_garbage(c.s);
      be.cpu->batchnorm_forward_inference(x, gam, bet, mean, var, eps, ic);
      be.gpu->batchnorm_forward_inference(xg, gam_g, bet_g, on_gpu(mean), on_gpu(var), eps, ig);
      check_close(ig, ic, what + " inference");

      // Fused backward from the CPU's statistics on both sides; dgamma/dbeta only when affine.
      K::Tensor mcg = on_gpu(mc), vcg = on_gpu(vc);
      K::Tensor dxc, dgc = affine ? K::Tensor::zeros({C}) : K::Tensor(),
                     dbc = affine ? K::Tensor::zeros({C}) : K::Tensor();
      K::Tensor dxg = gpu_garbage(c.s), dgg = affine ? gpu_garbage({C}) : K::Tensor(),
                dbg_ = affine ? gpu_garbage({C}) : K::Tensor();
      be.cpu->batchnorm_backward(dy, x, gam, mc, vc, eps, dxc, dgc, dbc);
      be.gpu->batchnorm_backward(dyg, xg, gam_g, mcg, vcg, eps, dxg, dgg, dbg_);
      check_close(dxg, dxc, what + " backward dx");
      if (affine) {
        check_close(dgg, dgc, what + " backward dgamma");
        check_close(dbg_, dbc, what + " backward dbeta");
      } else {
        CHECK_MESSAGE(!dgg.defined(), what << ": undefined dgamma must stay undefined");
        CHECK_MESSAGE(!dbg_.defined(), what << ": undefined dbeta must stay undefined");
      }
      if (affine) {
        // gamma present but no beta (center=False): dbeta undefined, dgamma still computed.
        K::Tensor dx2c, dg2c = K::Tensor::zeros({C}), no_db_c, dx2g, dg2g = gpu_garbage({C}), no_db_g;
        be.cpu->batchnorm_backward(dy, x, gamma, mc, vc, eps, dx2c, dg2c, no_db_c);
        be.gpu->batchnorm_backward(dyg, xg, gg, mcg, vcg, eps, dx2g, dg2g, no_db_g);
        check_close(dx2g, dx2c, what + " backward dx (no dbeta)");
        check_close(dg2g, dg2c, what + " backward dgamma (no dbeta)");
        CHECK(!no_db_g.defined());
      }

      // Synchronized BN's ops on one replica: moments, packed and combined; backward reduce and
      // apply with the CPU's statistics.
      K::Tensor mom_mc, mom_vc, mom_mg = gpu_garbage({C}), mom_vg = gpu_garbage({C});
      be.cpu->moments(x, mom_mc, mom_vc);
      be.gpu->moments(xg, mom_mg, mom_vg);
      check_close(mom_mg, mom_mc, what + " moments mean");
      check_close(mom_vg, mom_vc, what + " moments var");
      K::Tensor pc, pg = gpu_garbage({K::moments_packed_size(C, 2)});
      be.cpu->pack_moments(mc, vc, static_cast<std::int64_t>(M), 1, 2, pc);
      be.gpu->pack_moments(mcg, vcg, static_cast<std::int64_t>(M), 1, 2, pg);
      check_close(pg, pc, what + " pack_moments");
      for (bool sync : {true, false}) {
        K::Tensor smc, svc, smg = gpu_garbage({C}), svg = gpu_garbage({C});
        if (sync) {
          be.cpu->synchronized_moments(pc, 2, smc, svc);
          be.gpu->synchronized_moments(pg, 2, smg, svg);
        } else {
          be.cpu->average_moments(pc, 2, smc, svc);
          be.gpu->average_moments(pg, 2, smg, svg);
        }
        check_close(smg, smc, what + (sync ? " synchronized" : " average") + "_moments mean");
        check_close(svg, svc, what + (sync ? " synchronized" : " average") + "_moments var");
      }
      K::Tensor movc = K::Tensor::from_vector({C}, std::vector<float>(C, 0.5f)), movg = on_gpu(movc);
      be.cpu->moving_average_update(movc, mc, 0.9f);
      be.gpu->moving_average_update(movg, mcg, 0.9f);
      check_close(movg, movc, what + " moving_average_update");
      K::Tensor sums_c, sums_g = gpu_garbage({K::batchnorm_grad_sums_size(C)}), rdgc = K::Tensor::zeros({C}),
                        rdbc = K::Tensor::zeros({C}), rdgg = gpu_garbage({C}), rdbg = gpu_garbage({C});
      be.cpu->batchnorm_backward_reduce(dy, x, mc, vc, eps, sums_c, rdgc, rdbc);
      be.gpu->batchnorm_backward_reduce(dyg, xg, mcg, vcg, eps, sums_g, rdgg, rdbg);
      check_close(sums_g, sums_c, what + " backward_reduce sums");
      check_close(rdgg, rdgc, what + " backward_reduce dgamma");
      check_close(rdbg, rdbc, what + " backward_reduce dbeta");
      K::Tensor dac, dag = gpu_garbage(c.s);
      be.cpu->batchnorm_backward_apply(dy, x, gam, mc, vc, eps, sums_c, dac);
      be.gpu->batchnorm_backward_apply(dyg, xg, gam_g, mcg, vcg, eps, on_gpu(sums_c), dag);
      check_close(dag, dac, what + " backward_apply");
    }
  }
}

// ============================================================================ losses

TEST_CASE("gpu backend: sparse categorical crossentropy (int32/int64/uint8 labels, logits or not) and its grad") {
  auto be = make_backends();
  std::uint32_t seed = 900;
  for (const K::Shape& ps : {K::Shape{6, 5}, K::Shape{64, 10}, K::Shape{4, 3, 7}, K::Shape{1, 1}, K::Shape{513, 100}}) {
    const std::int64_t C = ps.back(), N = ps[0], rows = K::shape_numel(ps) / C;
    auto labels32 = random_labels(static_cast<std::size_t>(rows), C, seed++);
    for (bool from_logits : {true, false}) {
      auto pred = from_logits ? random_tensor(ps, seed++, -3.f, 3.f) : random_tensor(ps, seed++, 0.05f, 1.f);
      auto predg = on_gpu(pred);
      for (K::DType dt : {K::DType::int32, K::DType::int64, K::DType::uint8}) {
        // rank-2 predictions: labels (N,) for int32/uint8 and (N, 1) for int64; rank 3: (N, T).
        K::Shape ls = ps.size() == 3 ? K::Shape{N, ps[1]} : (dt == K::DType::int64 ? K::Shape{N, 1} : K::Shape{N});
        auto labels = labels_as(labels32, dt, ls);
        auto labels_g = on_gpu(labels);
        std::string what = "sparse_cce pred " + shape_label(ps) + " labels " + K::dtype_name(dt) + " " +
                           shape_label(ls) + (from_logits ? " from_logits" : " probabilities");
        for (float scale : {0.25f, 1.f}) {
          K::Tensor lc, gc = K::Tensor::zeros(ps), lg = gpu_garbage({N}), gg = gpu_garbage(ps);
          be.cpu->sparse_categorical_crossentropy(pred, labels, from_logits, lc, gc, scale);
          be.gpu->sparse_categorical_crossentropy(predg, labels_g, from_logits, lg, gg, scale);
          check_close(lg, lc, what + " loss, scale " + std::to_string(scale));
          check_close(gg, gc, what + " grad, scale " + std::to_string(scale));
        }
        // Loss only: an undefined grad stays undefined.
        K::Tensor lc, no_gc, lg, no_gg;
        be.cpu->sparse_categorical_crossentropy(pred, labels, from_logits, lc, no_gc, 1.f);
        be.gpu->sparse_categorical_crossentropy(predg, labels_g, from_logits, lg, no_gg, 1.f);
        check_close(lg, lc, what + " loss only");
        CHECK(!no_gg.defined());
      }
    }
  }
  // Clipping: probability 0 for the true class.
  auto pred = K::Tensor::from_vector({2, 3}, Vec{0.f, 0.5f, 0.5f, 0.2f, 0.f, 0.8f});
  auto labels = K::Tensor::from_vector({2}, std::vector<std::int32_t>{0, 1});
  K::Tensor lc, gc = K::Tensor::zeros({2, 3}), lg, gg = gpu_garbage({2, 3});
  be.cpu->sparse_categorical_crossentropy(pred, labels, false, lc, gc, 1.f);
  be.gpu->sparse_categorical_crossentropy(on_gpu(pred), on_gpu(labels), false, lg, gg, 1.f);
  check_close(lg, lc, "sparse_cce clipped loss");
  check_close(gg, gc, "sparse_cce clipped grad");
}

TEST_CASE("gpu backend: categorical crossentropy (logits or not, soft targets) and its grad") {
  auto be = make_backends();
  std::uint32_t seed = 1000;
  for (const K::Shape& ps : {K::Shape{5, 4}, K::Shape{64, 10}, K::Shape{3, 2, 6}, K::Shape{257, 1000}}) {
    const std::int64_t N = ps[0];
    auto target = random_tensor(ps, seed++, 0.f, 1.f);
    auto tg = on_gpu(target);
    for (bool from_logits : {true, false}) {
      auto pred = from_logits ? random_tensor(ps, seed++, -3.f, 3.f) : random_tensor(ps, seed++, 0.05f, 1.f);
      auto predg = on_gpu(pred);
      std::string what = "cce " + shape_label(ps) + (from_logits ? " from_logits" : " probabilities");
      K::Tensor lc, gc = K::Tensor::zeros(ps), lg = gpu_garbage({N}), gg = gpu_garbage(ps);
      be.cpu->categorical_crossentropy(pred, target, from_logits, lc, gc, 0.5f);
      be.gpu->categorical_crossentropy(predg, tg, from_logits, lg, gg, 0.5f);
      check_close(lg, lc, what + " loss");
      check_close(gg, gc, what + " grad");
      K::Tensor l2c, n2c, l2g, n2g;
      be.cpu->categorical_crossentropy(pred, target, from_logits, l2c, n2c, 1.f);
      be.gpu->categorical_crossentropy(predg, tg, from_logits, l2g, n2g, 1.f);
      check_close(l2g, l2c, what + " loss only");
      CHECK(!n2g.defined());
    }
  }
  // Logits far apart (stability) and clipped probabilities.
  auto wide = random_tensor({8, 5}, 1010, -60.f, 60.f), t = random_tensor({8, 5}, 1011, 0.f, 1.f);
  K::Tensor lc, gc = K::Tensor::zeros({8, 5}), lg, gg = gpu_garbage({8, 5});
  be.cpu->categorical_crossentropy(wide, t, true, lc, gc, 1.f);
  be.gpu->categorical_crossentropy(on_gpu(wide), on_gpu(t), true, lg, gg, 1.f);
  check_close(lg, lc, "cce wide logits loss");
  check_close(gg, gc, "cce wide logits grad");
  auto pred = K::Tensor::from_vector({1, 3}, Vec{0.f, 0.5f, 0.5f});
  auto onehot = K::Tensor::from_vector({1, 3}, Vec{1.f, 0.f, 0.f});
  K::Tensor l3c, g3c = K::Tensor::zeros({1, 3}), l3g, g3g = gpu_garbage({1, 3});
  be.cpu->categorical_crossentropy(pred, onehot, false, l3c, g3c, 1.f);
  be.gpu->categorical_crossentropy(on_gpu(pred), on_gpu(onehot), false, l3g, g3g, 1.f);
  check_close(l3g, l3c, "cce clipped loss");
  check_close(g3g, g3c, "cce clipped grad");
}

TEST_CASE("gpu backend: binary crossentropy (logits or not) and its grad") {
  auto be = make_backends();
  struct Case {
    K::Shape pred, target;
  };
  std::uint32_t seed = 1100;
  for (const Case& c : {Case{{4, 3}, {4, 3}}, Case{{64, 1}, {64, 1}}, Case{{9}, {9, 1}}, Case{{9, 1}, {9}},
                        Case{{5, 2, 3}, {5, 2, 3}}, Case{{1000, 17}, {1000, 17}}}) {
    const std::int64_t N = c.pred[0];
    auto target = random_tensor(c.target, seed++, 0.f, 1.f);
    auto tg = on_gpu(target);
    for (bool from_logits : {true, false}) {
      auto pred = from_logits ? random_tensor(c.pred, seed++, -4.f, 4.f) : random_tensor(c.pred, seed++, 0.02f, 0.98f);
      auto predg = on_gpu(pred);
      std::string what = "bce pred " + shape_label(c.pred) + " target " + shape_label(c.target) +
                         (from_logits ? " from_logits" : " probabilities");
      K::Tensor lc, gc = K::Tensor::zeros(c.pred), lg = gpu_garbage({N}), gg = gpu_garbage(c.pred);
      be.cpu->binary_crossentropy(pred, target, from_logits, lc, gc, 2.f);
      be.gpu->binary_crossentropy(predg, tg, from_logits, lg, gg, 2.f);
      check_close(lg, lc, what + " loss");
      check_close(gg, gc, what + " grad");
      K::Tensor l2c, n2c, l2g, n2g;
      be.cpu->binary_crossentropy(pred, target, from_logits, l2c, n2c, 1.f);
      be.gpu->binary_crossentropy(predg, tg, from_logits, l2g, n2g, 1.f);
      check_close(l2g, l2c, what + " loss only");
      CHECK(!n2g.defined());
    }
  }
  // Extreme logits and probabilities of exactly 0 and 1 (clipped).
  auto logits = K::Tensor::from_vector({2, 3}, Vec{-90.f, 90.f, 0.f, 30.f, -30.f, 1e-3f});
  auto probs = K::Tensor::from_vector({2, 3}, Vec{0.f, 1.f, 0.5f, 1.f, 0.f, 1e-9f});
  auto t = K::Tensor::from_vector({2, 3}, Vec{1.f, 0.f, 1.f, 0.f, 1.f, 0.3f});
  for (bool from_logits : {true, false}) {
    const K::Tensor& p = from_logits ? logits : probs;
    K::Tensor lc, gc = K::Tensor::zeros({2, 3}), lg, gg = gpu_garbage({2, 3});
    be.cpu->binary_crossentropy(p, t, from_logits, lc, gc, 1.f);
    be.gpu->binary_crossentropy(on_gpu(p), on_gpu(t), from_logits, lg, gg, 1.f);
    check_close(lg, lc, std::string("bce extreme loss") + (from_logits ? " logits" : " probabilities"));
    check_close(gg, gc, std::string("bce extreme grad") + (from_logits ? " logits" : " probabilities"));
  }
}

TEST_CASE("gpu backend: mean squared error and its grad") {
  auto be = make_backends();
  struct Case {
    K::Shape pred, target;
  };
  std::uint32_t seed = 1200;
  for (const Case& c : {Case{{3, 2, 4}, {3, 2, 4}}, Case{{64, 1}, {64, 1}}, Case{{7}, {7, 1}}, Case{{1, 1}, {1, 1}},
                        Case{{2048, 33}, {2048, 33}}}) {
    const std::int64_t N = c.pred[0];
    auto pred = random_tensor(c.pred, seed++, -2.f, 2.f), target = random_tensor(c.target, seed++);
    std::string what = "mse pred " + shape_label(c.pred) + " target " + shape_label(c.target);
    K::Tensor lc, gc = K::Tensor::zeros(c.pred), lg = gpu_garbage({N}), gg = gpu_garbage(c.pred);
    be.cpu->mean_squared_error(pred, target, lc, gc, 0.1f);
    be.gpu->mean_squared_error(on_gpu(pred), on_gpu(target), lg, gg, 0.1f);
    check_close(lg, lc, what + " loss");
    check_close(gg, gc, what + " grad");
    K::Tensor l2c, n2c, l2g, n2g;
    be.cpu->mean_squared_error(pred, target, l2c, n2c, 1.f);
    be.gpu->mean_squared_error(on_gpu(pred), on_gpu(target), l2g, n2g, 1.f);
    check_close(l2g, l2c, what + " loss only");
    CHECK(!n2g.defined());
  }
}

TEST_CASE("gpu backend: Huber loss and its grad") {
  auto be = make_backends();
  std::uint32_t seed = 1250;
  for (K::Shape shape : {K::Shape{3, 2, 4}, K::Shape{64, 1}, K::Shape{2048, 33}}) {
    for (float delta : {1.0f, 0.25f}) {
      auto pred = random_tensor(shape, seed++, -3.f, 3.f), target = random_tensor(shape, seed++);
      std::string what = "huber " + shape_label(shape) + " delta " + std::to_string(delta);
      K::Tensor lc, gc = K::Tensor::zeros(shape), lg = gpu_garbage({shape[0]}), gg = gpu_garbage(shape);
      be.cpu->huber(pred, target, delta, lc, gc, 0.1f);
      be.gpu->huber(on_gpu(pred), on_gpu(target), delta, lg, gg, 0.1f);
      check_close(lg, lc, what + " loss");
      check_close(gg, gc, what + " grad");
    }
  }
}

TEST_CASE("gpu backend: every row_loss formula (losses and metric values) equals the CPU's, grads too") {
  auto be = make_backends();
  std::uint32_t seed = 1270;
  const std::vector<K::RowLoss> kinds = {K::RowLoss::mean_absolute_error,
                                         K::RowLoss::mean_absolute_percentage_error,
                                         K::RowLoss::mean_squared_logarithmic_error,
                                         K::RowLoss::log_cosh,
                                         K::RowLoss::poisson,
                                         K::RowLoss::hinge,
                                         K::RowLoss::squared_hinge,
                                         K::RowLoss::kl_divergence,
                                         K::RowLoss::binary_focal_crossentropy,
                                         K::RowLoss::equal,
                                         K::RowLoss::cosine_similarity,
                                         K::RowLoss::categorical_hinge,
                                         K::RowLoss::categorical_focal_crossentropy,
                                         K::RowLoss::categorical_generalized_cross_entropy,
                                         K::RowLoss::top_k_categorical_hit,
                                         K::RowLoss::pearson_correlation,
                                         K::RowLoss::concordance_correlation};
  for (K::Shape shape : {K::Shape{3, 2, 5}, K::Shape{64, 1}, K::Shape{300, 33}}) {
    for (K::RowLoss kind : kinds) {
      const K::RowLossParams params{.alpha = 0.3f, .gamma = 1.5f, .q = 0.7f, .k = 2, .apply_class_balancing = true};
      const std::int64_t N = shape[0], rows = K::Tensor(shape).numel() / shape.back();
      auto pred = random_tensor(shape, seed++, 0.05f, 0.95f), target = random_tensor(shape, seed++, 0.f, 1.f);
      if (kind == K::RowLoss::categorical_generalized_cross_entropy)
        target = K::Tensor::from_vector({rows}, random_labels(static_cast<std::size_t>(rows), shape.back(), seed++));
      const bool grads = kind != K::RowLoss::equal && kind != K::RowLoss::top_k_categorical_hit &&
                         kind != K::RowLoss::pearson_correlation && kind != K::RowLoss::concordance_correlation;
      std::string what = std::string("row_loss ") + std::to_string(static_cast<int>(kind)) + " " + shape_label(shape);
      K::Tensor lc, gc, lg = gpu_garbage({N}), gg;
      if (grads) {
        gc = K::Tensor::zeros(shape);
        gg = gpu_garbage(shape);
      }
      be.cpu->row_loss(kind, params, pred, target, lc, gc, 0.1f);
      be.gpu->row_loss(kind, params, on_gpu(pred), on_gpu(target), lg, gg, 0.1f);
      check_close(lg, lc, what + " loss");
      if (grads) check_close(gg, gc, what + " grad");
    }
  }
}

TEST_CASE("gpu backend: top-k accuracy equals the CPU's") {
  auto be = make_backends();
  for (K::Shape shape : {K::Shape{7, 10}, K::Shape{300, 1000}}) {
    auto pred = random_tensor(shape, 1300, -1.f, 1.f);
    K::Tensor labels({shape[0]}, K::DType::int32, K::Device{});
    for (std::int64_t i = 0; i < shape[0]; ++i)
      labels.data<std::int32_t>()[i] = static_cast<std::int32_t>((i * 7) % shape[1]);
    for (int k : {1, 5, 50}) {
      CAPTURE(k);
      CHECK(be.gpu->sparse_top_k_accuracy_sum(on_gpu(pred), on_gpu(labels), k) ==
            be.cpu->sparse_top_k_accuracy_sum(pred, labels, k));
    }
  }
}

// ============================================================================ metrics

TEST_CASE("gpu backend: the five metric sums") {
  auto be = make_backends();
  // Accuracy sums count whole examples (fractions of one for rank-3 predictions): any miscounted
  // example moves the sum by >= 1/T, far beyond the 1e-6 allowed for float vs double fractions.
  auto check_sum = [](double g, double c, double tol, const std::string& what) {
    double err = std::fabs(g - c) / std::max(1.0, std::fabs(c));
    CHECK_MESSAGE(err <= tol, what << ": gpu " << g << " cpu " << c << " rel_error " << err);
  };
  std::uint32_t seed = 1300;
  for (const K::Shape& ps :
       {K::Shape{200, 10}, K::Shape{1, 1}, K::Shape{4096, 3}, K::Shape{6, 4, 5}, K::Shape{33, 1000}}) {
    const std::int64_t C = ps.back(), N = ps[0], rows = K::shape_numel(ps) / C;
    const std::string sl = shape_label(ps);
    auto pred = random_tensor(ps, seed++);
    auto predg = on_gpu(pred);
    auto labels32 = random_labels(static_cast<std::size_t>(rows), C, seed++);
    for (K::DType dt : {K::DType::int32, K::DType::int64, K::DType::uint8}) {
      K::Shape ls = ps.size() == 3 ? K::Shape{N, ps[1]} : (dt == K::DType::uint8 ? K::Shape{N, 1} : K::Shape{N});
      auto labels = labels_as(labels32, dt, ls);
      check_sum(be.gpu->sparse_categorical_accuracy_sum(predg, on_gpu(labels)),
                be.cpu->sparse_categorical_accuracy_sum(pred, labels), 1e-6,
                "sparse_categorical_accuracy " + sl + " " + K::dtype_name(dt));
    }
    Vec onehot(static_cast<std::size_t>(K::shape_numel(ps)), 0.f);
    for (std::int64_t r = 0; r < rows; ++r) onehot[static_cast<std::size_t>(r * C + labels32[r])] = 1.f;
    auto target = K::Tensor::from_vector(ps, onehot);
    check_sum(be.gpu->categorical_accuracy_sum(predg, on_gpu(target)), be.cpu->categorical_accuracy_sum(pred, target),
              1e-6, "categorical_accuracy " + sl);

    auto probs = random_tensor(ps, seed++, 0.f, 1.f);
    Vec bits = random_vec(static_cast<std::size_t>(K::shape_numel(ps)), seed++, 0.f, 1.f);
    for (auto& b : bits) b = b < 0.5f ? 0.f : 1.f;
    auto bt = K::Tensor::from_vector(ps, bits);
    for (float threshold : {0.5f, 0.3f})
      check_sum(be.gpu->binary_accuracy_sum(on_gpu(probs), on_gpu(bt), threshold),
                be.cpu->binary_accuracy_sum(probs, bt, threshold), 1e-6,
                "binary_accuracy " + sl + " threshold " + std::to_string(threshold));

    auto other = random_tensor(ps, seed++);
    check_sum(be.gpu->absolute_error_sum(predg, on_gpu(other)), be.cpu->absolute_error_sum(pred, other), kOpTol,
              "absolute_error_sum " + sl);
    check_sum(be.gpu->sum(predg), be.cpu->sum(pred), kOpTol, "sum " + sl);
  }
  // Ties pick the first maximum on both.
  auto tied = K::Tensor::from_vector({4, 3}, Vec{0.1f, 0.7f, 0.2f, 0.5f, 0.5f, 0.f, 0.3f, 0.3f, 0.4f, 1.f, 1.f, 1.f});
  auto tl = K::Tensor::from_vector({4}, std::vector<std::int32_t>{1, 1, 2, 0});
  double tie_cpu = be.cpu->sparse_categorical_accuracy_sum(tied, tl);
  CHECK(tie_cpu == 3.0);  // rows 1 and 4 tie; only row 4's label is the first maximum
  CHECK(be.gpu->sparse_categorical_accuracy_sum(on_gpu(tied), on_gpu(tl)) == tie_cpu);
  // A large sum, reduced over many blocks.
  auto big = random_tensor({1 << 22}, 1399, 0.f, 1.f);
  check_sum(be.gpu->sum(on_gpu(big)), be.cpu->sum(big), kOpTol, "sum of 4M values");
}

// ============================================================================ optimizers

TEST_CASE("gpu backend: sgd (plain, momentum, nesterov), adam and rmsprop over several steps") {
  auto be = make_backends();
  const int steps = 5;
  // Elementwise float updates: the two backends may differ by a few ulps per step (FMA contraction).
  const double tol = 1e-5;
  std::uint32_t seed = 1400;
  for (std::int64_t n : {std::int64_t(1), std::int64_t(1000), std::int64_t(4097), std::int64_t(1) << 20}) {
    const std::string nl = " n=" + std::to_string(n);
    auto w0 = random_tensor({n}, seed++);
    std::vector<K::Tensor> grads;
    for (int s = 0; s < steps; ++s) grads.push_back(random_tensor({n}, seed++));

    for (float momentum : {0.f, 0.9f})
      for (bool nesterov : {false, true}) {
        if (momentum == 0.f && nesterov) continue;
        std::string what =
            std::string("sgd momentum ") + (momentum == 0.f ? "0" : "0.9") + (nesterov ? " nesterov" : "") + nl;
        K::Tensor wc = w0.clone(), wg = on_gpu(w0);
        K::Tensor vc = momentum == 0.f ? K::Tensor() : K::Tensor::zeros({n});
        K::Tensor vg = momentum == 0.f ? K::Tensor() : K::Tensor::zeros({n}, K::DType::float32, gpu());
        for (int s = 0; s < steps; ++s) {
          be.cpu->sgd_update(wc, grads[s], vc, 0.1f, momentum, nesterov);
          be.gpu->sgd_update(wg, on_gpu(grads[s]), vg, 0.1f, momentum, nesterov);
          check_close(wg, wc, what + " w after step " + std::to_string(s + 1), tol);
          if (momentum != 0.f) check_close(vg, vc, what + " velocity after step " + std::to_string(s + 1), tol);
        }
      }

    {
      const float lr = 1e-2f, b1 = 0.9f, b2 = 0.999f, eps = 1e-7f;
      K::Tensor wc = w0.clone(), wg = on_gpu(w0);
      K::Tensor mc = K::Tensor::zeros({n}), vc = K::Tensor::zeros({n});
      K::Tensor mg = K::Tensor::zeros({n}, K::DType::float32, gpu()),
                vg = K::Tensor::zeros({n}, K::DType::float32, gpu());
      for (int s = 0; s < steps; ++s) {
        const int t = s + 1;
        const float lr_t = lr * std::sqrt(1.f - std::pow(b2, float(t))) / (1.f - std::pow(b1, float(t)));
        be.cpu->adam_update(wc, grads[s], mc, vc, lr_t, b1, b2, eps);
        be.gpu->adam_update(wg, on_gpu(grads[s]), mg, vg, lr_t, b1, b2, eps);
        check_close(wg, wc, "adam w after step " + std::to_string(t) + nl, tol);
        check_close(mg, mc, "adam m after step " + std::to_string(t) + nl, tol);
        check_close(vg, vc, "adam v after step " + std::to_string(t) + nl, tol);
      }
    }
    {
      // Nadam with the scalars its optimizer passes (u_t = 0.9(1 − 0.5·0.96^t), running product).
      K::Tensor wc = w0.clone(), wg = on_gpu(w0);
      K::Tensor mc = K::Tensor::zeros({n}), vc = K::Tensor::zeros({n});
      K::Tensor mg = K::Tensor::zeros({n}, K::DType::float32, gpu()),
                vg = K::Tensor::zeros({n}, K::DType::float32, gpu());
      float u_product = 1.f;
      for (int s = 0; s < steps; ++s) {
        const int t = s + 1;
        const float u = 0.9f * (1.f - 0.5f * std::pow(0.96f, float(t)));
        const float u_next = 0.9f * (1.f - 0.5f * std::pow(0.96f, float(t + 1)));
        u_product *= u;
        const float b2_power = std::pow(0.999f, float(t));
        be.cpu->nadam_update(wc, grads[s], mc, vc, 1e-2f, 0.9f, 0.999f, 1e-7f, u, u_next, u_product, b2_power);
        be.gpu->nadam_update(wg, on_gpu(grads[s]), mg, vg, 1e-2f, 0.9f, 0.999f, 1e-7f, u, u_next, u_product, b2_power);
        check_close(wg, wc, "nadam w after step " + std::to_string(t) + nl, tol);
        check_close(mg, mc, "nadam m after step " + std::to_string(t) + nl, tol);
        check_close(vg, vc, "nadam v after step " + std::to_string(t) + nl, tol);
      }
    }
    {
      K::Tensor wc = w0.clone(), wg = on_gpu(w0);
      K::Tensor vc = K::Tensor::zeros({n}), vg = K::Tensor::zeros({n}, K::DType::float32, gpu());
      for (int s = 0; s < steps; ++s) {
        be.cpu->rmsprop_update(wc, grads[s], vc, 1e-2f, 0.9f, 1e-7f);
        be.gpu->rmsprop_update(wg, on_gpu(grads[s]), vg, 1e-2f, 0.9f, 1e-7f);
        check_close(wg, wc, "rmsprop w after step " + std::to_string(s + 1) + nl, tol);
        check_close(vg, vc, "rmsprop v after step " + std::to_string(s + 1) + nl, tol);
      }
    }
  }
}

TEST_CASE("gpu backend: optimizer_update, every rule, agrees with the CPU over several steps") {
  auto be = make_backends();
  const int steps = 4;
  const double tol = 1e-5;  // powf (Ftrl's other powers) may differ by an ulp between the two
  std::uint32_t seed = 1450;
  // Rules with the scalars their optimizers pass (lamb_direction's third slot is its output).
  const std::vector<K::UpdateParams> rules = {
      {.rule = K::UpdateRule::adamax,
       .lr = 0.02f,
       .beta_1 = 0.9f,
       .beta_2 = 0.999f,
       .epsilon = 1e-7f,
       .one_minus_beta_1_power = 0.1f},
      {.rule = K::UpdateRule::adadelta, .lr = 1.f, .beta_1 = 0.95f, .epsilon = 1e-7f},
      {.rule = K::UpdateRule::ftrl, .lr = 0.1f, .l1 = 0.01f, .l2 = 0.02f, .l2_shrinkage = 0.01f, .lr_power = -0.5f},
      {.rule = K::UpdateRule::ftrl, .lr = 0.1f, .lr_power = -0.3f},
      {.rule = K::UpdateRule::lion, .lr = 0.01f, .beta_1 = 0.9f, .beta_2 = 0.99f},
      {.rule = K::UpdateRule::lamb_direction,
       .beta_1 = 0.9f,
       .beta_2 = 0.999f,
       .epsilon = 1e-7f,
       .one_minus_beta_1_power = 0.1f,
       .one_minus_beta_2_power = 0.001f},
      {.rule = K::UpdateRule::schedule_free_adamw,
       .lr = 0.01f,
       .beta_1 = 0.9f,
       .beta_2 = 0.999f,
       .epsilon = 1e-8f,
       .one_minus_beta_2_power = 0.001f,
       .value = 0.5f},
      {.rule = K::UpdateRule::clip_value, .value = 0.3f},
      {.rule = K::UpdateRule::accumulate_gradient},
      {.rule = K::UpdateRule::average_accumulated, .value = 3.f},
      {.rule = K::UpdateRule::divide, .value = 8.f},
      {.rule = K::UpdateRule::moving_average, .beta_1 = 0.99f},
  };
  for (std::int64_t n : {std::int64_t(1), std::int64_t(4097)}) {
    for (const K::UpdateParams& p : rules) {
      const std::string what = "rule " + std::to_string(static_cast<int>(p.rule)) + " n=" + std::to_string(n);
      K::Tensor wc = random_tensor({n}, seed++), wg = on_gpu(wc);
      std::vector<K::Tensor> sc, sg;
      for (int k = 0; k < 3; ++k) {  // slots start positive (Ftrl's accumulator must)
        sc.push_back(random_tensor({n}, seed++, 0.1f, 1.f));
        sg.push_back(on_gpu(sc.back()));
      }
      for (int s = 0; s < steps; ++s) {
        auto g = random_tensor({n}, seed++);
        be.cpu->optimizer_update(p, wc, g, {&sc[0], &sc[1], &sc[2]});
        be.gpu->optimizer_update(p, wg, on_gpu(g), {&sg[0], &sg[1], &sg[2]});
        check_close(wg, wc, what + " w after step " + std::to_string(s + 1), tol);
        for (int k = 0; k < 3; ++k) check_close(sg[k], sc[k], what + " slot " + std::to_string(k), tol);
      }
    }
  }
}

TEST_CASE("gpu backend: all_finite (LossScaleOptimizer's check) agrees with the CPU, scaled weight penalty too") {
  auto be = make_backends();
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (std::int64_t n : {std::int64_t(1), std::int64_t(4097), std::int64_t(1) << 20}) {
    for (float bad : {0.f, inf, -inf, nan}) {
      auto a = random_tensor({n}, 1500), b = random_tensor({3, 7}, 1501);
      if (bad != 0.f) a.data<float>()[n - 1] = bad;  // the last element: every block must look
      const std::string what = "n=" + std::to_string(n) + " bad=" + std::to_string(bad);
      CHECK_MESSAGE(be.gpu->all_finite({on_gpu(a), on_gpu(b)}) == be.cpu->all_finite({a, b}), what);
      CHECK_MESSAGE(be.gpu->all_finite({on_gpu(a), on_gpu(b)}) == (bad == 0.f), what);
    }
  }
  CHECK(be.gpu->all_finite({}));
  auto w = random_tensor({1000}, 1502), g0 = random_tensor({1000}, 1503);
  K::Tensor gc = g0.clone(), gg = on_gpu(g0);
  be.cpu->weight_penalty(w, 0.01f, 0.02f, gc, 1024.f);
  be.gpu->weight_penalty(on_gpu(w), 0.01f, 0.02f, gg, 1024.f);
  check_close(gg, gc, "weight_penalty gradient times 1024", 1e-6);
}

TEST_CASE("gpu backend: weight_penalties (all at once, read after later work) equal the CPU's one by one") {
  auto be = make_backends();
  // L1 only, L2 only, both, a penalty without a gradient, and a weight larger than one
  // reduction block. Both sum in double, in different orders: equal to ~1e-13.
  const std::vector<std::tuple<std::int64_t, float, float, bool>> specs = {
      {1000, 0.01f, 0.f, true}, {37, 0.f, 0.02f, true}, {300000, 1e-3f, 5e-4f, true}, {64, 0.f, 1e-4f, false}};
  std::vector<K::Tensor> wc, gc, wg, gg;
  std::uint32_t seed = 1510;
  for (auto [n, l1, l2, with_grad] : specs) {
    wc.push_back(random_tensor({n}, seed++));
    gc.push_back(with_grad ? random_tensor({n}, seed++) : K::Tensor());
    wg.push_back(on_gpu(wc.back()));
    gg.push_back(with_grad ? on_gpu(gc.back()) : K::Tensor());
  }
  double expected = 0.0;
  std::vector<K::Backend::PenaltyTerm> terms;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    auto [n, l1, l2, with_grad] = specs[i];
    expected += be.cpu->weight_penalty(wc[i], l1, l2, gc[i], 128.f);
    terms.push_back({&wg[i], l1, l2, with_grad ? &gg[i] : nullptr});
  }
  auto total = be.gpu->weight_penalties(terms, 128.f);
  // Work queued after the sums (an update of the weights) must not change what they read.
  for (K::Tensor& w : wg) {
    K::Tensor velocity = K::Tensor::zeros(w.shape(), K::DType::float32, gpu());
    be.gpu->sgd_update(w, w, velocity, 0.5f, 0.f, false);
  }
  const double got = total();
  CHECK_MESSAGE(std::fabs(got - expected) <= 1e-10 * std::max(1.0, std::fabs(expected)),
                "weight_penalties " << got << " vs the CPU's " << expected);
  for (std::size_t i = 0; i < specs.size(); ++i)
    if (gc[i].defined()) check_close(gg[i], gc[i], "weight_penalties gradient " + std::to_string(i), 1e-6);
  // A reader of an older batch of penalties after a newer one was queued is refused.
  auto older = be.gpu->weight_penalties(terms, 1.f);
  auto newer = be.gpu->weight_penalties({terms.front()}, 1.f);
  CHECK_THROWS_AS(older(), K::StateError);
  CHECK(newer() > 0.0);
  CHECK(be.gpu->weight_penalties({}, 1.f)() == 0.0);
}

TEST_CASE("gpu backend: confusion counts (explicit and evenly spaced thresholds, a column) equal the CPU's") {
  auto be = make_backends();
  for (K::Shape shape : {K::Shape{7, 3}, K::Shape{4000, 5}}) {
    // A coarse grid (ties, values at thresholds) below 0 and above 1 too.
    auto pred = random_tensor(shape, 1400, -0.2f, 1.2f);
    for (std::int64_t i = 0; i < pred.numel(); i += 3)
      pred.data<float>()[i] = std::round(pred.data<float>()[i] * 10) / 10;
    auto target = random_tensor(shape, 1401, 0.f, 1.f);
    for (std::int64_t i = 0; i < target.numel(); ++i)
      target.data<float>()[i] = target.data<float>()[i] > 0.6f ? 1.f : 0.f;
    const std::vector<float> thresholds{0.5f, 0.f, 0.3f, 1.f, 0.5f};
    CHECK(be.gpu->confusion_counts(on_gpu(pred), on_gpu(target), thresholds, 1, 0) ==
          be.cpu->confusion_counts(pred, target, thresholds, 1, 0));
    CHECK(be.gpu->confusion_counts(on_gpu(pred), on_gpu(target), {0.5f}, shape[1], 2) ==
          be.cpu->confusion_counts(pred, target, {0.5f}, shape[1], 2));
    for (int t : {2, 200}) {
      CAPTURE(t);
      CHECK(be.gpu->even_confusion_counts(on_gpu(pred), on_gpu(target), t) ==
            be.cpu->even_confusion_counts(pred, target, t));
    }
  }
  CHECK_THROWS_AS(be.gpu->even_confusion_counts(random_tensor({4}, 1), on_gpu(random_tensor({4}, 2)), 200), K::Error);
}

// ============================================================================ bad input

TEST_CASE("gpu backend: host tensors, out-of-range labels and bad shapes raise kerascpp::Error") {
  auto be = make_backends();
  auto x = random_tensor({4, 8}, 1), w = random_tensor({8, 3}, 2);
  auto xg = on_gpu(x), wg = on_gpu(w);

  SUBCASE("a CPU tensor passed to the GPU backend") {
    K::Tensor y;
    std::string msg = error_of([&] { be.gpu->dense_forward(x, wg, K::Tensor(), K::ActivationKind::relu, y); });
    CHECK_MESSAGE(!msg.empty(), "dense_forward accepted a host x");
    CHECK(contains(msg, "cpu:0"));
    MESSAGE("host input: " << msg);
    CHECK_THROWS_AS(be.gpu->matmul(xg, false, w, false, y, false), K::Error);
    K::Tensor host_out = K::Tensor::zeros({4, 3});
    CHECK_THROWS_AS(be.gpu->matmul(xg, false, wg, false, host_out, false), K::Error);
    CHECK_THROWS_AS(be.gpu->add_inplace(host_out, on_gpu(host_out)), K::Error);
    auto pred = random_tensor({3, 10}, 3);
    auto labels = K::Tensor::from_vector({3}, std::vector<std::int32_t>{1, 2, 3});
    K::Tensor loss, grad;
    CHECK_THROWS_AS(be.gpu->sparse_categorical_crossentropy(on_gpu(pred), labels, true, loss, grad, 1.f), K::Error);
    CHECK_THROWS_AS(be.gpu->sum(x), K::Error);
  }

  SUBCASE("out-of-range labels") {
    auto pred = random_tensor({3, 10}, 4, 0.1f, 1.f);
    auto pg = on_gpu(pred);
    struct Bad {
      K::Tensor labels;
      std::string what;  // not a char*: doctest prints those as pointers
    };
    std::vector<Bad> bad = {
        {K::Tensor::from_vector({3}, std::vector<std::int32_t>{1, 12, 3}), "int32 label 12 of 10 classes"},
        {K::Tensor::from_vector({3}, std::vector<std::int32_t>{1, -1, 3}), "int32 label -1"},
        {K::Tensor::from_vector({3}, std::vector<std::uint8_t>{200, 1, 3}), "uint8 label 200"},
        {K::Tensor::from_vector({3, 1}, std::vector<std::int64_t>{0, 1, std::int64_t(1) << 40}), "int64 label 2^40"},
        {K::Tensor::from_vector({3}, std::vector<std::int32_t>{1, 2, 10}), "int32 label 10 (= classes)"},
    };
    for (auto& b : bad) {
      CAPTURE(b.what);
      auto lg = on_gpu(b.labels);
      K::Tensor loss, grad = gpu_garbage({3, 10}), no_grad;
      std::string msg = error_of([&] { be.gpu->sparse_categorical_crossentropy(pg, lg, false, loss, grad, 1.f); });
      CHECK_MESSAGE(!msg.empty(), b.what << ": no kerascpp::Error from sparse_categorical_crossentropy");
      MESSAGE(b.what << ": " << msg);
      CHECK_MESSAGE(
          !error_of([&] { be.gpu->sparse_categorical_crossentropy(pg, lg, true, loss, no_grad, 1.f); }).empty(),
          b.what << ": no kerascpp::Error from the loss-only call");
      CHECK_MESSAGE(!error_of([&] { be.gpu->sparse_categorical_accuracy_sum(pg, lg); }).empty(),
                    b.what << ": no kerascpp::Error from sparse_categorical_accuracy_sum");
    }
    // Float labels are refused, too.
    K::Tensor loss, grad;
    CHECK_THROWS_AS(be.gpu->sparse_categorical_crossentropy(pg, on_gpu(K::Tensor::from_vector({3}, Vec{1, 2, 3})),
                                                            false, loss, grad, 1.f),
                    K::Error);
    // After the errors the backend still gives right answers (no sticky error state).
    auto good = K::Tensor::from_vector({3}, std::vector<std::int32_t>{1, 9, 0});
    K::Tensor lc, gc = K::Tensor::zeros({3, 10}), lg, gg = gpu_garbage({3, 10});
    be.cpu->sparse_categorical_crossentropy(pred, good, false, lc, gc, 1.f);
    REQUIRE_NOTHROW(be.gpu->sparse_categorical_crossentropy(pg, on_gpu(good), false, lg, gg, 1.f));
    check_close(lg, lc, "sparse_cce after errors, loss");
    check_close(gg, gc, "sparse_cce after errors, grad");
    CHECK(be.gpu->sparse_categorical_accuracy_sum(pg, on_gpu(good)) ==
          be.cpu->sparse_categorical_accuracy_sum(pred, good));
  }

  SUBCASE("mismatched shapes and dtypes") {
    K::Tensor y;
    CHECK_THROWS_AS(
        be.gpu->dense_forward(xg, on_gpu(random_tensor({7, 3}, 5)), K::Tensor(), K::ActivationKind::relu, y), K::Error);
    K::Tensor bad_y = gpu_garbage({4, 4});
    CHECK_THROWS_AS(be.gpu->dense_forward(xg, wg, K::Tensor(), K::ActivationKind::linear, bad_y), K::Error);
    K::Tensor ints = K::Tensor::zeros({4, 8}, K::DType::int32, gpu()), out;
    CHECK_THROWS_AS(be.gpu->dense_forward(ints, wg, K::Tensor(), K::ActivationKind::linear, out), K::Error);
    K::Tensor m = K::Tensor::zeros({9}, K::DType::float32, gpu()), v = K::Tensor::zeros({8}, K::DType::float32, gpu());
    K::Tensor wv = gpu_garbage({8});
    CHECK_THROWS_AS(be.gpu->adam_update(wv, on_gpu(random_tensor({8}, 6)), m, v, 1e-3f, 0.9f, 0.999f, 1e-7f), K::Error);
  }

  SUBCASE("a GPU that does not exist") {
    CHECK_THROWS_AS(K::detail::make_gpu_backend(gpu_count()), K::Error);
    CHECK_THROWS_AS(K::detail::make_gpu_backend(-1), K::Error);
  }
}

TEST_CASE("gpu backend: the last GPU computes what gpu:0 does and refuses gpu:0 tensors") {
  const int n = gpu_count();
  if (n < 2) {
    MESSAGE("only " << n << " GPU visible: the test of a second GPU's backend needs >= 2, skipped");
    return;
  }
  const int last = n - 1;
  auto be = make_backends(last);
  CHECK(be.gpu->device() == gpu(last));
  ConvCase cc{2, 8, 8, 3, 5, 3, 3, 2, 2, true};
  auto g = cc.geometry();
  auto x = random_tensor({2, 8, 8, 3}, 1), w = random_tensor({3, 3, 3, 5}, 2), b = random_tensor({5}, 3);
  K::Tensor yc, yg;
  be.cpu->conv2d_forward(x, w, b, g, K::ActivationKind::relu, yc);
  be.gpu->conv2d_forward(on_gpu(x, last), on_gpu(w, last), on_gpu(b, last), g, K::ActivationKind::relu, yg);
  check_close(yg, yc, "conv on gpu:" + std::to_string(last), kOpTol, gpu(last));
  auto pred = random_tensor({16, 10}, 4);
  auto labels = labels_as(random_labels(16, 10, 5), K::DType::int64, {16});
  K::Tensor lc, gc = K::Tensor::zeros({16, 10}), lg, gg = gpu_garbage({16, 10}, last);
  be.cpu->sparse_categorical_crossentropy(pred, labels, true, lc, gc, 1.f);
  be.gpu->sparse_categorical_crossentropy(on_gpu(pred, last), on_gpu(labels, last), true, lg, gg, 1.f);
  check_close(lg, lc, "sparse_cce on the last GPU", kOpTol, gpu(last));
  check_close(gg, gc, "sparse_cce grad on the last GPU", kOpTol, gpu(last));
  K::Tensor y;
  CHECK_THROWS_AS(be.gpu->dense_forward(on_gpu(random_tensor({2, 4}, 6), 0), on_gpu(random_tensor({4, 2}, 7), last),
                                        K::Tensor(), K::ActivationKind::linear, y),
                  K::Error);
}

// ---- Transformer-path ops (LayerNormalization, Softmax with an axis, Embedding) ----

TEST_CASE("gpu backend: layer_norm forward/backward, with and without gamma/beta") {
  auto be = make_backends();
  std::uint32_t seed = 1400;
  for (const K::Shape& s : {K::Shape{5, 7}, K::Shape{2, 3, 64}, K::Shape{130, 513}, K::Shape{1, 1}}) {
    const std::int64_t C = s.back();
    auto x = random_tensor(s, seed++, -2.f, 3.f), dy = random_tensor(s, seed++);
    auto gamma = random_tensor({C}, seed++, 0.5f, 1.5f), beta = random_tensor({C}, seed++);
    for (bool affine : {true, false}) {
      const std::string what = "layer_norm " + shape_label(s) + (affine ? " affine" : " plain");
      K::Tensor g = affine ? gamma : K::Tensor(), b = affine ? beta : K::Tensor();
      K::Tensor yc, mc, rc, yg, mg, rg;
      be.cpu->layer_norm_forward(x, g, b, 1e-3f, yc, mc, rc);
      be.gpu->layer_norm_forward(on_gpu(x), on_gpu(g), on_gpu(b), 1e-3f, yg, mg, rg);
      check_close(yg, yc, what + " y");
      check_close(mg, mc, what + " mean");
      check_close(rg, rc, what + " rstd");
      K::Tensor dxc, dgc({C}), dbc({C}), dxg, dgg = gpu_garbage({C}), dbg = gpu_garbage({C});
      be.cpu->layer_norm_backward(dy, x, g, mc, rc, dxc, dgc, dbc);
      be.gpu->layer_norm_backward(on_gpu(dy), on_gpu(x), on_gpu(g), on_gpu(mc), on_gpu(rc), dxg, dgg, dbg);
      check_close(dxg, dxc, what + " dx");
      check_close(dgg, dgc, what + " dgamma");
      check_close(dbg, dbc, what + " dbeta");
    }
  }
}

TEST_CASE("gpu backend: softmax over every axis, forward and backward") {
  auto be = make_backends();
  std::uint32_t seed = 1500;
  for (const K::Shape& s : {K::Shape{2, 3, 5}, K::Shape{4, 8, 8, 3}, K::Shape{3, 1}}) {
    auto x = random_tensor(s, seed++, -3.f, 3.f), dy = random_tensor(s, seed++);
    for (int axis = -static_cast<int>(s.size()); axis < static_cast<int>(s.size()); ++axis) {
      const std::string what = "softmax " + shape_label(s) + " axis " + std::to_string(axis);
      K::Tensor yc, yg, dxc, dxg = gpu_garbage(s);
      be.cpu->softmax_axis_forward(x, axis, yc);
      be.gpu->softmax_axis_forward(on_gpu(x), axis, yg);
      check_close(yg, yc, what + " forward");
      be.cpu->softmax_axis_backward(yc, dy, axis, dxc);
      be.gpu->softmax_axis_backward(on_gpu(yc), on_gpu(dy), axis, dxg);
      check_close(dxg, dxc, what + " backward");
    }
  }
}

TEST_CASE("gpu backend: gather_rows and scatter_add_rows equal the CPU's bit for bit; bad ids raise") {
  auto be = make_backends();
  const std::int64_t V = 50, D = 96;
  auto table = random_tensor({V, D}, 1600);
  auto labels = random_labels(4 * 33, V, 1601);
  auto dy = random_tensor({4, 33, D}, 1602);
  for (auto dtype : {K::DType::int32, K::DType::int64, K::DType::uint8}) {
    K::Tensor ids = labels_as(labels, dtype, {4, 33});
    K::Tensor outc, maskc(ids.shape(), K::DType::uint8), outg, maskg(ids.shape(), K::DType::uint8, gpu());
    be.cpu->gather_rows(table, ids, outc, maskc);
    be.gpu->gather_rows(on_gpu(table), on_gpu(ids), outg, maskg);
    CHECK(bit_equal(outg, outc));
    CHECK(bit_equal(maskg, maskc));
    K::Tensor dtc({V, D}), dtg = gpu_garbage({V, D});
    be.cpu->scatter_add_rows(ids, dy, dtc, false);
    be.gpu->scatter_add_rows(on_gpu(ids), on_gpu(dy), dtg, false);
    CHECK(bit_equal(dtg, dtc));  // same order of additions per element
    be.cpu->scatter_add_rows(ids, dy, dtc, true);
    be.gpu->scatter_add_rows(on_gpu(ids), on_gpu(dy), dtg, true);
    CHECK(bit_equal(dtg, dtc));
  }
  K::Tensor bad = on_gpu(K::Tensor::from_vector({3}, std::vector<std::int32_t>{1, 50, 2})), out, mask;
  const std::string msg = error_of([&] { be.gpu->gather_rows(on_gpu(table), bad, out, mask); });
  CHECK(contains(msg, "index 50"));
  CHECK(contains(msg, "position 1"));
  K::Tensor dt = gpu_garbage({V, D});
  CHECK_THROWS_AS(be.gpu->scatter_add_rows(bad, on_gpu(random_tensor({3, D}, 1603)), dt, false), K::ValueError);
}

TEST_CASE("gpu backend: unique_row_sums equals the CPU's bit for bit (repeats); bad ids raise") {
  auto be = make_backends();
  const std::int64_t V = 50, D = 96;
  auto labels = random_labels(4 * 33, V, 1650);  // 132 ids over 50 rows: many repeats
  auto dy = random_tensor({4, 33, D}, 1651);
  for (auto dtype : {K::DType::int32, K::DType::int64, K::DType::uint8}) {
    K::Tensor ids = labels_as(labels, dtype, {4, 33});
    K::Tensor idc, sc, idg, sg;
    be.cpu->unique_row_sums(ids, dy, V, idc, sc);
    be.gpu->unique_row_sums(on_gpu(ids), on_gpu(dy), V, idg, sg);
    CHECK(bit_equal(idg, idc));
    CHECK(bit_equal(sg, sc));  // same order of additions per element
  }
  K::Tensor bad = on_gpu(K::Tensor::from_vector({3}, std::vector<std::int32_t>{1, 50, 2})), id, sums;
  CHECK_THROWS_AS(be.gpu->unique_row_sums(bad, on_gpu(random_tensor({3, D}, 1652)), V, id, sums), K::ValueError);
}

TEST_CASE("gpu backend: batched_matmul, transpose and masked_fill (attention) equal the CPU's") {
  auto be = make_backends();
  std::uint32_t seed = 1700;
  const std::int64_t B = 6, M = 17, Kd = 33, N = 9;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (bool acc : {false, true}) {
        const std::string what = std::string("batched_matmul") + (ta ? " Aᵀ" : " A") + (tb ? " Bᵀ" : " B") +
                                 (acc ? " accumulate" : " overwrite");
        auto a = random_tensor(ta ? K::Shape{B, Kd, M} : K::Shape{B, M, Kd}, seed++);
        auto b = random_tensor(tb ? K::Shape{B, N, Kd} : K::Shape{B, Kd, N}, seed++);
        auto c0 = random_tensor({B, M, N}, seed++);
        K::Tensor cc = c0.clone(), cg = acc ? on_gpu(c0) : gpu_garbage({B, M, N});
        be.cpu->batched_matmul(a, ta, b, tb, cc, acc);
        be.gpu->batched_matmul(on_gpu(a), ta, on_gpu(b), tb, cg, acc);
        check_close(cg, cc, what);
      }
  auto x = random_tensor({2, 3, 4, 5}, seed++);
  for (const std::vector<int>& perm : {std::vector<int>{0, 2, 1, 3}, std::vector<int>{3, 0, 2, 1},
                                       std::vector<int>{1, 0, 2, 3}, std::vector<int>{0, 1, 2, 3}}) {
    K::Tensor yc, yg;
    be.cpu->transpose(x, perm, yc);
    be.gpu->transpose(on_gpu(x), perm, yg);
    CHECK(bit_equal(yg, yc));
  }
  auto scores = random_tensor({2, 4, 3, 5}, seed++);
  std::vector<std::uint8_t> mv(2 * 3 * 5);
  for (std::size_t i = 0; i < mv.size(); ++i) mv[i] = static_cast<std::uint8_t>((i * 7 + 3) % 4 != 0);
  K::Tensor mask = K::Tensor::from_vector({2, 3, 5}, mv);
  K::Tensor sc = scores.clone(), sg = on_gpu(scores);
  be.cpu->masked_fill(sc, mask, -1e9f);
  be.gpu->masked_fill(sg, on_gpu(mask), -1e9f);
  CHECK(bit_equal(sg, sc));
}

TEST_CASE("gpu backend: mask_and and attention_mask equal the CPU's") {
  auto be = make_backends();
  const std::int64_t B = 3, T = 5, S = 7;
  auto bits = [](std::size_t n, std::size_t salt) {
    std::vector<std::uint8_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>((i * 7 + salt) % 3 != 0);
    return v;
  };
  K::Tensor q = K::Tensor::from_vector({B, T}, bits(B * T, 1)), v = K::Tensor::from_vector({B, S}, bits(B * S, 2)),
            e = K::Tensor::from_vector({B, T, S}, bits(B * T * S, 3)),
            v2 = K::Tensor::from_vector({B, S}, bits(B * S, 4));
  K::Tensor ac, ag;
  be.cpu->mask_and(v, v2, ac);
  be.gpu->mask_and(on_gpu(v), on_gpu(v2), ag);
  CHECK(bit_equal(ag, ac));
  for (bool causal : {false, true}) {
    K::Tensor oc({B, T, S}, K::DType::uint8), og({B, T, S}, K::DType::uint8, gpu());
    be.cpu->attention_mask(q, v, e, causal, oc);
    be.gpu->attention_mask(on_gpu(q), on_gpu(v), on_gpu(e), causal, og);
    CHECK(bit_equal(og, oc));
    be.cpu->attention_mask(K::Tensor(), v, K::Tensor(), causal, oc);
    be.gpu->attention_mask(K::Tensor(), on_gpu(v), K::Tensor(), causal, og);
    CHECK(bit_equal(og, oc));
  }
}

TEST_CASE("gpu backend: mask_not_equal equals the CPU's; random_normal draws what the CPU draws") {
  auto be = make_backends();
  // Rows of 4: every third row all equal to the mask value, one row with a NaN (not equal).
  K::Tensor x = random_tensor({3, 7, 4}, 1300);
  for (std::int64_t r = 0; r < 21; r += 3)
    for (std::int64_t k = 0; k < 4; ++k) x.data<float>()[r * 4 + k] = 0.5f;
  x.data<float>()[5 * 4 + 2] = std::numeric_limits<float>::quiet_NaN();
  K::Tensor mc, mg;
  be.cpu->mask_not_equal(x, 0.5f, mc);
  be.gpu->mask_not_equal(on_gpu(x), 0.5f, mg);
  CHECK(bit_equal(mg, mc));
  for (const K::Shape& s : {K::Shape{5}, K::Shape{1000, 17}, K::Shape{262147}}) {
    K::Tensor yc(s), yg(s, K::DType::float32, gpu());
    be.cpu->random_normal(42, 1.f, 0.5f, yc);
    be.gpu->random_normal(42, 1.f, 0.5f, yg);
    check_close(yg, yc, "random_normal " + shape_label(s));  // the same draws; logf/cosf may differ in ulps
  }
}

// UpSampling2D(bilinear) is built from Backend ops (layers/linear_upsampling.cpp): the layer's
// forward and backward on the GPU backend against the CPU backend, factors 1-4 and one-pixel axes.
TEST_CASE("gpu backend: UpSampling2D bilinear forward and backward equal the CPU's") {
  auto be = make_backends();
  std::uint32_t seed = 1200;
  struct Case {
    K::Shape x;
    std::int64_t fh, fw;
  };
  for (Case c :
       {Case{{2, 3, 4, 5}, 2, 3}, Case{{1, 1, 6, 2}, 4, 1}, Case{{3, 2, 1, 7}, 1, 2}, Case{{2, 9, 8, 33}, 2, 2}}) {
    const std::string sl = shape_label(c.x) + " x" + std::to_string(c.fh) + "," + std::to_string(c.fw);
    K::LayerRef up = K::layers::UpSampling2D({c.fh, c.fw}, {.interpolation = "bilinear"});
    (void)up(K::Input({c.x[1], c.x[2], c.x[3]}));
    K::Tensor x = random_tensor(c.x, seed++);
    K::Tensor dy = random_tensor({c.x[0], c.x[1] * c.fh, c.x[2] * c.fw, c.x[3]}, seed++);
    K::ReplicaContext cpu_ctx, gpu_ctx;
    cpu_ctx.backend = be.cpu.get();
    gpu_ctx.backend = be.gpu.get();
    K::LayerState cpu_st, gpu_st;
    K::Tensor yc = up->forward(cpu_ctx, {x}, cpu_st).at(0);
    K::Tensor yg = up->forward(gpu_ctx, {on_gpu(x)}, gpu_st).at(0);
    check_close(yg, yc, "UpSampling2D bilinear forward " + sl);
    K::Tensor dxc = up->backward(cpu_ctx, {x}, {yc}, {dy}, cpu_st).at(0);
    K::Tensor dxg = up->backward(gpu_ctx, {on_gpu(x)}, {yg}, {on_gpu(dy)}, gpu_st).at(0);
    check_close(dxg, dxc, "UpSampling2D bilinear backward " + sl);
  }
}
