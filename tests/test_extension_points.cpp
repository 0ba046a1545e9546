// What a user can add without touching the library: a layer, a loss and a metric written
// against the public headers only (examples/custom_extensions.hpp, the same code the
// custom_layer example runs), checked with the public gradient checker and run by fit() and
// evaluate() on one and on two replicas.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "../examples/custom_extensions.hpp"
#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing/gradient_check.hpp"

namespace K = kerascpp;

namespace {

// A Swish built on Input({features}) with beta set to `beta`.
std::shared_ptr<custom::Swish> built_swish(std::int64_t features, float beta) {
  auto swish = std::make_shared<custom::Swish>();
  (*swish)(K::Input({features}));
  swish->trainable_variables().at(0)->value(0).copy_from(K::Tensor::from_vector({1}, std::vector<float>{beta}));
  return swish;
}

// Bugs a hand-written backward typically has: the input gradient misses the beta term, or the
// variable gradient is never written.
class SwishWithoutBetaTerm : public custom::Swish {
 public:
  std::vector<K::Tensor> backward(K::ReplicaContext& ctx, const std::vector<K::Tensor>& inputs,
                                  const std::vector<K::Tensor>& outputs, const std::vector<K::Tensor>& output_grads,
                                  K::LayerState& state) override {
    custom::Swish::backward(ctx, inputs, outputs, output_grads, state);  // writes dL/dbeta correctly
    K::Tensor dx(inputs[0].shape());
    ctx.backend->multiply(output_grads[0], state.saved.at(0), dx);  // dy · s only
    return {dx};
  }
};

class SwishWithoutBetaGradient : public custom::Swish {
 public:
  std::vector<K::Tensor> backward(K::ReplicaContext& ctx, const std::vector<K::Tensor>& inputs,
                                  const std::vector<K::Tensor>& outputs, const std::vector<K::Tensor>& output_grads,
                                  K::LayerState& state) override {
    K::Tensor dx(inputs[0].shape());
    ctx.backend->multiply(output_grads[0], state.saved.at(0), dx);
    return {dx};
  }
};

// log_cosh with the gradient's factor 1/D forgotten, and one that ignores grad_scale.
class LogCoshWrongMean : public custom::LogCosh {
 public:
  void compute(K::Backend& backend, const K::Tensor& pred, const K::Tensor& target, K::Tensor& loss, K::Tensor& grad,
               float grad_scale) const override {
    custom::LogCosh::compute(backend, pred, target, loss, grad, grad_scale);
    if (grad.defined()) backend.scale(grad, static_cast<float>(pred.numel() / pred.dim(0)));
  }
};
class LogCoshIgnoresScale : public custom::LogCosh {
 public:
  void compute(K::Backend& backend, const K::Tensor& pred, const K::Tensor& target, K::Tensor& loss, K::Tensor& grad,
               float /*grad_scale*/) const override {
    custom::LogCosh::compute(backend, pred, target, loss, grad, 1.0f);
  }
};

double log_cosh(double e) { return std::log(std::cosh(e)); }

// A model whose output is its input (a Dense with an identity kernel and no bias), so that the
// loss and metric see exactly the predictions the test chooses.
K::Model identity_model(std::int64_t features) {
  auto in = K::Input({features});
  K::LayerRef dense = K::layers::Dense(features);
  auto out = dense(in);
  std::vector<float> eye(static_cast<std::size_t>(features * features), 0.f);
  for (std::int64_t i = 0; i < features; ++i) eye[static_cast<std::size_t>(i * features + i)] = 1.f;
  dense->trainable_variables().at(0)->value(0).copy_from(K::Tensor::from_vector({features, features}, eye));
  return K::Model(in, out);
}

// 5 examples of 2 values; the metric's tolerance is 0.1.
const std::vector<float> kPred = {0.5f, -1.f, 2.f, 0.f, 0.05f, 0.3f, -0.2f, 1.5f, 1.f, 1.f};
const std::vector<float> kTarget = {0.f, -1.f, 1.f, 1.f, 0.f, 0.f, -0.25f, 1.5f, 0.f, 2.f};

}  // namespace

TEST_CASE("extension points: a user's layer passes the public gradient check") {
  for (float beta : {0.7f, 1.f, 1.6f}) {
    CAPTURE(beta);
    auto swish = built_swish(5, beta);
    auto result = K::testing::check_layer_gradients(swish, {K::testing::uniform_tensor({6, 5}, 11, -2.f, 2.f)});
    INFO(result.summary());
    CHECK(result.passed());
    CHECK(result.problems.empty());
    CHECK(result.checked == 6 * 5 + 1);  // every input element and beta
    CHECK(result.worst_error <= 1e-3);
  }
  // An unbuilt layer is built by the checker on Input()s of the inputs' shapes.
  auto fresh = std::make_shared<custom::Swish>();
  CHECK_FALSE(fresh->built());
  auto result = K::testing::check_layer_gradients(fresh, {K::testing::uniform_tensor({3, 2, 4}, 12)});
  CHECK(fresh->built());
  CHECK_MESSAGE(result.passed(), result.summary());
  // Built-in layers go through the same public entry point.
  K::LayerRef dense = K::layers::Dense(3);
  auto dense_result = K::testing::check_layer_gradients(dense, {K::testing::uniform_tensor({4, 5}, 13)});
  CHECK_MESSAGE(dense_result.passed(), dense_result.summary());
  CHECK(dense_result.checked == 4 * 5 + 5 * 3 + 3);
}

TEST_CASE("extension points: the gradient checker catches a wrong backward") {
  SUBCASE("an input gradient missing a term") {
    auto bad = std::make_shared<SwishWithoutBetaTerm>();
    (*bad)(K::Input({5}));
    auto result = K::testing::check_layer_gradients(bad, {K::testing::uniform_tensor({6, 5}, 21, -2.f, 2.f)});
    CHECK_FALSE(result.passed());
    CHECK(result.worst_error > 5e-2);
    CHECK(result.worst_at.find("input 0") != std::string::npos);
    CHECK(result.summary().find("FAILED") != std::string::npos);
  }
  SUBCASE("a trainable variable that gets no gradient") {
    auto bad = std::make_shared<SwishWithoutBetaGradient>();
    (*bad)(K::Input({5}));
    auto result = K::testing::check_layer_gradients(bad, {K::testing::uniform_tensor({6, 5}, 22, -2.f, 2.f)});
    CHECK_FALSE(result.passed());
    REQUIRE(result.problems.size() == 1);
    CHECK(result.problems[0].find("/beta got no gradient") != std::string::npos);
  }
  SUBCASE("a loss gradient off by a factor, and a loss that ignores grad_scale") {
    K::Tensor pred = K::testing::uniform_tensor({4, 3}, 23, -2.f, 2.f);
    K::Tensor target = K::testing::uniform_tensor({4, 3}, 24, -2.f, 2.f);
    auto good = K::testing::check_loss_gradients(custom::LogCosh(), pred, target);
    CHECK_MESSAGE(good.passed(), good.summary());
    CHECK(good.checked == 12);
    auto wrong_mean = K::testing::check_loss_gradients(LogCoshWrongMean(), pred, target);
    CHECK_FALSE(wrong_mean.passed());
    CHECK(wrong_mean.worst_error > 5e-2);
    auto ignores_scale = K::testing::check_loss_gradients(LogCoshIgnoresScale(), pred, target);
    CHECK_FALSE(ignores_scale.passed());
    REQUIRE(ignores_scale.problems.size() == 1);
    CHECK(ignores_scale.problems[0].find("grad_scale") != std::string::npos);
    CHECK(ignores_scale.worst_error <= 5e-3);  // the gradient itself is right at scale 1
  }
}

TEST_CASE("extension points: a user's loss and metric give the numbers computed by hand") {
  K::Tensor pred = K::Tensor::from_vector({5, 2}, kPred);
  K::Tensor target = K::Tensor::from_vector({5, 2}, kTarget);

  // The loss called directly, as the engine calls it: caller-allocated loss [N] and grad.
  auto backend = K::make_cpu_backend(1);
  K::Tensor loss({5});
  K::Tensor grad({5, 2});
  const float scale = 0.125f;
  custom::LogCosh().compute(*backend, pred, target, loss, grad, scale);
  double mean_loss = 0;
  for (std::size_t n = 0; n < 5; ++n) {
    double e0 = kPred[2 * n] - static_cast<double>(kTarget[2 * n]);
    double e1 = kPred[2 * n + 1] - static_cast<double>(kTarget[2 * n + 1]);
    double expected = (log_cosh(e0) + log_cosh(e1)) / 2;
    mean_loss += expected / 5;
    CHECK(loss.to_vector()[n] == doctest::Approx(expected).epsilon(1e-6));
    CHECK(grad.to_vector()[2 * n] == doctest::Approx(std::tanh(e0) / 2 * scale).epsilon(1e-6));
    CHECK(grad.to_vector()[2 * n + 1] == doctest::Approx(std::tanh(e1) / 2 * scale).epsilon(1e-6));
  }

  // The metric directly: |p − t| <= 0.1 holds for (-1,-1), (0.05,0), (-0.2,-0.25), (1.5,1.5).
  auto sums = custom::WithinTolerance(0.1f).shard_sums(*backend, pred, target);
  CHECK(sums.sum == 4);
  CHECK(sums.count == 10);

  // Through compile() and evaluate(): the logs hold the loss's mean and the metric's sum / count,
  // next to a built-in metric given by name and one given as an object.
  K::Model model = identity_model(2);
  model.compile({.optimizer = "sgd",
                 .loss = custom::LogCosh(),
                 .metrics = {custom::WithinTolerance(0.1f), "mae", K::metrics::MeanAbsoluteError("mae_object")}});
  auto data = K::Dataset::from_tensor_slices(pred, target).batch(5);
  K::Logs logs = model.evaluate(data, {.verbose = 0});
  CHECK(logs.at("loss") == doctest::Approx(mean_loss).epsilon(1e-6));
  CHECK(logs.at("within_tolerance") == doctest::Approx(0.4));
  double mae = 0;
  for (std::size_t i = 0; i < kPred.size(); ++i) mae += std::fabs(kPred[i] - kTarget[i]) / 10.0;
  CHECK(logs.at("mae") == doctest::Approx(mae).epsilon(1e-6));
  CHECK(logs.at("mae_object") == logs.at("mae"));  // the built-in as an object: the same number
}

TEST_CASE("extension points: a user's metric totals over 2 replicas equal 1 replica") {
  K::Tensor pred = K::Tensor::from_vector({5, 2}, kPred);
  K::Tensor target = K::Tensor::from_vector({5, 2}, kTarget);
  auto evaluate = [&](int replicas, std::int64_t batch) {
    K::Model model = identity_model(2);
    K::CompileOptions options{
        .optimizer = "sgd", .loss = custom::LogCosh(), .metrics = {custom::WithinTolerance(0.1f)}};
    if (replicas > 1) options.distribute = K::distribute::MirroredStrategy<>(replicas);
    model.compile(options);
    return model.evaluate(K::Dataset::from_tensor_slices(pred, target).batch(batch), {.verbose = 0});
  };
  // 5 examples over 2 replicas: shards of 3 and 2, whose per-shard fractions (2/6, 2/4) would
  // average to another number than the exact 4/10.
  K::Logs one = evaluate(1, 5), two = evaluate(2, 5), two_small_batches = evaluate(2, 2);
  CHECK(one.at("within_tolerance") == 0.4);
  CHECK(two.at("within_tolerance") == one.at("within_tolerance"));
  CHECK(two_small_batches.at("within_tolerance") == one.at("within_tolerance"));
}

TEST_CASE("extension points: a user's layer, loss and metric train under MirroredStrategy") {
  K::set_random_seed(5);
  const std::int64_t n = 256;
  K::Tensor x = K::testing::uniform_tensor({n, 3}, 31);
  std::vector<float> y;
  for (std::int64_t i = 0; i < n; ++i) {
    const float* r = x.data<float>() + i * 3;
    y.push_back(r[0] - r[1] * r[2]);
  }
  auto in = K::Input({3});
  auto h = K::layers::Dense(8)(in);
  h = K::LayerRef(std::make_shared<custom::Swish>())(h);
  auto out = K::layers::Dense(1)(h);
  K::Model model(in, out);
  model.compile({.optimizer = K::optimizers::Adam(0.02),
                 .loss = custom::LogCosh(),
                 .metrics = {"mae", std::make_shared<custom::WithinTolerance>(0.1f)},
                 .distribute = K::distribute::MirroredStrategy<>(2)});
  auto data = K::Dataset::from_tensor_slices(x, K::Tensor::from_vector({n, 1}, y)).batch(32);
  auto history = model.fit(data, {.epochs = 8, .validation_data = data, .verbose = 0});
  const auto& loss = history.history.at("loss");
  REQUIRE(loss.size() == 8);
  CHECK(std::isfinite(loss.back()));
  CHECK(loss.back() < 0.5 * loss.front());
  const auto& close = history.history.at("val_within_tolerance");
  CHECK(close.back() > close.front());
  CHECK(close.back() >= 0.0);
  CHECK(close.back() <= 1.0);
}

TEST_CASE("extension points: compile() rejects unusable metrics") {
  struct Nameless : K::metrics::Metric {
    std::string name() const override { return ""; }
    K::metrics::MetricSums shard_sums(K::Backend&, const K::Tensor&, const K::Tensor&) const override { return {}; }
  };
  auto compile_with = [](std::vector<K::metrics::MetricRef> metrics) {
    K::Model model = identity_model(2);
    model.compile({.optimizer = "sgd", .loss = "mse", .metrics = std::move(metrics)});
  };
  CHECK_THROWS_AS(compile_with({Nameless()}), K::ValueError);
  CHECK_THROWS_AS(compile_with({K::metrics::MetricRef()}), K::ValueError);
  CHECK_THROWS_AS(compile_with({"f1_score"}), K::ValueError);
  CHECK_NOTHROW(compile_with({"accuracy", "acc", "binary_accuracy", K::metrics::CategoricalAccuracy()}));
}

TEST_CASE("extension points: the built-in losses pass the public loss gradient check") {
  K::Tensor logits = K::testing::uniform_tensor({4, 3}, 41, -2.f, 2.f);
  K::Tensor labels = K::Tensor::from_vector({4}, std::vector<std::int32_t>{0, 2, 1, 2});
  K::Tensor one_hot = K::Tensor::from_vector({4, 3}, std::vector<float>{1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1});
  K::Tensor binary = K::Tensor::from_vector({4, 3}, std::vector<float>{1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 0, 1});
  K::Tensor values = K::testing::uniform_tensor({4, 3}, 42);
  struct Case {
    const char* what;
    K::losses::LossRef loss;
    K::Tensor target;
  };
  std::vector<Case> cases = {
      {"sparse categorical, logits", K::losses::SparseCategoricalCrossentropy({.from_logits = true}), labels},
      {"categorical, logits", K::losses::CategoricalCrossentropy({.from_logits = true}), one_hot},
      {"binary, logits", K::losses::BinaryCrossentropy({.from_logits = true}), binary},
      {"mean squared error", "mse", values},
  };
  for (auto& c : cases) {
    CAPTURE(c.what);
    auto result = K::testing::check_loss_gradients(*c.loss.get(), logits, c.target);
    CHECK_MESSAGE(result.passed(), result.summary());
    CHECK(result.checked == 12);
  }
}

TEST_CASE("extension points: a custom layer's declared input spec is checked by the library") {
  auto swish = std::make_shared<custom::Swish>("my_swish");
  // Rank 1 (batch only) breaks the declared min rank 2; an int32 input breaks the float32 dtype.
  try {
    (*swish)(K::Input({}));
    FAIL("a rank-1 input was accepted");
  } catch (const K::ShapeError& e) { CHECK(std::string(e.what()).find("my_swish") != std::string::npos); }
  CHECK_THROWS_AS((*swish)(K::Input({4}, K::DType::int32)), K::ShapeError);
  CHECK((*swish)(K::Input({4})).shape() == K::Shape{4});
}
