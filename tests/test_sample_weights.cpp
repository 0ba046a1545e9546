// sample_weight and class_weight in fit/evaluate (Keras 3): the weighted loss Σ w·loss / N and
// its gradient, weighted_metrics (Σ w·v / Σ w) beside unweighted metrics, class_weight turned into
// per-example weights, the errors for bad weights, and MirroredStrategy giving the weights of one
// device. Against Keras itself: tests/python/test_sample_weights.py.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "kerascpp/kerascpp.hpp"
#include "mirrored_fixture.hpp"
#include "training/sample_weights.hpp"

namespace K = kerascpp;

namespace {

std::vector<float> sw_uniform(std::size_t n, std::uint32_t seed, float lo, float hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

// Input(3) -> Dense(2) with fixed weights: predictions we can compute by hand.
K::Model linear_model() {
  auto in = K::Input({3});
  K::Model m(in, K::layers::Dense(2)(in));
  m.set_weights({K::Tensor::from_vector({3, 2}, {0.5f, -1.f, 0.25f, 0.75f, -0.5f, 1.f}),
                 K::Tensor::from_vector({2}, {0.1f, -0.2f})});
  return m;
}

}  // namespace

TEST_CASE("sample_weight: evaluate's loss is Σ w·loss / N and weighted_metrics are Σ w·v / Σ w") {
  K::Model m = linear_model();
  m.compile({.optimizer = "sgd", .loss = "mse", .metrics = {"mae"}, .weighted_metrics = {"mae"}});
  CHECK(m.metrics_names() == std::vector<std::string>{"loss", "mae", "weighted_mae"});
  const std::int64_t n = 5;
  K::Tensor x = K::Tensor::from_vector({n, 3}, sw_uniform(n * 3, 1, -1, 1));
  K::Tensor y = K::Tensor::from_vector({n, 2}, sw_uniform(n * 2, 2, -1, 1));
  K::Tensor w = K::Tensor::from_vector({n}, std::vector<float>{0.5f, 2.f, 0.f, 1.f, 3.f});
  auto pred = m.predict(K::Dataset::from_tensor_slices(x).batch(n), {.verbose = 0}).to_vector();
  auto yv = y.to_vector(), wv = w.to_vector();
  double wl = 0, mae = 0, wmae = 0, wsum = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    double se = 0, ae = 0;
    for (int j = 0; j < 2; ++j) {
      double e = pred[i * 2 + j] - yv[i * 2 + j];
      se += e * e / 2;
      ae += std::fabs(e) / 2;
    }
    wl += wv[i] * se;
    mae += ae / n;
    wmae += wv[i] * ae;
    wsum += wv[i];
  }
  // Batches of 2, 2 and 1: Keras averages the batch losses by batch size, which is Σ w·l / N overall.
  K::Logs logs = m.evaluate(K::Dataset::from_tensor_slices({x, y, w}).batch(2), {.verbose = 0});
  CHECK(logs.at("loss") == doctest::Approx(wl / n).epsilon(1e-6));
  CHECK(logs.at("mae") == doctest::Approx(mae).epsilon(1e-6));  // `metrics` ignore the weights
  CHECK(logs.at("weighted_mae") == doctest::Approx(wmae / wsum).epsilon(1e-6));
  // [N, 1] weights are the same; no weights: the weighted metric is the plain mean.
  K::Logs col = m.test_on_batch(x, y, w.reshape({n, 1}));
  CHECK(col.at("loss") == doctest::Approx(wl / n).epsilon(1e-6));
  K::Logs plain = m.evaluate(K::Dataset::from_tensor_slices(x, y).batch(2), {.verbose = 0});
  CHECK(plain.at("weighted_mae") == doctest::Approx(mae).epsilon(1e-6));
}

TEST_CASE("sample_weight: the gradient is each example's gradient times its weight, over N") {
  // Weights (1, 1, 0, 0) on 4 examples: Σ w·l / 4 = half the mean loss of the first two, so one
  // SGD step at lr equals one unweighted step at lr / 2 on those two examples alone.
  const std::int64_t n = 4;
  K::Tensor x = K::Tensor::from_vector({n, 3}, sw_uniform(n * 3, 3, -1, 1));
  K::Tensor y = K::Tensor::from_vector({n, 2}, sw_uniform(n * 2, 4, -1, 1));
  K::Model weighted = linear_model(), half = linear_model();
  weighted.compile({.optimizer = K::optimizers::SGD(0.2), .loss = "mse"});
  half.compile({.optimizer = K::optimizers::SGD(0.1), .loss = "mse"});
  weighted.train_on_batch(x, y, K::Tensor::from_vector({n}, std::vector<float>{1, 1, 0, 0}));
  half.train_on_batch(x.slice(0, 2), y.slice(0, 2));
  CHECK(mirrored_fixture::max_abs_diff(weighted.get_weights(), half.get_weights()) < 1e-6);
}

TEST_CASE("class_weight: Keras' per-example weights from labels and one-hot rows") {
  std::map<int, double> cw{{0, 0.5}, {2, 4.0}};
  auto weights = [&](const K::Tensor& y) { return K::detail::class_weight_to_sample_weight(y, cw, "m").to_vector(); };
  std::vector<float> want{0.5f, 1.f, 4.f, 0.5f};  // class 1 is not listed: weight 1
  CHECK(weights(K::Tensor::from_vector({4}, std::vector<std::int32_t>{0, 1, 2, 0})) == want);
  CHECK(weights(K::Tensor::from_vector({4, 1}, std::vector<float>{0, 1, 2, 0})) == want);
  CHECK(weights(K::Tensor::from_vector({4, 3}, std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1, 0.9f, 0.1f, 0})) == want);
  auto be = K::make_cpu_backend(1);  // 16-bit labels (a mixed-precision pipeline's targets)
  for (K::DType dtype : {K::DType::bfloat16, K::DType::float16}) {
    K::Tensor labels16;
    be->cast(K::Tensor::from_vector({4}, std::vector<float>{0, 1, 2, 0}), dtype, labels16);
    CHECK(weights(labels16) == want);
  }
  CHECK_THROWS_WITH_AS(weights(K::Tensor::from_vector({2}, std::vector<float>{0.3f, 1})),
                       doctest::Contains("is not a class id"), K::ValueError);
}

TEST_CASE("class_weight: fit with class_weight trains as fit on the same weights given per example") {
  const std::int64_t n = 12;
  K::Tensor x = K::Tensor::from_vector({n, 3}, sw_uniform(n * 3, 5, -1, 1));
  std::vector<std::int32_t> labels{0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 1};
  K::Tensor y = K::Tensor::from_vector({n}, labels);
  std::map<int, double> cw{{0, 0.25}, {1, 3.0}};
  std::vector<float> w;
  for (auto l : labels) w.push_back(static_cast<float>(cw.at(l)));
  auto run = [&](bool use_class_weight) {
    K::Model m = linear_model();
    m.compile({.optimizer = K::optimizers::SGD(0.1),
               .loss = K::losses::SparseCategoricalCrossentropy({.from_logits = true}),
               .weighted_metrics = {"accuracy"}});
    K::FitOptions o{.epochs = 2, .verbose = 0};
    K::Dataset data = K::Dataset::from_tensor_slices(x, y).batch(5);
    if (use_class_weight) o.class_weight = cw;
    else data = K::Dataset::from_tensor_slices({x, y, K::Tensor::from_vector({n}, w)}).batch(5);
    auto h = m.fit(data, o);
    return std::pair{m.get_weights(), h.history.at("loss").back()};
  };
  auto [wa, la] = run(true);
  auto [wb, lb] = run(false);
  CHECK(mirrored_fixture::max_abs_diff(wa, wb) == 0.0);
  CHECK(la == lb);
}

TEST_CASE("sample_weight and class_weight: bad input is an error naming the problem") {
  K::Model m = linear_model();
  m.compile({.optimizer = "sgd", .loss = K::losses::SparseCategoricalCrossentropy({.from_logits = true})});
  K::Tensor x = K::Tensor::from_vector({4, 3}, sw_uniform(12, 6, -1, 1));
  K::Tensor y = K::Tensor::from_vector({4}, std::vector<std::int32_t>{0, 1, 1, 0});
  CHECK_THROWS_WITH_AS(m.train_on_batch(x, y, K::Tensor::from_vector({3}, std::vector<float>{1, 1, 1})),
                       doctest::Contains("one weight per example"), K::ShapeError);
  CHECK_THROWS_WITH_AS(m.train_on_batch(x, y, K::Tensor::from_vector({4, 2}, std::vector<float>(8, 1.f))),
                       doctest::Contains("one weight per example"), K::ShapeError);
  CHECK_THROWS_WITH_AS(m.test_on_batch(x, y, K::Tensor::from_vector({4}, std::vector<float>{1, NAN, 1, 1})),
                       doctest::Contains("must be finite"), K::ValueError);
  CHECK_THROWS_WITH_AS(m.train_on_batch(x, y, K::Tensor::from_vector({4}, std::vector<std::int32_t>{1, 1, 1, 1})),
                       doctest::Contains("float32"), K::ValueError);
  // Negative weights are accepted, as in Keras.
  CHECK_NOTHROW(m.test_on_batch(x, y, K::Tensor::from_vector({4}, std::vector<float>{1, -1, 1, 1})));

  K::Tensor w = K::Tensor::from_vector({4}, std::vector<float>{1, 2, 1, 1});
  auto fit = [&](K::Model& model, K::Dataset d, std::map<int, double> cw) {
    model.fit(d.batch(2), {.class_weight = std::move(cw), .verbose = 0});
  };
  CHECK_THROWS_WITH_AS(fit(m, K::Dataset::from_tensor_slices({x, y, w}), {{0, 2.0}}),
                       doctest::Contains("You cannot `class_weight` and `sample_weight` at the same time"),
                       K::ValueError);
  CHECK_THROWS_WITH_AS(fit(m, K::Dataset::from_tensor_slices(x, y), {{5, 2.0}}),
                       doctest::Contains("class_weight has class 5 but the model's output has 2 classes"),
                       K::ValueError);
  K::Model reg = linear_model();
  reg.compile({.optimizer = "sgd", .loss = "mse"});
  CHECK_THROWS_WITH_AS(
      fit(reg, K::Dataset::from_tensor_slices(x, K::Tensor::from_vector({4, 2}, sw_uniform(8, 7, 0, 1))), {{0, 2.0}}),
      doctest::Contains("a regression loss"), K::ValueError);
  CHECK_THROWS_WITH_AS(K::detail::check_class_weight({{0, 1.0}}, 2, 3, "categorical_crossentropy", "m"),
                       doctest::Contains("only supported for Models with a single output"), K::ValueError);
  CHECK_THROWS_WITH_AS(fit(m, K::Dataset::from_tensor_slices({x, y, w, w}), {}),
                       doctest::Contains("optionally sample_weight"), K::ShapeError);
}

TEST_CASE("sample_weight: 1 and 2 CPU replicas give the same weights after 20+ steps (odd last batch)") {
  // 41 examples in batches of 4: the last batch has one row, so one replica's shard is empty.
  const std::int64_t n = 41;
  mirrored_fixture::Data d = mirrored_fixture::make_data(n);
  K::Tensor w = K::Tensor::from_vector({n}, sw_uniform(n, 8, 0, 3));
  auto train = [&](K::distribute::Strategy s) {
    K::Model m = mirrored_fixture::small_convnet(true);
    m.compile({.optimizer = K::optimizers::SGD(0.05, {.momentum = 0.9}),
               .loss = "sparse_categorical_crossentropy",
               .metrics = {"accuracy"},
               .weighted_metrics = {"accuracy"},
               .distribute = s});
    auto h = m.fit(K::Dataset::from_tensor_slices({d.x, d.y, w}).batch(4), {.epochs = 2, .verbose = 0});
    CHECK(m.optimizer().iterations() == 22);
    return std::pair{m.get_weights(), h.history};
  };
  auto [one, h1] = train(K::distribute::OneDeviceStrategy("cpu:0"));
  auto [two, h2] = train(K::distribute::MirroredStrategy<>(2));
  CHECK(mirrored_fixture::max_abs_diff(one, two) <= 1e-5);
  for (const char* key : {"loss", "accuracy", "weighted_accuracy"})
    CHECK_MESSAGE(h1.at(key).back() == doctest::Approx(h2.at(key).back()).epsilon(1e-5), key);
}

TEST_CASE("weighted_metrics: Precision and Recall count each example w times (Keras' weighted confusion counts)") {
  auto in = K::Input({2});
  K::Model m(in, K::layers::Dense(1, {.activation = "sigmoid"})(in));
  m.set_weights(
      {K::Tensor::from_vector({2, 1}, std::vector<float>{1, 0}), K::Tensor::from_vector({1}, std::vector<float>{0})});
  m.compile({.optimizer = "sgd",
             .loss = "binary_crossentropy",
             .metrics = {"precision"},
             .weighted_metrics = {"precision", "recall"}});
  // pred > 0.5 exactly where x0 > 0: predicted (1, 1, 1, 0, 0), targets (1, 0, 1, 1, 0).
  K::Tensor x = K::Tensor::from_vector({5, 2}, std::vector<float>{2, 9, 1, 9, 3, 9, -1, 9, -2, 9});
  K::Tensor y = K::Tensor::from_vector({5, 1}, std::vector<float>{1, 0, 1, 1, 0});
  K::Tensor w = K::Tensor::from_vector({5}, std::vector<float>{2, 3, 0.5f, 4, 1});
  K::Logs logs = m.evaluate(K::Dataset::from_tensor_slices({x, y, w}).batch(2), {.verbose = 0});
  CHECK(logs.at("precision") == doctest::Approx(2.0 / 3.0));                   // unweighted: TP 2, FP 1
  CHECK(logs.at("weighted_precision") == doctest::Approx(2.5 / (2.5 + 3.0)));  // TP 2 + 0.5, FP 3
  CHECK(logs.at("recall") == doctest::Approx(2.5 / (2.5 + 4.0)));              // FN 4
}

TEST_CASE("sample_weight with several inputs: elements (input_1, input_2, y, sample_weight)") {
  auto a = K::Input({3}), b = K::Input({3});
  K::Model m(std::vector<K::KerasTensor>{a, b},
             std::vector<K::KerasTensor>{K::layers::Dense(2)(K::layers::Add()({a, b}))});
  m.compile({.optimizer = "sgd", .loss = "mse", .weighted_metrics = {"mae"}});
  const std::int64_t n = 6;
  K::Tensor xa = K::Tensor::from_vector({n, 3}, sw_uniform(n * 3, 9, -1, 1));
  K::Tensor xb = K::Tensor::from_vector({n, 3}, sw_uniform(n * 3, 10, -1, 1));
  K::Tensor y = K::Tensor::from_vector({n, 2}, sw_uniform(n * 2, 11, -1, 1));
  K::Tensor w = K::Tensor::from_vector({n}, std::vector<float>{0, 0, 0, 1, 1, 1});
  // Zero weights on the first three: Σ w·l / 6 is half the plain loss of the last three alone.
  K::Logs weighted = m.evaluate(K::Dataset::from_tensor_slices({xa, xb, y, w}).batch(4), {.verbose = 0});
  K::Logs last3 = m.test_on_batch({xa.slice(3, 6), xb.slice(3, 6)}, y.slice(3, 6));
  CHECK(weighted.at("loss") == doctest::Approx(last3.at("loss") / 2).epsilon(1e-6));
  CHECK(weighted.at("mae") == doctest::Approx(last3.at("mae")).epsilon(1e-6));
  CHECK(m.test_on_batch({xa, xb}, y, w).at("loss") == doctest::Approx(weighted.at("loss")).epsilon(1e-6));
  CHECK_THROWS_WITH_AS(m.evaluate(K::Dataset::from_tensor_slices({xa, xb, y, w, w}).batch(4), {.verbose = 0}),
                       doctest::Contains("optionally sample_weight"), K::ShapeError);
}
