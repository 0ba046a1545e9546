// Mixed precision: casts to and from the 16-bit floats, the matmul and convolution ops computing
// in bfloat16/float16 (equal to float32 on operands rounded beforehand, whether oneDNN runs them
// natively or they are emulated: ctest runs this file again with ONEDNN_MAX_CPU_ISA=AVX2),
// dtype policies with their Keras config, and training under mixed_bfloat16.
#include <doctest/doctest.h>
#include <bit>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cpu/bf16_kernel_choice.hpp"
#include "bf16_expectations.hpp"
#include "bit_equal.hpp"
#include "full_mantissa_tensor.hpp"
#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing.hpp"
#include "tensor/low_precision.hpp"

namespace K = kerascpp;
namespace MP = kerascpp::mixed_precision;

namespace {

// Values with full float32 mantissas, so that rounding to 16 bits changes them.
K::Tensor random_tensor(const K::Shape& shape, std::uint32_t seed) {
  return kerascpp_test::full_mantissa_tensor(shape, seed);
}

// x rounded to `dtype` and widened back to float32.
K::Tensor rounded(K::Backend& be, const K::Tensor& x, K::DType dtype) {
  K::Tensor low, back;
  be.cast(x, dtype, low);
  be.cast(low, K::DType::float32, back);
  return back;
}

double max_abs_diff(const K::Tensor& a, const K::Tensor& b) {
  const auto va = a.to_vector(), vb = b.to_vector();
  double m = 0;
  for (std::size_t i = 0; i < va.size(); ++i) m = std::max(m, static_cast<double>(std::fabs(va[i] - vb[i])));
  return m;
}

// A 3x3 convolution with one pixel of zero padding on every side.
K::Conv2DGeometry padded_3x3(int stride_h, int stride_w) {
  return {.kernel_h = 3,
          .kernel_w = 3,
          .stride_h = stride_h,
          .stride_w = stride_w,
          .pad_top = 1,
          .pad_left = 1,
          .pad_bottom = 1,
          .pad_right = 1};
}

// Every test that sets the global policy puts float32 back, even when a check throws.
struct GlobalPolicyReset {
  ~GlobalPolicyReset() { MP::set_global_policy("float32"); }
};

}  // namespace

TEST_CASE("cast: float32 to bfloat16 and float16 rounds to nearest even; NaN, Inf, overflow and subnormals") {
  auto be = K::make_cpu_backend(2);
  const float inf = std::numeric_limits<float>::infinity();
  const K::Tensor x = K::Tensor::from_vector(
      {9}, std::vector<float>{1.f, 1.00390625f, 1.01171875f, -2.5f, std::nanf(""), inf, 1e30f, 70000.f, 6e-8f});
  K::Tensor b16, h16;
  be->cast(x, K::DType::bfloat16, b16);
  be->cast(x, K::DType::float16, h16);
  CHECK(b16.dtype() == K::DType::bfloat16);
  CHECK(b16.nbytes() == 18);
  const auto b = b16.to_vector(), h = h16.to_vector();
  // bfloat16 keeps 8 mantissa bits: 1 + 2^-8 is a tie that goes to the even 1, 1 + 3·2^-8 one
  // that goes to 1 + 2^-6; 70000 becomes a multiple of 512.
  CHECK(b[0] == 1.f);
  CHECK(b[1] == 1.f);
  CHECK(b[2] == 1.015625f);
  CHECK(b[3] == -2.5f);
  CHECK(std::isnan(b[4]));
  CHECK(b[5] == inf);
  CHECK(std::fabs(b[6] - 1e30f) / 1e30f < 1.f / 256);
  CHECK(b[7] == 70144.f);
  // float16 keeps 11 bits but tops out at 65504 and goes subnormal below 2^-14.
  CHECK(h[1] == 1.00390625f);
  CHECK(h[2] == 1.01171875f);
  CHECK(std::isnan(h[4]));
  CHECK(h[6] == inf);
  CHECK(h[7] == inf);
  CHECK(h[8] == std::ldexp(1.f, -24));
  // And back: float16 -> float32 is exact, bfloat16 -> float16 rounds again.
  K::Tensor wide, half_from_b;
  be->cast(h16, K::DType::float32, wide);
  CHECK(wide.to_vector()[2] == 1.01171875f);
  be->cast(b16, K::DType::float16, half_from_b);
  CHECK(half_from_b.to_vector()[2] == 1.015625f);
  // The vectorized conversions (AVX2 for bfloat16, F16C for float16, where the processor has
  // them) round as the scalar ones: 1003 values spanning float16's range, every bit compared, with
  // ties to even (normal and subnormal), the float16 overflow threshold, the smallest subnormal's
  // half, bfloat16's own ties and subnormals, a NaN with a payload, -0 and the largest float.
  std::vector<float> many(1003);
  for (std::size_t i = 0; i < many.size(); ++i)
    many[i] =
        std::ldexp(random_tensor({1}, static_cast<std::uint32_t>(i)).to_vector()[0], static_cast<int>(i % 48) - 30);
  const float ties[] = {1.f + std::ldexp(1.f, -11),
                        1.f + 3 * std::ldexp(1.f, -11),
                        std::ldexp(1.f, -25),
                        3 * std::ldexp(1.f, -25),
                        2.5f * std::ldexp(1.f, -24),
                        65520.f,
                        65519.f,
                        -std::ldexp(1.f, -14) * 1.00048828125f,
                        1.f + std::ldexp(1.f, -8),
                        1.f + 3 * std::ldexp(1.f, -8),
                        std::ldexp(1.f, -140) * 3,
                        std::bit_cast<float>(0x7fa12345u),
                        -0.f,
                        std::numeric_limits<float>::max()};
  std::copy(std::begin(ties), std::end(ties), many.begin());
  for (K::DType dtype : {K::DType::float16, K::DType::bfloat16}) {
    CAPTURE(K::dtype_name(dtype));
    const bool bf16 = dtype == K::DType::bfloat16;
    auto narrow = [&](float v) {
      return bf16 ? K::low_precision::float_to_bfloat16(v) : K::low_precision::float_to_half(v);
    };
    auto widen = [&](std::uint16_t v) {
      return bf16 ? K::low_precision::bfloat16_to_float(v) : K::low_precision::half_to_float(v);
    };
    K::Tensor many_16, many_back;
    be->cast(K::Tensor::from_vector({1003}, many), dtype, many_16);
    be->cast(many_16, K::DType::float32, many_back);
    const auto* bits = static_cast<const std::uint16_t*>(many_16.raw());
    const auto* back = many_back.data<float>();
    int mismatches = 0;
    for (std::size_t i = 0; i < many.size(); ++i)
      mismatches += bits[i] != narrow(many[i]) ||
                    std::bit_cast<std::uint32_t>(back[i]) != std::bit_cast<std::uint32_t>(widen(narrow(many[i])));
    CHECK(mismatches == 0);
  }
  std::ostringstream printed;
  printed << b16;
  CHECK(printed.str().find("dtype=bfloat16") != std::string::npos);
  K::Tensor ids = K::Tensor::from_vector({2}, std::vector<std::int32_t>{1, 2}), out;
  CHECK_THROWS_AS(be->cast(ids, K::DType::bfloat16, out), K::ValueError);
  K::Tensor wrong({3}, K::DType::bfloat16);
  CHECK_THROWS_AS(be->cast(x, K::DType::bfloat16, wrong), K::ShapeError);
  CHECK_THROWS_AS(be->set_compute_dtype(K::DType::int32), K::ValueError);
}

TEST_CASE("compute_path: native names oneDNN's kernels, emulated says why; float32 is float32") {
  auto be = K::make_cpu_backend(2);
  const std::string path = MP::compute_path(*be, K::DType::bfloat16);
  MESSAGE("bfloat16: " << path);
  MESSAGE("float16: " << MP::compute_path(*be, K::DType::float16));
  CHECK((path.rfind("native (", 0) == 0 || path.rfind("emulated (", 0) == 0));
  if (kerascpp_test::bf16_must_be_emulated()) CHECK(path.rfind("emulated (", 0) == 0);
  CHECK(MP::compute_path(*be, K::DType::float32) == "float32");
  CHECK_THROWS_AS(MP::compute_path(*be, K::DType::int64), K::ValueError);
}

// bench/README.md ("Mixed precision") has the measurements behind each answer.
TEST_CASE("bfloat16 kernels: oneDNN's with AMX or AMD's AVX512-BF16, float32 ones on rounded operands elsewhere") {
  using K::cpu::choose_bf16_kernels;
  for (bool intel : {true, false}) {
    CAPTURE(intel);
    const auto amx = choose_bf16_kernels(true, true, intel);
    CHECK(amx.onednn_bf16);
    CHECK(amx.why.empty());
    const auto none = choose_bf16_kernels(false, false, intel);
    CHECK_FALSE(none.onednn_bf16);
    CHECK(none.why.find("no bfloat16 instructions") != std::string::npos);
  }
  CHECK(choose_bf16_kernels(true, false, false).onednn_bf16);
  const auto intel_avx512_bf16 = choose_bf16_kernels(true, false, true);
  CHECK_FALSE(intel_avx512_bf16.onednn_bf16);
  CHECK(intel_avx512_bf16.why.find("without AMX on an Intel processor") != std::string::npos);
  // And on this processor the library's answer is the one /proc/cpuinfo gives (unless the
  // environment asks for oneDNN's kernels anyway).
  if (!std::getenv("KERASCPP_BF16_ONEDNN_EMULATION"))
    CHECK(K::cpu::choose_bf16_kernels_here().onednn_bf16 == !kerascpp_test::bf16_must_be_emulated());
}

TEST_CASE("matmul, dense, batched matmul and convolutions in bfloat16/float16 equal float32 on rounded operands") {
  for (K::DType dtype : {K::DType::bfloat16, K::DType::float16}) {
    CAPTURE(K::dtype_name(dtype));
    auto be = K::make_cpu_backend(2);
    // Each op twice: in `dtype`, and in float32 on operands rounded to `dtype` beforehand. The
    // 16-bit products are exact in float32, so the two differ by the order of the sums alone;
    // against plain float32 they must differ (the rounding happened).
    auto in_dtype = [&](auto&& op) {
      be->set_compute_dtype(dtype);
      op();
      be->set_compute_dtype(K::DType::float32);
    };
    auto r = [&](const K::Tensor& t) { return rounded(*be, t, dtype); };
    auto check = [&](const K::Tensor& low, const K::Tensor& on_rounded, const K::Tensor& plain) {
      CHECK(K::testing::allclose(low, on_rounded, 1e-5, 1e-5));
      CHECK(max_abs_diff(low, plain) > 1e-5);
    };

    const K::Tensor a = random_tensor({33, 70}, 1), b = random_tensor({70, 45}, 2);
    K::Tensor c, c_ref, c_plain;
    in_dtype([&] { be->matmul(a, false, b, false, c, false); });
    be->matmul(r(a), false, r(b), false, c_ref, false);
    be->matmul(a, false, b, false, c_plain, false);
    check(c, c_ref, c_plain);
    K::Tensor ct, ct_ref, ct_plain;  // transposed operands, as the Dense backward uses them
    in_dtype([&] { be->matmul(a, true, c, false, ct, false); });
    be->matmul(r(a), true, r(c), false, ct_ref, false);
    be->matmul(a, true, c, false, ct_plain, false);
    check(ct, ct_ref, ct_plain);

    const K::Tensor bias = random_tensor({45}, 4);
    K::Tensor y({33, 45}), y_ref({33, 45}), y_plain({33, 45});
    in_dtype([&] { be->dense_forward(a, b, bias, K::ActivationKind::tanh, y); });
    be->dense_forward(r(a), r(b), bias, K::ActivationKind::tanh, y_ref);
    be->dense_forward(a, b, bias, K::ActivationKind::tanh, y_plain);
    check(y, y_ref, y_plain);

    const K::Tensor q = random_tensor({3, 7, 16}, 5), k = random_tensor({3, 9, 16}, 6);
    K::Tensor s, s_ref, s_plain;
    in_dtype([&] { be->batched_matmul(q, false, k, true, s, false); });
    be->batched_matmul(r(q), false, r(k), true, s_ref, false);
    be->batched_matmul(q, false, k, true, s_plain, false);
    check(s, s_ref, s_plain);

    const K::Conv2DGeometry g = padded_3x3(1, 2);
    const K::Tensor x = random_tensor({4, 9, 10, 8}, 7), w = random_tensor({3, 3, 8, 16}, 8);
    const K::Tensor cb = random_tensor({16}, 9);
    K::Tensor o, o_ref, o_plain;
    in_dtype([&] { be->conv2d_forward(x, w, cb, g, K::ActivationKind::linear, o); });
    be->conv2d_forward(r(x), r(w), cb, g, K::ActivationKind::linear, o_ref);
    be->conv2d_forward(x, w, cb, g, K::ActivationKind::linear, o_plain);
    check(o, o_ref, o_plain);
    const K::Tensor dy = random_tensor(o.shape(), 10);
    K::Tensor dx(x.shape()), dx_ref(x.shape()), dx_plain(x.shape());
    in_dtype([&] { be->conv2d_backward_data(dy, w, g, dx); });
    be->conv2d_backward_data(r(dy), r(w), g, dx_ref);
    be->conv2d_backward_data(dy, w, g, dx_plain);
    check(dx, dx_ref, dx_plain);
    K::Tensor dw = random_tensor(w.shape(), 11), db = random_tensor({16}, 12);  // accumulated into
    K::Tensor dw_ref = dw.clone(), db_ref = db.clone(), dw_plain = dw.clone(), db_plain = db.clone();
    in_dtype([&] { be->conv2d_backward_weights(x, dy, g, dw, db, true); });
    be->conv2d_backward_weights(r(x), r(dy), g, dw_ref, db_ref, true);
    be->conv2d_backward_weights(x, dy, g, dw_plain, db_plain, true);
    check(dw, dw_ref, dw_plain);
    CHECK(K::testing::allclose(db, db_ref, 1e-5, 1e-5));
    CHECK(dw.dtype() == K::DType::float32);
  }
}

TEST_CASE("conv2d_backward (ReLU or linear, fused under a 16-bit compute dtype) equals its three ops bit for bit") {
  // The CPU backend fuses the ReLU backward with rounding dz to 16 bits where the kernels are
  // native; emulated (AVX2) it runs the three ops, so both ways must give the same bits.
  const std::vector<float> bad = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()};
  for (K::DType dtype : {K::DType::bfloat16, K::DType::float16}) {
    for (K::ActivationKind act : {K::ActivationKind::relu, K::ActivationKind::linear}) {
      for (bool accumulate : {false, true}) {
        for (bool want_dx : {true, false}) {
          CAPTURE(K::dtype_name(dtype));
          CAPTURE(static_cast<int>(act));
          CAPTURE(accumulate);
          CAPTURE(want_dx);
          auto be = K::make_cpu_backend(2);
          be->set_compute_dtype(dtype);
          const K::Conv2DGeometry g = padded_3x3(2, 1);
          const K::Tensor x = random_tensor({5, 11, 9, 6}, 21), w = random_tensor({3, 3, 6, 12}, 22);
          K::Tensor y = random_tensor({5, 6, 9, 12}, 23), dy = random_tensor(y.shape(), 24);
          // A NaN and an Inf in dy where y > 0 and where y <= 0: ReLU's backward keeps them NaN.
          float* py = y.data<float>();
          float* pdy = dy.data<float>();
          py[3] = 1.f, pdy[3] = bad[0], py[7] = -1.f, pdy[7] = bad[1];
          K::Tensor dw = random_tensor(w.shape(), 25), db = random_tensor({12}, 26);
          K::Tensor dw_ref = dw.clone(), db_ref = db.clone();
          K::Tensor dx = want_dx ? K::Tensor(x.shape()) : K::Tensor(),
                    dx_ref = want_dx ? K::Tensor(x.shape()) : K::Tensor();
          be->conv2d_backward(act, x, y, dy, w, g, dw, db, accumulate, dx);
          K::Tensor dz = dy;
          if (act != K::ActivationKind::linear) {
            dz = K::Tensor(dy.shape());
            be->activation_backward(act, y, dy, dz);
          }
          be->conv2d_backward_weights(x, dz, g, dw_ref, db_ref, accumulate);
          if (want_dx) be->conv2d_backward_data(dz, w, g, dx_ref);
          CHECK(kerascpp_test::bit_equal(dw, dw_ref));
          CHECK(kerascpp_test::bit_equal(db, db_ref));
          if (want_dx) CHECK(kerascpp_test::bit_equal(dx, dx_ref));
          CHECK_FALSE(dx.defined() != want_dx);
        }
      }
    }
  }
}

TEST_CASE("dtype policies: Keras' names, the global policy, a layer's own, and the Keras config") {
  GlobalPolicyReset reset;
  const MP::DTypePolicy bf("mixed_bfloat16");
  CHECK(bf.compute_dtype() == K::DType::bfloat16);
  CHECK(bf.variable_dtype() == K::DType::float32);
  CHECK(MP::DTypePolicy("mixed_float16").compute_dtype() == K::DType::float16);
  CHECK(MP::global_policy().name() == "float32");
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const K::ValueError& e) { return std::string(e.what()); }
    return std::string("(no error)");
  };
  CHECK(message([] { MP::DTypePolicy("float64"); }).find("\"mixed_bfloat16\"") != std::string::npos);
  CHECK(message([] { MP::set_global_policy("bfloat16"); }).find("use \"mixed_bfloat16\"") != std::string::npos);
  CHECK(message([] { K::layers::Dense(2, {.name = "head", .dtype = "half"}); }).find("'head' (Dense)") !=
        std::string::npos);

  K::LayerRef before = K::layers::Dense(4);
  MP::set_global_policy("mixed_bfloat16");
  auto in = K::Input({6, 6, 1});
  K::LayerRef conv = K::layers::Conv2D(2, 3);
  K::LayerRef head = K::layers::Dense(3, {.activation = "softmax", .dtype = "float32"});
  auto x = K::layers::Flatten()(conv(in));
  K::Model model(in, head(before(x)));
  MP::set_global_policy("float32");
  CHECK(before->dtype_policy().name() == "float32");  // made before the policy changed
  CHECK(conv->dtype_policy().name() == "mixed_bfloat16");
  CHECK(conv->compute_dtype() == K::DType::bfloat16);
  CHECK(head->dtype_policy().name() == "float32");

  const std::string json = model.to_json();
  CHECK(json.find(R"("dtype":{"module":"keras","class_name":"DTypePolicy","config":{"name":"mixed_bfloat16"})") !=
        std::string::npos);
  K::Model again = K::model_from_json(json);
  CHECK(again.get_layer(conv->name())->dtype_policy().name() == "mixed_bfloat16");
  CHECK(again.get_layer(before->name())->dtype_policy().name() == "float32");
  CHECK(again.get_layer(head->name())->dtype_policy().name() == "float32");
  std::string bad = json;
  bad.replace(bad.find("mixed_bfloat16"), 14, "mixed_float64!");
  CHECK(message([&] { K::model_from_json(bad); }).find("conv2d") != std::string::npos);
}

TEST_CASE("training under mixed_bfloat16: float32 variables, a loss that follows float32's, 2 replicas = 1") {
  GlobalPolicyReset reset;
  const K::Tensor x = random_tensor({128, 8, 8, 1}, 21);
  std::vector<std::int32_t> labels(128);
  const auto xv = x.to_vector();
  for (std::size_t n = 0; n < labels.size(); ++n) {  // the class is which quadrant has the most mass
    double q[4] = {0, 0, 0, 0};
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j) q[(i / 4) * 2 + j / 4] += xv[n * 64 + static_cast<std::size_t>(i * 8 + j)];
    labels[n] = static_cast<std::int32_t>(std::max_element(q, q + 4) - q);
  }
  const K::Tensor y = K::Tensor::from_vector({128}, labels);
  auto train = [&](const std::string& policy, K::distribute::Strategy strategy, int steps) {
    MP::set_global_policy(policy);
    K::set_random_seed(5);
    auto in = K::Input({8, 8, 1});
    auto h = K::layers::Conv2D(8, 3, {.activation = "relu"})(in);
    h = K::layers::Dense(16, {.activation = "relu"})(K::layers::Flatten()(h));
    K::Model m(in, K::layers::Dense(4)(h));
    MP::set_global_policy("float32");
    m.compile({.optimizer = K::optimizers::Adam(0.01),
               .loss = K::losses::SparseCategoricalCrossentropy({.from_logits = true}),
               .distribute = strategy});
    std::vector<double> losses;
    for (int s = 0; s < steps; ++s) losses.push_back(m.train_on_batch(x, y)["loss"]);
    return std::pair{std::move(m), losses};
  };
  auto [f32, f32_losses] = train("float32", K::distribute::OneDeviceStrategy(), 40);
  auto [bf16, bf16_losses] = train("mixed_bfloat16", K::distribute::OneDeviceStrategy(), 40);
  for (const K::Tensor& w : bf16.get_weights()) CHECK(w.dtype() == K::DType::float32);
  CHECK(bf16_losses.back() < 0.5 * bf16_losses.front());
  CHECK(std::fabs(bf16_losses.back() - f32_losses.back()) < 0.1 * f32_losses.back() + 0.02);
  CHECK(max_abs_diff(bf16.get_weights()[0], f32.get_weights()[0]) > 1e-4);  // it did compute in bfloat16

  // Replicas: the same weights as one device up to bfloat16 rounding flips. oneDNN's float32
  // results may differ in the last bit between batch sizes (64 rows per replica, 128 on one
  // device), and rounding to bfloat16 can turn that bit into one bfloat16 step (2^-8 relative) in
  // an operand; after 10 Adam steps that leaves ~1e-5, while bfloat16 vs float32 is ~1e-2.
  auto [two, two_losses] = train("mixed_bfloat16", K::distribute::MirroredStrategy<>(2), 10);
  auto [one, one_losses] = train("mixed_bfloat16", K::distribute::OneDeviceStrategy(), 10);
  auto [f32_10, f32_10_losses] = train("float32", K::distribute::OneDeviceStrategy(), 10);
  const auto a = two.get_weights(), b = one.get_weights(), c = f32_10.get_weights();
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(K::testing::allclose(a[i], b[i], 1e-3, 5e-5));
    CHECK(max_abs_diff(a[i], b[i]) < 0.1 * max_abs_diff(b[i], c[i]));
  }
}

TEST_CASE(
    "mixed_float16: compile() adds dynamic loss scaling; a float16 overflow skips the step, then training recovers") {
  GlobalPolicyReset reset;
  MP::set_global_policy("mixed_float16");
  K::set_random_seed(9);
  auto in = K::Input({6});
  auto h = K::layers::Dense(8, {.activation = "tanh"})(in);
  K::Model model(in, K::layers::Dense(3)(h));
  MP::set_global_policy("float32");
  model.compile(
      {.optimizer = K::optimizers::SGD(0.1), .loss = K::losses::SparseCategoricalCrossentropy({.from_logits = true})});
  REQUIRE(model.optimizer().class_name() == "LossScaleOptimizer");  // as Keras' compile() does
  CHECK(model.optimizer().loss_scale() == 32768.f);
  const K::Tensor y = K::Tensor::from_vector({4}, std::vector<std::int32_t>{0, 1, 2, 1});
  const K::Tensor x = random_tensor({4, 6}, 31);
  std::vector<float> huge = x.to_vector();
  huge[3] = 1e6f;  // above float16's 65504: its rounded operand is Inf, and so are the gradients
  const auto before = model.get_weights();
  model.train_on_batch(K::Tensor::from_vector({4, 6}, huge), y);
  const auto after = model.get_weights();
  for (std::size_t i = 0; i < before.size(); ++i) CHECK(after[i].to_vector() == before[i].to_vector());
  CHECK(model.optimizer().loss_scale() == 16384.f);
  CHECK(model.optimizer().iterations() == 0);
  double first = 0, last = 0;
  for (int s = 0; s < 30; ++s) {
    last = model.train_on_batch(x, y)["loss"];
    if (s == 0) first = last;
  }
  CHECK(std::isfinite(last));
  CHECK(last < 0.5 * first);
  CHECK(model.optimizer().iterations() == 30);

  // A LossScaleOptimizer of the user's is kept as it is; a float32 model gets none.
  K::Model plain = [] {
    auto i = K::Input({2});
    return K::Model(i, K::layers::Dense(1)(i));
  }();
  plain.compile({.optimizer = "sgd", .loss = "mse"});
  CHECK(plain.optimizer().class_name() == "SGD");
  K::Model mine = [] {
    MP::set_global_policy("mixed_float16");
    auto i = K::Input({2});
    K::Model m(i, K::layers::Dense(1)(i));
    MP::set_global_policy("float32");
    return m;
  }();
  mine.compile(
      {.optimizer = K::optimizers::LossScaleOptimizer(K::optimizers::SGD(0.1), {.initial_scale = 256}), .loss = "mse"});
  CHECK(mine.optimizer().loss_scale() == 256.f);
}

TEST_CASE(
    "keras archive: a dynamic LossScaleOptimizer's compile_config and state come back; a fixed one is not written") {
  K::set_random_seed(4);
  auto in = K::Input({3});
  K::Model model(in, K::layers::Dense(2)(in));
  model.compile({.optimizer = K::optimizers::LossScaleOptimizer(K::optimizers::Adam(0.01),
                                                                {.initial_scale = 1024, .dynamic_growth_steps = 2}),
                 .loss = "mse"});
  const K::Tensor x = random_tensor({4, 3}, 41), y = random_tensor({4, 2}, 42);
  for (int s = 0; s < 3; ++s) model.train_on_batch(x, y);  // the scale grew once (after 2 steps)
  const std::string path = (std::filesystem::temp_directory_path() / "kerascpp_lso_archive.keras").string();
  model.save(path);
  K::Model loaded = K::load_model(path);
  REQUIRE(loaded.compiled());
  REQUIRE(loaded.optimizer().class_name() == "LossScaleOptimizer");
  const auto& lso = dynamic_cast<const K::optimizers::LossScaleOptimizer&>(loaded.optimizer());
  CHECK(lso.inner_optimizer().class_name() == "Adam");
  CHECK(lso.options().dynamic_growth_steps == 2);
  CHECK(loaded.optimizer().loss_scale() == model.optimizer().loss_scale());
  CHECK(loaded.optimizer().loss_scale() == 2048.f);
  for (int s = 0; s < 2; ++s) {
    model.train_on_batch(x, y);
    loaded.train_on_batch(x, y);
  }
  CHECK(loaded.get_weights()[0].to_vector() == model.get_weights()[0].to_vector());

  K::Model fixed(in, K::layers::Dense(2)(in));
  fixed.compile(
      {.optimizer = K::optimizers::LossScaleOptimizer(K::optimizers::SGD(0.1), {.dynamic = false}), .loss = "mse"});
  fixed.save(path);
  CHECK_FALSE(K::load_model(path).compiled());  // Keras 3 has no fixed loss scale to write
  std::filesystem::remove(path);
}
