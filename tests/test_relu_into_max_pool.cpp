// The ReLU-into-max-pooling fusion (LayerState::output_grad_past_relu and output_relu_deferred,
// Backend::pool2d_backward_through_relu and pool2d_forward_relu): the CPU's mask at the pooled
// resolution gives what pooling's backward followed by ReLU's gives, bit for bit, NaN included;
// the ReLU after the pooling gives the pooling of the ReLU's output; the graph moves a layer's
// ReLU into the max pooling it alone feeds and nowhere else; the pooling's per-channel sums of
// its gradient (the producer's bias gradient) are that gradient's sums; and a network trained
// with it ends with the same bits as the one with the ReLU as a layer of its own.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "bit_equal.hpp"
#include "full_mantissa_tensor.hpp"
#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing.hpp"
#include "pool_cases.hpp"

namespace K = kerascpp;
using kerascpp_test::cast;
using kerascpp_test::for_each_run;
using kerascpp_test::PoolCase;
using kerascpp_test::relu_pair;
using kerascpp_test::set;

namespace {

// Passes its input through as a layer ending in a ReLU would, and records what the graph told
// its backward.
class ReluEndProbe : public K::Layer {
 public:
  ReluEndProbe() : K::Layer("relu_end_probe") {}
  std::string class_name() const override { return "ReluEndProbe"; }
  bool ends_in_relu() const override { return true; }
  bool needs_gradient() override { return true; }
  std::vector<K::Shape> compute_output_shapes(const std::vector<K::Shape>& in) override { return {in.at(0)}; }
  std::vector<K::Tensor> forward(K::ReplicaContext&, const std::vector<K::Tensor>& in, K::LayerState& st) override {
    relu_deferred = st.output_relu_deferred ? 1 : 0;
    return {in.at(0)};
  }
  std::vector<K::Tensor> backward(K::ReplicaContext&, const std::vector<K::Tensor>&, const std::vector<K::Tensor>&,
                                  const std::vector<K::Tensor>& grads, K::LayerState& st) override {
    grad_past_relu = st.output_grad_past_relu ? 1 : 0;
    ++(st.output_grad_past_relu ? calls_past : calls_not_past);
    return grads;
  }
  std::atomic<int> grad_past_relu{-1};  // the last call's flag; -1: backward never ran
  std::atomic<int> relu_deferred{-1};   // the last forward call's flag
  std::atomic<int> calls_past{0}, calls_not_past{0};
};

}  // namespace

TEST_CASE("pool2d_backward_through_relu equals pool2d_backward then relu's activation_backward, bit for bit" *
          doctest::test_suite("16-bit activations")) {
  auto be = K::make_cpu_backend(2);
  for_each_run(*be, [&](const PoolCase& c, K::DType dtype, bool nan_input) {
    const K::Tensor x = relu_pair(*be, c, dtype, nan_input).x;
    K::Tensor y, workspace;
    be->pool2d_forward(x, c.g, y, workspace);
    // NaN, Inf and -Inf gradients in masked windows (y = 0: the ReLU's backward gives NaN for
    // them), a NaN and a -0 in windows that pass.
    std::vector<std::int64_t> masked, passed;
    const std::vector<float> yv = cast(*be, y, K::DType::float32).to_vector();
    for (std::size_t i = 0; i < yv.size(); ++i)
      (yv[i] == 0.f ? masked : passed).push_back(static_cast<std::int64_t>(i));
    REQUIRE(masked.size() >= 3);
    REQUIRE(passed.size() >= 2);
    K::Tensor dy32 = kerascpp_test::full_mantissa_tensor(y.shape(), 12);
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    set(dy32, masked[0], nan);
    set(dy32, masked[1], inf);
    set(dy32, masked[2], -inf);
    set(dy32, passed[0], nan);
    set(dy32, passed[1], -0.f);
    const K::Tensor dy = dtype == K::DType::float32 ? dy32 : cast(*be, dy32, dtype);

    K::Tensor fused(x.shape(), dtype), stated(x.shape(), dtype), fallback(x.shape(), dtype);
    be->pool2d_backward_through_relu(dy, x, y, c.g, workspace, fused);
    be->pool2d_backward(dy, x, c.g, workspace, stated);
    be->activation_backward(K::ActivationKind::relu, x, stated, stated);
    be->K::Backend::pool2d_backward_through_relu(dy, x, y, c.g, workspace, fallback);
    CHECK(kerascpp_test::bit_equal(fused, stated));
    CHECK(kerascpp_test::bit_equal(fallback, stated));
  });
}

// dx_channel_sums, the producer's bias gradient: the CPU takes it at the pooled resolution on
// float32 through disjoint max windows, summing in another order than a pass over dx would (so
// equal to a few ulps, not bit for bit), and leaves it undefined everywhere else.
TEST_CASE("pool2d_backward_through_relu's channel sums are dx summed per channel, where the CPU takes them" *
          doctest::test_suite("16-bit activations")) {
  auto be = K::make_cpu_backend(2);
  int taken = 0;
  for_each_run(*be, [&](const PoolCase& c, K::DType dtype, bool nan_input) {
    const K::Tensor x = relu_pair(*be, c, dtype, nan_input).x;
    K::Tensor y, workspace;
    be->pool2d_forward(x, c.g, y, workspace);
    K::Tensor dy = kerascpp_test::full_mantissa_tensor(y.shape(), 13);
    set(dy, 1, std::numeric_limits<float>::infinity());  // an Inf in the sums where it passes the mask
    if (dtype != K::DType::float32) dy = cast(*be, dy, dtype);
    K::Tensor dx(x.shape(), dtype), sums = K::Tensor::zeros({1});  // a stale value must not survive
    be->pool2d_backward_through_relu(dy, x, y, c.g, workspace, dx, &sums);
    const bool disjoint_max = c.g.kind == K::PoolKind::max && c.g.stride_h >= c.g.pool_h;
    REQUIRE(sums.defined() == (disjoint_max && dtype == K::DType::float32));
    if (!sums.defined()) return;
    ++taken;
    K::Tensor expected;
    be->sum_to_last_axis(dx, expected, false);
    REQUIRE(sums.shape() == expected.shape());
    const std::vector<float> got = sums.to_vector(), want = expected.to_vector();
    for (std::size_t ch = 0; ch < want.size(); ++ch) {
      CAPTURE(ch);
      if (std::isnan(want[ch])) CHECK(std::isnan(got[ch]));
      else if (std::isinf(want[ch])) CHECK(got[ch] == want[ch]);
      else CHECK(got[ch] == doctest::Approx(want[ch]).epsilon(1e-6));
    }
  });
  CHECK(taken == 8);  // the four disjoint cases in float32, with and without a NaN input
  SUBCASE("not under a 16-bit compute dtype: the producer's convolution sums its rounded gradient") {
    const PoolCase c = kerascpp_test::pool_cases().front();
    const K::Tensor x = relu_pair(*be, c, K::DType::float32, false).x;
    K::Tensor y, workspace, dx(x.shape()), sums = K::Tensor::zeros({1});
    be->pool2d_forward(x, c.g, y, workspace);
    be->set_compute_dtype(K::DType::bfloat16);
    be->pool2d_backward_through_relu(kerascpp_test::full_mantissa_tensor(y.shape(), 13), x, y, c.g, workspace, dx,
                                     &sums);
    be->set_compute_dtype(K::DType::float32);
    CHECK_FALSE(sums.defined());
  }
}

TEST_CASE("pool2d_forward_relu equals max pooling of relu(x) bit for bit, and pairs with its backward" *
          doctest::test_suite("16-bit activations")) {
  auto be = K::make_cpu_backend(2);
  for_each_run(*be, [&](const PoolCase& c, K::DType dtype, bool nan_input) {
    const auto [z, x] = relu_pair(*be, c, dtype, nan_input);
    if (c.g.kind != K::PoolKind::max) {  // only max pooling commutes with the ReLU
      K::Tensor y, workspace;
      CHECK_THROWS_AS(be->pool2d_forward_relu(z, c.g, y, workspace), K::ValueError);
      return;
    }

    K::Tensor stated, stated_ws, fused, fused_ws, fallback, fallback_ws;
    be->pool2d_forward(x, c.g, stated, stated_ws);
    be->pool2d_forward_relu(z, c.g, fused, fused_ws);
    be->K::Backend::pool2d_forward_relu(z, c.g, fallback, fallback_ws);
    CHECK(kerascpp_test::bit_equal(fused, stated));
    CHECK(kerascpp_test::bit_equal(fallback, stated));

    // The backward from z and the fused forward's workspace gives what the one from relu(z)
    // gives, for finite gradients (a NaN or Inf one in a window of negatives lands on z's
    // argmax, not relu(z)'s first zero: Backend::pool2d_backward_through_relu) and a NaN and
    // a -0 in windows that pass.
    std::vector<std::int64_t> passed;
    const std::vector<float> yv = cast(*be, stated, K::DType::float32).to_vector();
    for (std::size_t i = 0; i < yv.size(); ++i)
      if (!(yv[i] == 0.f)) passed.push_back(static_cast<std::int64_t>(i));
    REQUIRE(passed.size() >= 2);
    REQUIRE(passed.size() + 3 <= yv.size());  // and windows of negatives
    K::Tensor dy32 = kerascpp_test::full_mantissa_tensor(stated.shape(), 12);
    set(dy32, passed[0], std::numeric_limits<float>::quiet_NaN());
    set(dy32, passed[1], -0.f);
    const K::Tensor dy = dtype == K::DType::float32 ? dy32 : cast(*be, dy32, dtype);
    K::Tensor from_relu(x.shape(), dtype), from_z(x.shape(), dtype);
    be->pool2d_backward_through_relu(dy, x, stated, c.g, stated_ws, from_relu);
    be->pool2d_backward_through_relu(dy, z, fused, c.g, fused_ws, from_z);
    CHECK(kerascpp_test::bit_equal(from_z, from_relu));
  });
}

TEST_CASE("the graph moves a ReLU's backward into the max pooling it alone feeds, and nowhere else" *
          doctest::test_suite("16-bit activations")) {
  const K::Tensor x = kerascpp_test::full_mantissa_tensor({4, 6, 6, 2}, 3);
  const K::Tensor labels = K::Tensor::from_vector({4}, std::vector<std::int32_t>{0, 1, 2, 1});
  // Conv2D -> probe -> `after` -> Flatten -> Dense(3); with `branch`, the probe's output also
  // feeds a Flatten -> Dense(3) whose logits are added.
  auto grad_past_relu = [&](K::LayerRef after, bool branch) {
    auto in = K::Input({6, 6, 2});
    auto probe = std::make_shared<ReluEndProbe>();
    auto p = (*probe)(K::layers::Conv2D(4, 3, {.padding = K::Padding::same})(in));
    auto logits = K::layers::Dense(3)(K::layers::Flatten()((*after)(p)));
    if (branch) logits = K::layers::Add()({logits, K::layers::Dense(3)(K::layers::Flatten()(p))});
    K::Model model(in, logits);
    model.compile({.optimizer = "sgd", .loss = K::losses::SparseCategoricalCrossentropy({.from_logits = true})});
    model.train_on_batch(x, labels);
    // The forward moves with the backward (both poolings that absorb one absorb the other).
    CHECK(probe->relu_deferred.load() == probe->grad_past_relu.load());
    return probe->grad_past_relu.load();
  };
  CHECK(grad_past_relu(K::layers::MaxPooling2D(2), false) == 1);
  CHECK(grad_past_relu(K::layers::MaxPooling2D(2), true) == 0);       // a second consumer
  CHECK(grad_past_relu(K::layers::AveragePooling2D(2), false) == 0);  // not a max pooling
  CHECK(grad_past_relu(K::layers::Dropout(0.5), false) == 0);         // not a pooling
  SUBCASE("one layer called twice: the flag is per call") {
    auto in = K::Input({6, 6, 2});
    auto probe = std::make_shared<ReluEndProbe>();
    auto conv = K::layers::Conv2D(4, 3, {.padding = K::Padding::same});
    auto pooled = K::layers::MaxPooling2D(2)((*probe)((*conv)(in)));
    auto other = (*probe)(K::layers::Conv2D(4, 3, {.padding = K::Padding::same})(in));
    auto logits = K::layers::Add()(
        {K::layers::Dense(3)(K::layers::Flatten()(pooled)), K::layers::Dense(3)(K::layers::Flatten()(other))});
    K::Model model(in, logits);
    model.compile({.optimizer = "sgd", .loss = K::losses::SparseCategoricalCrossentropy({.from_logits = true})});
    model.train_on_batch(x, labels);
    CHECK(probe->calls_past == 1);
    CHECK(probe->calls_not_past == 1);
  }
}

TEST_CASE("Conv2D(relu) -> MaxPooling2D trains to the same bits as Conv2D -> Activation(relu) -> MaxPooling2D" *
          doctest::test_suite("16-bit activations")) {
  const K::Tensor x = kerascpp_test::full_mantissa_tensor({16, 12, 12, 2}, 5);
  std::vector<std::int32_t> labels(16);
  for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<std::int32_t>(i % 3);
  const K::Tensor y = K::Tensor::from_vector({16}, labels);
  // Two conv-relu-pool stages, the second pooling padded (4x4 windows at stride 4 on 6x6, "same":
  // one row and column of padding on each side); `separate`: each ReLU as its own layer.
  // The fused model's bias gradients are summed at the pooled resolution, in another order than
  // the separate model's pass over the full gradient; both sum float32 terms in double, so the
  // float32 results agree unless a double rounding falls on a float32 rounding boundary, which
  // these data never hit (and the training fingerprints did not either).
  // conv_dtype "mixed_bfloat16": the convolutions alone compute in bfloat16 while the poolings
  // stay float32, so a pooling takes the bias sums in float32 and its Conv2D must not use them
  // (it sums the gradient as it rounded it, as the separate network's Conv2D does).
  auto build = [&](bool separate, const std::string& conv_dtype) {
    auto in = K::Input({12, 12, 2});
    auto stage = [&](K::KerasTensor h, int filters, K::LayerRef pool) {
      if (separate)
        h = K::layers::Activation("relu")(
            K::layers::Conv2D(filters, 3, {.padding = K::Padding::same, .dtype = conv_dtype})(h));
      else
        h = K::layers::Conv2D(filters, 3, {.padding = K::Padding::same, .activation = "relu", .dtype = conv_dtype})(h);
      return (*pool)(h);
    };
    auto h = stage(in, 6, K::layers::MaxPooling2D(2));
    h = stage(h, 8, K::layers::MaxPooling2D(4, {.strides = 4, .padding = K::Padding::same}));
    return K::Model(in, K::layers::Dense(3)(K::layers::Flatten()(h)));
  };
  for (const std::string conv_dtype : {"", "mixed_bfloat16"})
    for (int replicas : {1, 2}) {
      CAPTURE(conv_dtype);
      CAPTURE(replicas);
      K::set_random_seed(21);
      K::Model fused = build(false, conv_dtype);
      K::Model separate = build(true, conv_dtype);
      separate.set_weights(fused.get_weights());
      for (K::Model* m : {&fused, &separate})
        m->compile({.optimizer = K::optimizers::Adam(0.01),
                    .loss = K::losses::SparseCategoricalCrossentropy({.from_logits = true}),
                    .distribute = K::distribute::MirroredStrategy<>(replicas)});
      std::vector<double> losses;
      for (int step = 0; step < 5; ++step) {
        const double a = fused.train_on_batch(x, y)["loss"], b = separate.train_on_batch(x, y)["loss"];
        CHECK(a == b);
        losses.push_back(a);
      }
      CHECK(losses.back() < losses.front());
      const auto wf = fused.get_weights(), ws = separate.get_weights();
      REQUIRE(wf.size() == ws.size());
      for (std::size_t i = 0; i < wf.size(); ++i) CHECK(kerascpp_test::bit_equal(wf[i], ws[i]));
    }
}
