// Mixed precision on the CUDA backend (compute_dtype() bfloat16/float16): the matmul, dense,
// batched matmul and convolution ops (conv2d and depthwise, all three passes) round their float32
// operands to 16 bits on the GPU and run cuBLAS GemmEx / cuDNN's pseudo-16-bit convolutions with
// float32 accumulation, float32 tensors in and out (src/backend/cuda/dense.cpp, conv.cpp).
//
// Each op is checked three ways against the CPU backend:
//  (a) against the CPU's float32 result, within the error 16-bit operands may cause: with
//      operands uniform in [-1, 1) each product's relative error is at most 2u (u = 2^-8 for
//      bfloat16, 2^-11 for float16) and a K-term sum's error is ~0.3·u·sqrt(K) (one sigma); the
//      bounds 1e-2·sqrt(K) (bfloat16) and 2e-3·sqrt(K) (float16) are ~10 sigma. cuDNN's 16-bit
//      output (cast back to float32) adds up to u relative;
//  (b) against the CPU computing in the same 16-bit dtype (operands rounded the same way, float32
//      accumulation): only the summation order, the GPU convolutions' 16-bit output rounding and
//      whatever cuDNN's algorithm adds (Winograd/FFT transforms of 16-bit data) differ, so the
//      bound is 4u + 1e-4·sqrt(K) for convolutions and 1e-4·sqrt(K) for GEMMs;
//  (c) and it differs from float32 (by > 1e-6), which proves the 16-bit path ran.
// bfloat16 on a GPU before compute capability 8.0 computes in float32 (compute_path says so): the
// bfloat16 cases then check (a) with float32's tolerance instead, and skip (b) and (c).
//
// Last, one mixed_float16 training step (compile() adds a LossScaleOptimizer) on gpu:0 gives the
// CPU's mixed_float16 loss, loss scale and weights.
//
// NOTE: written without a GPU at hand (compiled, not yet run); the tolerances come from the
// reasoning above, not from measurements.
#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_test_util.hpp"
#include "kerascpp/kerascpp.hpp"

using namespace gputest;
namespace MP = kerascpp::mixed_precision;

namespace {

const K::DType kDtypes[] = {K::DType::bfloat16, K::DType::float16};

int compute_capability_major(int device = 0) {
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) return 0;
  return major;
}

// Whether the GPU computes in `dtype` (bfloat16 needs compute capability 8.0+).
bool gpu_computes_in(K::DType dtype) { return dtype == K::DType::float16 || compute_capability_major() >= 8; }

double unit_roundoff(K::DType dtype) {
  return dtype == K::DType::bfloat16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
}

// (a): vs float32, K terms per output; conv outputs are also rounded to 16 bits on the GPU.
double tol_vs_float32(K::DType dtype, std::int64_t k, bool conv) {
  if (!gpu_computes_in(dtype)) return kOpTol;
  const double base = dtype == K::DType::bfloat16 ? 1e-2 : 2e-3;
  return base * std::sqrt(static_cast<double>(k)) + (conv ? unit_roundoff(dtype) : 0.0);
}

// (b): vs the CPU in the same 16-bit dtype.
double tol_vs_same_dtype(K::DType dtype, std::int64_t k, bool conv) {
  return (conv ? 4 * unit_roundoff(dtype) : 0.0) + 1e-4 * std::sqrt(static_cast<double>(k));
}

// Runs `op` with both backends' compute dtype set to `dtype` (always back to float32 after).
struct ComputeIn {
  K::Backend& be;
  ComputeIn(K::Backend& b, K::DType dtype) : be(b) { be.set_compute_dtype(dtype); }
  ~ComputeIn() { be.set_compute_dtype(K::DType::float32); }
};

// The three checks of one op result. gpu16: the GPU in `dtype`; cpu32: the CPU in float32;
// cpu16: the CPU in `dtype`.
// `may_fall_back`: cuDNN may legitimately offer no 16-bit algorithm for this op (depthwise, i.e.
// grouped, convolutions), which then compute in float32: (b) and (c) only warn.
void check_16bit(const K::Tensor& gpu16, const K::Tensor& cpu32, const K::Tensor& cpu16, K::DType dtype, std::int64_t k,
                 bool conv, const std::string& what, bool may_fall_back = false) {
  const std::string label = what + " (" + K::dtype_name(dtype) + ", K " + std::to_string(k) + ")";
  check_close(gpu16, cpu32, label + " vs CPU float32", tol_vs_float32(dtype, k, conv));
  if (!gpu_computes_in(dtype)) return;
  const Vec a = gpu16.to_vector(), e32 = cpu32.to_vector();
  double max_diff = 0;
  for (std::size_t i = 0; i < a.size() && i < e32.size(); ++i)
    max_diff = std::max(max_diff, std::fabs(static_cast<double>(a[i]) - e32[i]));
  if (may_fall_back) {
    const double err = rel_error(a, cpu16.to_vector()), tol = tol_vs_same_dtype(dtype, k, conv);
    WARN_MESSAGE(err <= tol, label << " vs CPU " << K::dtype_name(dtype) << ": rel_error " << err << " > " << tol);
    WARN_MESSAGE(max_diff > 1e-6,
                 label << ": equals float32 to " << max_diff << "; cuDNN ran it in float32 (no 16-bit algorithm?)");
    return;
  }
  check_close(gpu16, cpu16, label + " vs CPU " + K::dtype_name(dtype), tol_vs_same_dtype(dtype, k, conv));
  CHECK_MESSAGE(max_diff > 1e-6, label << ": equals float32 to " << max_diff << "; the 16-bit path did not run");
}

struct ConvCase {
  std::int64_t n, h, w, c, o, kh, kw, sh, sw;
  std::int64_t pt, pb, pl, pr;
  K::Conv2DGeometry geometry() const {
    K::Conv2DGeometry g;
    g.kernel_h = kh;
    g.kernel_w = kw;
    g.stride_h = sh;
    g.stride_w = sw;
    g.pad_top = pt;
    g.pad_bottom = pb;
    g.pad_left = pl;
    g.pad_right = pr;
    return g;
  }
  std::int64_t oh() const { return (h + pt + pb - kh) / sh + 1; }
  std::int64_t ow() const { return (w + pl + pr - kw) / sw + 1; }
  std::string label() const {
    return "x(" + std::to_string(n) + "," + std::to_string(h) + "," + std::to_string(w) + "," + std::to_string(c) +
           ") k" + std::to_string(kh) + "x" + std::to_string(kw) + " o" + std::to_string(o) + " s" +
           std::to_string(sh) + "x" + std::to_string(sw) + " pads(t" + std::to_string(pt) + ",b" + std::to_string(pb) +
           ",l" + std::to_string(pl) + ",r" + std::to_string(pr) + ")";
  }
};

}  // namespace

TEST_CASE("gpu mixed precision: compute_path names the 16-bit cuBLAS/cuDNN path") {
  auto be = make_backends();
  CHECK(be.gpu->compute_path(K::DType::float32) == "float32");
  CHECK_THROWS_AS(be.gpu->compute_path(K::DType::int64), K::ValueError);
  for (K::DType dtype : kDtypes) {
    const std::string path = MP::compute_path(*be.gpu, dtype);
    const std::string name = K::dtype_name(dtype);
    MESSAGE(name << " on " << be.gpu->name() << ": " << path);
    if (gpu_computes_in(dtype)) {
      CHECK(contains(path, "cuBLAS GemmEx " + name + " inputs, float32 accumulate"));
      CHECK(contains(path, "cuDNN " + name + " convolution"));
    } else {
      CHECK(path.rfind("float32", 0) == 0);
      CHECK(contains(path, "compute capability 8.0"));
    }
  }
}

TEST_CASE("gpu mixed precision: matmul (every transpose, overwrite and accumulate) and dense_forward") {
  auto be = make_backends();
  struct Dims {
    std::int64_t m, k, n;
  };
  std::uint32_t seed = 5000;
  for (K::DType dtype : kDtypes)
    for (Dims d : {Dims{6, 9, 4}, Dims{33, 65, 17}, Dims{128, 64, 96}, Dims{1, 300, 7}})
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (bool acc : {false, true}) {
            const std::string what = "matmul M" + std::to_string(d.m) + " K" + std::to_string(d.k) + " N" +
                                     std::to_string(d.n) + (ta ? " Aᵀ" : " A") + (tb ? " Bᵀ" : " B") +
                                     (acc ? " accumulate" : " overwrite");
            auto a = random_tensor(ta ? K::Shape{d.k, d.m} : K::Shape{d.m, d.k}, seed++);
            auto b = random_tensor(tb ? K::Shape{d.n, d.k} : K::Shape{d.k, d.n}, seed++);
            auto c0 = random_tensor({d.m, d.n}, seed++);
            K::Tensor c32 = c0.clone(), c16 = c0.clone(), cg = acc ? on_gpu(c0) : gpu_garbage({d.m, d.n});
            be.cpu->matmul(a, ta, b, tb, c32, acc);
            {
              ComputeIn in(*be.cpu, dtype);
              be.cpu->matmul(a, ta, b, tb, c16, acc);
            }
            {
              ComputeIn in(*be.gpu, dtype);
              be.gpu->matmul(on_gpu(a), ta, on_gpu(b), tb, cg, acc);
            }
            check_16bit(cg, c32, c16, dtype, d.k, false, what);
          }

  for (K::DType dtype : kDtypes)
    for (const auto& [xs, out] : {std::pair<K::Shape, std::int64_t>{{7, 13}, 5}, {{64, 100}, 33}, {{3, 4, 6}, 10}})
      for (auto act : {K::ActivationKind::linear, K::ActivationKind::relu, K::ActivationKind::tanh})
        for (bool bias : {true, false}) {
          const std::int64_t in_dim = xs.back();
          const std::string what = "dense x" + K::shape_str(xs) + " out " + std::to_string(out) + " " +
                                   K::activation_name(act) + (bias ? " +bias" : "");
          auto x = random_tensor(xs, seed++), w = random_tensor({in_dim, out}, seed++),
               b = random_tensor({out}, seed++);
          K::Shape ys = xs;
          ys.back() = out;
          K::Tensor bb = bias ? b : K::Tensor(), y32, y16, yg = gpu_garbage(ys);  // preallocated: overwritten
          be.cpu->dense_forward(x, w, bb, act, y32);
          {
            ComputeIn in(*be.cpu, dtype);
            be.cpu->dense_forward(x, w, bb, act, y16);
          }
          {
            ComputeIn in(*be.gpu, dtype);
            be.gpu->dense_forward(on_gpu(x), on_gpu(w), on_gpu(bb), act, yg);
          }
          check_16bit(yg, y32, y16, dtype, in_dim, false, what);
        }
}

TEST_CASE("gpu mixed precision: batched_matmul (attention's products)") {
  auto be = make_backends();
  std::uint32_t seed = 6000;
  const std::int64_t B = 6, M = 17, Kd = 33, N = 9;
  for (K::DType dtype : kDtypes)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (bool acc : {false, true}) {
          const std::string what = std::string("batched_matmul") + (ta ? " Aᵀ" : " A") + (tb ? " Bᵀ" : " B") +
                                   (acc ? " accumulate" : " overwrite");
          auto a = random_tensor(ta ? K::Shape{B, Kd, M} : K::Shape{B, M, Kd}, seed++);
          auto b = random_tensor(tb ? K::Shape{B, N, Kd} : K::Shape{B, Kd, N}, seed++);
          auto c0 = random_tensor({B, M, N}, seed++);
          K::Tensor c32 = c0.clone(), c16 = c0.clone(), cg = acc ? on_gpu(c0) : gpu_garbage({B, M, N});
          be.cpu->batched_matmul(a, ta, b, tb, c32, acc);
          {
            ComputeIn in(*be.cpu, dtype);
            be.cpu->batched_matmul(a, ta, b, tb, c16, acc);
          }
          {
            ComputeIn in(*be.gpu, dtype);
            be.gpu->batched_matmul(on_gpu(a), ta, on_gpu(b), tb, cg, acc);
          }
          check_16bit(cg, c32, c16, dtype, Kd, false, what);
        }
}

namespace {

// On a backend made under KERASCPP_GPU_CONV=`engine` (conv_route.cpp: which convolutions run as
// cuBLAS products, whose 16-bit path is GemmEx's; `nchw` leaves 16-bit passes on the NHWC route).
void check_16bit_convolutions(const char* engine) {
  auto be = make_backends_with("KERASCPP_GPU_CONV", engine);
  const std::vector<ConvCase> cases = {
      {2, 7, 7, 3, 4, 3, 3, 1, 1, 1, 1, 1, 1},      // symmetric padding (cuDNN pads)
      {4, 12, 12, 8, 16, 3, 3, 2, 2, 0, 1, 0, 1},   // "same" stride 2: explicit padding
      {2, 10, 10, 16, 32, 3, 3, 1, 1, 0, 0, 0, 0},  // valid, channels a multiple of 8 (tensor cores)
      {8, 14, 14, 32, 64, 3, 3, 1, 1, 1, 1, 1, 1},  // a real layer's size
      {2, 5, 5, 3, 7, 1, 1, 1, 1, 0, 0, 0, 0},      // 1x1 kernel
      {2, 8, 8, 4, 6, 1, 1, 2, 2, 0, 0, 0, 0},      // 1x1, stride 2 (im2col under pointwise and gemm)
  };
  std::uint32_t seed = 7000;
  for (K::DType dtype : kDtypes)
    for (const auto& cc : cases)
      for (bool depthwise : {false, true}) {
        const K::Conv2DGeometry g = cc.geometry();
        // Depthwise: multiplier 2, so the kernel is [kh, kw, C, 2] and y has 2C channels.
        const std::int64_t oc = depthwise ? cc.c * 2 : cc.o;
        const K::Shape w_shape = depthwise ? K::Shape{cc.kh, cc.kw, cc.c, 2} : K::Shape{cc.kh, cc.kw, cc.c, cc.o};
        const std::string label = std::string(engine) + ": " + (depthwise ? "depthwise " : "conv ") + cc.label();
        auto x = random_tensor({cc.n, cc.h, cc.w, cc.c}, seed++);
        auto w = random_tensor(w_shape, seed++);
        auto b = random_tensor({oc}, seed++);
        auto dy = random_tensor({cc.n, cc.oh(), cc.ow(), oc}, seed++);
        auto xg = on_gpu(x), wg = on_gpu(w), bg = on_gpu(b), dyg = on_gpu(dy);
        // Terms per output: forward kh*kw*cin (1 input channel per group for depthwise), backward
        // data kh*kw*(filters per input channel), backward weights n*oh*ow.
        const std::int64_t k_fwd = cc.kh * cc.kw * (depthwise ? 1 : cc.c);
        const std::int64_t k_bwd_data = cc.kh * cc.kw * (depthwise ? 2 : cc.o);
        const std::int64_t k_bwd_w = cc.n * cc.oh() * cc.ow();

        auto forward = [&](K::Backend& bk, const K::Tensor& xx, const K::Tensor& ww, const K::Tensor& bb,
                           K::Tensor& y) {
          if (depthwise) bk.depthwise_conv2d_forward(xx, ww, bb, g, K::ActivationKind::relu, y);
          else bk.conv2d_forward(xx, ww, bb, g, K::ActivationKind::relu, y);
        };
        auto backward_data = [&](K::Backend& bk, const K::Tensor& d, const K::Tensor& ww, K::Tensor& dx) {
          if (depthwise) bk.depthwise_conv2d_backward_data(d, ww, g, dx);
          else bk.conv2d_backward_data(d, ww, g, dx);
        };
        auto backward_weights = [&](K::Backend& bk, const K::Tensor& xx, const K::Tensor& d, K::Tensor& dw,
                                    K::Tensor& db, bool acc) {
          if (depthwise) bk.depthwise_conv2d_backward_weights(xx, d, g, dw, db, acc);
          else bk.conv2d_backward_weights(xx, d, g, dw, db, acc);
        };

        K::Tensor y32, y16, yg = gpu_garbage({cc.n, cc.oh(), cc.ow(), oc});
        forward(*be.cpu, x, w, b, y32);
        {
          ComputeIn in(*be.cpu, dtype);
          forward(*be.cpu, x, w, b, y16);
        }
        {
          ComputeIn in(*be.gpu, dtype);
          forward(*be.gpu, xg, wg, bg, yg);
        }
        check_16bit(yg, y32, y16, dtype, k_fwd, true, label + " forward relu +bias", depthwise);

        K::Tensor dx32(x.shape()), dx16(x.shape()), dxg = gpu_garbage(x.shape());
        backward_data(*be.cpu, dy, w, dx32);
        {
          ComputeIn in(*be.cpu, dtype);
          backward_data(*be.cpu, dy, w, dx16);
        }
        {
          ComputeIn in(*be.gpu, dtype);
          backward_data(*be.gpu, dyg, wg, dxg);
        }
        check_16bit(dxg, dx32, dx16, dtype, k_bwd_data, true, label + " backward data", depthwise);

        // Backward weights accumulated onto random values, with the bias gradient (float32 sums).
        auto dw0 = random_tensor(w.shape(), seed++), db0 = random_tensor({oc}, seed++);
        K::Tensor dw32 = dw0.clone(), db32 = db0.clone(), dw16 = dw0.clone(), db16 = db0.clone();
        K::Tensor dwg = on_gpu(dw0), dbg = on_gpu(db0);
        backward_weights(*be.cpu, x, dy, dw32, db32, true);
        {
          ComputeIn in(*be.cpu, dtype);
          backward_weights(*be.cpu, x, dy, dw16, db16, true);
        }
        {
          ComputeIn in(*be.gpu, dtype);
          backward_weights(*be.gpu, xg, dyg, dwg, dbg, true);
        }
        check_16bit(dwg, dw32, dw16, dtype, k_bwd_w, true, label + " backward weights (accumulate)", depthwise);
        check_close(dbg, db32, label + " backward weights db (float32 in every policy)");
        // Overwrite into an undefined dw.
        K::Tensor dw_new, no_db, dw_ref32, no_db32, dw_ref16, no_db16;
        backward_weights(*be.cpu, x, dy, dw_ref32, no_db32, false);
        {
          ComputeIn in(*be.cpu, dtype);
          backward_weights(*be.cpu, x, dy, dw_ref16, no_db16, false);
        }
        {
          ComputeIn in(*be.gpu, dtype);
          backward_weights(*be.gpu, xg, dyg, dw_new, no_db, false);
        }
        CHECK(dw_new.dtype() == K::DType::float32);
        check_16bit(dw_new, dw_ref32, dw_ref16, dtype, k_bwd_w, true, label + " backward weights (overwrite)",
                    depthwise);
      }
}

}  // namespace

TEST_CASE("gpu mixed precision: conv2d and depthwise conv2d forward, backward data, backward weights") {
  for (const char* engine : {"cudnn", "pointwise", "gemm", "nchw", "timed"}) check_16bit_convolutions(engine);
}

TEST_CASE("gpu mixed precision: a mixed_float16 training step (LossScaleOptimizer) on gpu:0 follows the CPU's") {
  struct PolicyReset {
    ~PolicyReset() { MP::set_global_policy("float32"); }
  } reset;
  const K::Tensor x = random_tensor({16, 8, 8, 2}, 8100);
  const K::Tensor y = labels_as(random_labels(16, 4, 8101), K::DType::int32, {16});
  struct Result {
    std::vector<K::Tensor> initial, final;
    double loss = 0;
    float loss_scale = 0;
    std::int64_t iterations = 0;
    std::string optimizer;
  };
  auto step = [&](K::distribute::Strategy strategy, const std::string& policy) {
    MP::set_global_policy(policy);
    K::set_random_seed(17);
    auto in = K::Input({8, 8, 2});
    auto h = K::layers::Conv2D(8, 3, {.activation = "relu"})(in);
    h = K::layers::Dense(16, {.activation = "tanh"})(K::layers::Flatten()(h));
    K::Model m(in, K::layers::Dense(4)(h));
    MP::set_global_policy("float32");
    m.compile({.optimizer = K::optimizers::SGD(0.1),
               .loss = K::losses::SparseCategoricalCrossentropy({.from_logits = true}),
               .distribute = strategy});
    Result r;
    r.initial = m.get_weights();
    r.loss = m.train_on_batch(x, y)["loss"];
    r.final = m.get_weights();
    r.optimizer = m.optimizer().class_name();
    r.loss_scale = m.optimizer().loss_scale();
    r.iterations = m.optimizer().iterations();
    return r;
  };
  const Result cpu = step(K::distribute::OneDeviceStrategy("cpu:0"), "mixed_float16");
  const Result gpu0 = step(K::distribute::OneDeviceStrategy("gpu:0"), "mixed_float16");
  const Result cpu32 = step(K::distribute::OneDeviceStrategy("cpu:0"), "float32");

  CHECK(cpu.optimizer == "LossScaleOptimizer");
  CHECK(gpu0.optimizer == "LossScaleOptimizer");
  REQUIRE(cpu.initial.size() == gpu0.initial.size());
  for (std::size_t i = 0; i < cpu.initial.size(); ++i) REQUIRE(bit_equal(cpu.initial[i], gpu0.initial[i]));
  // Both took the step at the initial scale (no float16 overflow on either side).
  CHECK(cpu.loss_scale == 32768.f);
  CHECK(gpu0.loss_scale == cpu.loss_scale);
  CHECK(cpu.iterations == 1);
  CHECK(gpu0.iterations == 1);
  for (const auto& t : gpu0.final) CHECK(t.dtype() == K::DType::float32);

  const double moved = max_abs_diff(cpu.initial, cpu.final);
  const double diff = max_abs_diff(cpu.final, gpu0.final);
  const double vs_float32 = max_abs_diff(cpu.final, cpu32.final);
  MESSAGE("mixed_float16 step: loss cpu " << cpu.loss << " gpu " << gpu0.loss << " (float32 " << cpu32.loss
                                          << "); max|w_gpu - w_cpu| " << diff << ", step size " << moved
                                          << ", mixed vs float32 on the CPU " << vs_float32);
  CHECK(moved > 1e-3);  // the step moved the weights
  // The GPU rounds the same operands to float16 as the CPU; its convolution outputs and
  // gradients are float16 too (relative 2^-11, and the Dense after the convolution rounds its
  // input to float16 on both anyway), so one SGD(0.1) step stays well within 5e-4 of the CPU's.
  CHECK(std::fabs(gpu0.loss - cpu.loss) <= 2e-3 * std::max(1.0, std::fabs(cpu.loss)));
  CHECK(diff <= 5e-4);
  for (const auto& t : gpu0.final)
    for (float v : t.to_vector()) REQUIRE(std::isfinite(v));
}
