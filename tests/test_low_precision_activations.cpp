// Mixed precision's 16-bit activations between layers (Backend::low_precision_activations,
// Layer::low_precision_io): the CPU ops that take bfloat16/float16 activations give what float32
// tensors holding the same values give, rounded once; the graph hands 16 bits only to layers that
// take them and keeps model outputs float32; training with them follows float32. ctest runs the
// "bfloat16" cases again with oneDNN held to AVX2, where activations stay float32.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "bf16_expectations.hpp"
#include "bit_equal.hpp"
#include "cast_tensor.hpp"
#include "full_mantissa_tensor.hpp"
#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing.hpp"

namespace K = kerascpp;
namespace MP = kerascpp::mixed_precision;
using kerascpp_test::cast;

namespace {

K::Tensor random_tensor(const K::Shape& shape, std::uint32_t seed) {
  return kerascpp_test::full_mantissa_tensor(shape, seed);
}

// The 16-bit dtypes whose activations this machine keeps in 16 bits (the rest say why not).
std::vector<K::DType> activation_dtypes(K::Backend& be) {
  if (kerascpp_test::bf16_activations_must_be_on()) CHECK(be.low_precision_activations(K::DType::bfloat16));
  std::vector<K::DType> out;
  for (K::DType dtype : {K::DType::bfloat16, K::DType::float16}) {
    if (be.low_precision_activations(dtype)) out.push_back(dtype);
    else
      MESSAGE("skipped " << std::string(K::dtype_name(dtype)) << ": activations stay float32 here ("
                         << MP::compute_path(be, dtype) << ")");
  }
  return out;
}

// A 16-bit result against the float32 one rounded to 16 bits: equal, or one 16-bit step apart
// where the two kernels' float32 sums differ in a last bit that decides the rounding.
bool one_rounding(K::Backend& be, const K::Tensor& low, const K::Tensor& f32) {
  const double step = low.dtype() == K::DType::bfloat16 ? 1.0 / 128 : 1.0 / 1024;
  return low.dtype() != K::DType::float32 &&
         K::testing::allclose(cast(be, low, K::DType::float32), cast(be, cast(be, f32, low.dtype()), K::DType::float32),
                              step, 1e-6);
}

// Passes its input through, taking 16 bits as `io` says, and records the dtypes it saw.
class DTypeProbe : public K::Layer {
 public:
  explicit DTypeProbe(LowPrecisionIO io) : K::Layer("probe"), io_(io) {}
  std::string class_name() const override { return "DTypeProbe"; }
  LowPrecisionIO low_precision_io() const override { return io_; }
  std::vector<K::Shape> compute_output_shapes(const std::vector<K::Shape>& in) override { return {in.at(0)}; }
  std::vector<K::Tensor> forward(K::ReplicaContext&, const std::vector<K::Tensor>& in, K::LayerState& st) override {
    seen_forward = in.at(0).dtype();
    asked_output = st.output_dtype;
    return {in.at(0)};
  }
  std::vector<K::Tensor> backward(K::ReplicaContext&, const std::vector<K::Tensor>&, const std::vector<K::Tensor>&,
                                  const std::vector<K::Tensor>& grads, K::LayerState&) override {
    seen_backward = grads.at(0).dtype();
    return grads;
  }
  // Atomic: replicas call one layer from their own threads.
  std::atomic<K::DType> seen_forward{K::DType::int64}, asked_output{K::DType::int64}, seen_backward{K::DType::int64};

 private:
  LowPrecisionIO io_;
};

struct GlobalPolicyReset {
  ~GlobalPolicyReset() { MP::set_global_policy("float32"); }
};

}  // namespace

TEST_CASE("16-bit activations (bfloat16/float16): conv, dense, matmul, relu, pooling and bias sums on them" *
          doctest::test_suite("16-bit activations")) {
  auto be = K::make_cpu_backend(2);
  for (K::DType dtype : activation_dtypes(*be)) {
    const std::string name = K::dtype_name(dtype);
    CAPTURE(name);
    be->set_compute_dtype(dtype);
    auto low = [&](const K::Tensor& t) { return cast(*be, t, dtype); };
    auto wide = [&](const K::Tensor& t) { return cast(*be, t, K::DType::float32); };

    // Conv2D with ReLU, forward and the fused backward: the weight and bias gradients read the
    // same 16-bit operands either way, so they match bit for bit.
    const K::Conv2DGeometry g{.kernel_h = 3,
                              .kernel_w = 3,
                              .stride_h = 1,
                              .stride_w = 2,
                              .pad_top = 1,
                              .pad_left = 1,
                              .pad_bottom = 1,
                              .pad_right = 1};
    const K::Tensor x16 = low(random_tensor({4, 9, 10, 8}, 1)), w = random_tensor({3, 3, 8, 16}, 2),
                    b = random_tensor({16}, 3);
    K::Tensor y32;
    be->conv2d_forward(wide(x16), w, b, g, K::ActivationKind::relu, y32);
    K::Tensor y16(y32.shape(), dtype);
    be->conv2d_forward(x16, w, b, g, K::ActivationKind::relu, y16);
    CHECK(one_rounding(*be, y16, y32));
    const K::Tensor dy16 = low(random_tensor(y16.shape(), 4));
    K::Tensor dw, db({16}), dx16(x16.shape(), dtype), dw_ref, db_ref({16}), dx32(x16.shape());
    be->conv2d_backward(K::ActivationKind::relu, x16, y16, dy16, w, g, dw, db, false, dx16);
    be->conv2d_backward(K::ActivationKind::relu, wide(x16), wide(y16), wide(dy16), w, g, dw_ref, db_ref, false, dx32);
    CHECK(kerascpp_test::bit_equal(dw, dw_ref));
    CHECK(kerascpp_test::bit_equal(db, db_ref));
    CHECK(one_rounding(*be, dx16, dx32));

    // Dense: ReLU in 16 bits is the float32 ReLU of the linear output, NaN kept (row 0).
    K::Tensor a = random_tensor({33, 70}, 5);
    a.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
    const K::Tensor a16 = low(a), k = random_tensor({70, 45}, 6), kb = random_tensor({45}, 7);
    K::Tensor lin16({33, 45}, dtype), relu16({33, 45}, dtype), relu32;
    be->dense_forward(a16, k, kb, K::ActivationKind::linear, lin16);
    be->dense_forward(a16, k, kb, K::ActivationKind::relu, relu16);
    be->activation_forward(K::ActivationKind::relu, wide(lin16), relu32);
    CHECK(kerascpp_test::bit_equal(relu16, low(relu32)));
    CHECK(std::isnan(wide(relu16).data<float>()[0]));
    K::Tensor lin32;
    be->dense_forward(wide(a16), k, kb, K::ActivationKind::linear, lin32);
    CHECK(one_rounding(*be, lin16.slice(1, 33), lin32.slice(1, 33)));

    // matmul: a 16-bit product, and a float32 one from 16-bit operands (the weight gradient).
    const K::Tensor m16 = low(random_tensor({33, 70}, 8)), dz16 = low(random_tensor({33, 45}, 9));
    K::Tensor c16({33, 45}, dtype), c32, g32, g_ref;
    be->matmul(m16, false, k, false, c16, false);
    be->matmul(wide(m16), false, k, false, c32, false);
    CHECK(one_rounding(*be, c16, c32));
    be->matmul(m16, true, dz16, false, g32, false);
    be->matmul(wide(m16), true, wide(dz16), false, g_ref, false);
    CHECK(kerascpp_test::bit_equal(g32, g_ref));

    // ReLU's backward, NaN and Inf gradients included; the bias sum over 16-bit rows.
    K::Tensor r = random_tensor({6, 50}, 10), dr = random_tensor({6, 50}, 11);
    r.data<float>()[1] = 1.f, dr.data<float>()[1] = std::numeric_limits<float>::quiet_NaN();
    r.data<float>()[2] = -1.f, dr.data<float>()[2] = std::numeric_limits<float>::infinity();
    r.data<float>()[3] = -0.f;
    const K::Tensor r16 = low(r), dr16 = low(dr);
    K::Tensor dz, dz_ref;
    be->activation_backward(K::ActivationKind::relu, r16, dr16, dz);
    be->activation_backward(K::ActivationKind::relu, wide(r16), wide(dr16), dz_ref);
    CHECK(dz.dtype() == dtype);
    CHECK(kerascpp_test::bit_equal(dz, low(dz_ref)));
    K::Tensor s16, s32;
    be->sum_to_last_axis(c16, s16, false);
    be->sum_to_last_axis(wide(c16), s32, false);
    CHECK(kerascpp_test::bit_equal(s16, s32));

    // Pooling keeps its input's dtype: max exactly (a NaN window stays NaN), average to one rounding.
    K::Tensor p = random_tensor({2, 9, 9, 8}, 12);
    p.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
    const K::Tensor p16 = low(p);
    auto pool_geometry = [](K::PoolKind kind) {
      return K::Pool2DGeometry{.kind = kind,
                               .pool_h = 2,
                               .pool_w = 2,
                               .stride_h = 2,
                               .stride_w = 2,
                               .pad_top = 0,
                               .pad_left = 0,
                               .pad_bottom = 1,
                               .pad_right = 1};
    };
    for (K::PoolKind kind : {K::PoolKind::max, K::PoolKind::average}) {
      CAPTURE(static_cast<int>(kind));
      const K::Pool2DGeometry pg = pool_geometry(kind);
      K::Tensor q16, q32, ws16, ws32;
      be->pool2d_forward(p16, pg, q16, ws16);
      be->pool2d_forward(wide(p16), pg, q32, ws32);
      CHECK(q16.dtype() == dtype);
      CHECK(std::isnan(wide(q16).data<float>()[5]));
      const K::Tensor dq16 = low(random_tensor(q16.shape(), 13));
      K::Tensor dp16, dp32;
      be->pool2d_backward(dq16, p16, pg, ws16, dp16);
      be->pool2d_backward(wide(dq16), wide(p16), pg, ws32, dp32);
      CHECK(dp16.dtype() == dtype);
      if (kind == K::PoolKind::max) {
        CHECK(kerascpp_test::bit_equal(q16, low(q32)));
        CHECK(kerascpp_test::bit_equal(dp16, low(dp32)));  // windows do not overlap: each dy lands once
      } else {
        CHECK(one_rounding(*be, q16.slice(1, 2), q32.slice(1, 2)));  // sample 0 holds the NaN
        CHECK(one_rounding(*be, dp16, dp32));
      }
    }

    // 16-bit activations are for ops computing in that dtype; elsewhere they are a clear error.
    K::Tensor q_f32({2, 5, 5, 8}), ws;
    CHECK_THROWS_WITH_AS(be->pool2d_forward(p16, pool_geometry(K::PoolKind::max), q_f32, ws),
                         doctest::Contains("pooling keeps its input's dtype"), K::ShapeError);
    be->set_compute_dtype(K::DType::float32);
    K::Tensor y_again(y32.shape(), dtype);
    CHECK_THROWS_WITH_AS(be->conv2d_forward(x16, w, b, g, K::ActivationKind::relu, y_again),
                         doctest::Contains("cast it first"), K::ShapeError);
  }
}

TEST_CASE("16-bit ReLU backward on every bit pattern: what widening, the float32 op and narrowing give" *
          doctest::test_suite("16-bit activations")) {
  auto be = K::make_cpu_backend(2);
  for (K::DType dtype : activation_dtypes(*be)) {
    const std::string name = K::dtype_name(dtype);
    CAPTURE(name);
    be->set_compute_dtype(dtype);
    const bool bf16 = dtype == K::DType::bfloat16;
    const std::uint16_t inf = bf16 ? 0x7F80 : 0x7C00, one = bf16 ? 0x3F80 : 0x3C00,
                        smallest_normal = bf16 ? 0x0080 : 0x0400, quiet_nan = bf16 ? 0x7FC0 : 0x7E00;
    // Both signs of zero, the smallest subnormal and normal, one, the largest finite, the
    // infinities, quiet and signalling NaNs of both signs, arbitrary values.
    std::vector<std::uint16_t> probes{0x0000,
                                      0x0001,
                                      smallest_normal,
                                      one,
                                      static_cast<std::uint16_t>(inf - 1),
                                      inf,
                                      static_cast<std::uint16_t>(inf + 1),
                                      quiet_nan,
                                      0x7FFF,
                                      0x1234};
    for (std::size_t i = 0, n = probes.size(); i < n; ++i) probes.push_back(probes[i] | 0x8000);
    // Every 16-bit pattern as the gradient against each probe as y, and as y against each probe.
    std::vector<std::uint16_t> y_bits, dy_bits;
    for (std::uint32_t v = 0; v < 65536; ++v)
      for (std::uint16_t p : probes) {
        y_bits.push_back(p), dy_bits.push_back(static_cast<std::uint16_t>(v));
        y_bits.push_back(static_cast<std::uint16_t>(v)), dy_bits.push_back(p);
      }
    const auto n = static_cast<std::int64_t>(y_bits.size());
    K::Tensor y16({n}, dtype), dy16({n}, dtype);
    std::memcpy(y16.raw(), y_bits.data(), y_bits.size() * 2);
    std::memcpy(dy16.raw(), dy_bits.data(), dy_bits.size() * 2);
    K::Tensor dz, dz32;
    be->activation_backward(K::ActivationKind::relu, y16, dy16, dz);
    be->activation_backward(K::ActivationKind::relu, cast(*be, y16, K::DType::float32),
                            cast(*be, dy16, K::DType::float32), dz32);
    CHECK(kerascpp_test::bit_equal(dz, cast(*be, dz32, dtype)));
  }
}

TEST_CASE("mixed_bfloat16 graph: 16-bit activations only between layers that take them; outputs stay float32" *
          doctest::test_suite("16-bit activations")) {
  GlobalPolicyReset reset;
  const bool kept = K::make_cpu_backend(1)->low_precision_activations(K::DType::bfloat16);
  const K::DType between = kept ? K::DType::bfloat16 : K::DType::float32;
  MESSAGE("bfloat16 activations between layers here: " << std::string(kept ? "yes" : "no, float32"));
  const K::Tensor x = random_tensor({6, 8, 8, 1}, 20);
  const K::Tensor y = K::Tensor::from_vector({6}, std::vector<std::int32_t>{0, 1, 2, 0, 1, 2});
  // Conv2D -> probe -> Flatten -> Dense -> Dense, the probe made under `probe_policy`; or with
  // `probe_first` the probe straight after the (float32) Input.
  auto run = [&](K::Layer::LowPrecisionIO io, const std::string& probe_policy, bool probe_first = false) {
    MP::set_global_policy("mixed_bfloat16");
    K::set_random_seed(3);
    auto in = K::Input({8, 8, 1});
    auto probe = std::make_shared<DTypeProbe>(io);
    probe->set_dtype_policy(probe_policy);
    auto conv = K::layers::Conv2D(4, 3, {.activation = "relu"});
    auto h = probe_first ? (*conv)((*probe)(in)) : (*probe)((*conv)(in));
    h = K::layers::Flatten()(h);
    K::Model model(in, K::layers::Dense(3)(K::layers::Dense(8, {.activation = "relu"})(h)));
    MP::set_global_policy("float32");
    model.compile({.optimizer = "sgd", .loss = K::losses::SparseCategoricalCrossentropy({.from_logits = true})});
    const double loss = model.train_on_batch(x, y)["loss"];
    CHECK(std::isfinite(loss));
    CHECK(model.predict_on_batch(x).dtype() == K::DType::float32);
    return probe;
  };
  SUBCASE("a layer that takes 16 bits gets them, forward and backward") {
    auto probe = run(K::Layer::LowPrecisionIO::same_as_output, "mixed_bfloat16");
    CHECK(probe->seen_forward == between);
    CHECK(probe->asked_output == between);
    CHECK(probe->seen_backward == between);
  }
  SUBCASE("a layer that does not (the default) sees float32") {
    auto probe = run(K::Layer::LowPrecisionIO::none, "mixed_bfloat16");
    CHECK(probe->seen_forward == K::DType::float32);
    CHECK(probe->asked_output == K::DType::float32);
    CHECK(probe->seen_backward == K::DType::float32);
  }
  SUBCASE("a float32 layer sees float32") {
    auto probe = run(K::Layer::LowPrecisionIO::same_as_output, "float32");
    CHECK(probe->seen_forward == K::DType::float32);
    CHECK(probe->asked_output == K::DType::float32);
    CHECK(probe->seen_backward == K::DType::float32);
  }
  SUBCASE("a layer that passes its input's dtype on stays float32 after a float32 one (no cast of its input)") {
    auto probe = run(K::Layer::LowPrecisionIO::same_as_output, "mixed_bfloat16", true);
    CHECK(probe->seen_forward == K::DType::float32);
    CHECK(probe->asked_output == K::DType::float32);
    CHECK(probe->seen_backward == K::DType::int64);  // nothing to train before it: no backward
  }
}

TEST_CASE("mixed_bfloat16 training with a branch: 16-bit gradients summed, a loss that follows float32's" *
          doctest::test_suite("16-bit activations")) {
  GlobalPolicyReset reset;
  const K::Tensor x = random_tensor({64, 6, 6, 2}, 30);
  std::vector<std::int32_t> labels(64);
  const auto xv = x.to_vector();
  for (std::size_t n = 0; n < labels.size(); ++n)  // the class: which channel has more mass
    labels[n] = [&] {
      double c[2] = {0, 0};
      for (std::size_t i = 0; i < 72; ++i) c[i % 2] += xv[n * 72 + i];
      return c[1] > c[0] ? 1 : 0;
    }();
  const K::Tensor y = K::Tensor::from_vector({64}, labels);
  // One convolution feeding two Dense branches: its output gradient is the sum of two. The
  // probe between them shows the dtypes.
  std::shared_ptr<DTypeProbe> probe;
  auto train = [&](const std::string& policy, K::distribute::Strategy strategy) {
    MP::set_global_policy(policy);
    K::set_random_seed(8);
    auto in = K::Input({6, 6, 2});
    probe = std::make_shared<DTypeProbe>(K::Layer::LowPrecisionIO::same_as_output);
    auto h = K::layers::Flatten()((*probe)(K::layers::Conv2D(6, 3, {.activation = "relu"})(in)));
    auto a = K::layers::Dense(8, {.activation = "relu"})(h);
    auto b = K::layers::Dense(8)(h);
    K::Model model(in, K::layers::Dense(2)(K::layers::Concatenate()({a, b})));
    MP::set_global_policy("float32");
    model.compile({.optimizer = K::optimizers::Adam(0.01),
                   .loss = K::losses::SparseCategoricalCrossentropy({.from_logits = true}),
                   .distribute = strategy});
    std::vector<double> losses;
    for (int s = 0; s < 30; ++s) losses.push_back(model.train_on_batch(x, y)["loss"]);
    return std::pair{std::move(model), losses};
  };
  auto [f32, f32_losses] = train("float32", K::distribute::OneDeviceStrategy());
  auto [bf16, bf16_losses] = train("mixed_bfloat16", K::distribute::OneDeviceStrategy());
  const bool kept = K::make_cpu_backend(1)->low_precision_activations(K::DType::bfloat16);
  CHECK(probe->seen_forward == (kept ? K::DType::bfloat16 : K::DType::float32));
  CHECK(probe->seen_backward == (kept ? K::DType::bfloat16 : K::DType::float32));
  auto [two, two_losses] = train("mixed_bfloat16", K::distribute::MirroredStrategy<>(2));
  CHECK(bf16_losses.back() < 0.5 * bf16_losses.front());
  CHECK(std::fabs(bf16_losses.back() - f32_losses.back()) < 0.1 * f32_losses.back() + 0.02);
  CHECK(std::fabs(two_losses.back() - bf16_losses.back()) < 0.05 * bf16_losses.back() + 0.01);
  for (const K::Tensor& w : bf16.get_weights()) CHECK(w.dtype() == K::DType::float32);
}
