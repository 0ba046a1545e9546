// Model API: summary with Keras parameter counts, get/set_weights, training a small MLP to high
// accuracy, determinism under set_random_seed, predict order, optimizer steps against their
// formulas, learning-rate schedules, the *_on_batch calls and to_json's Keras config.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bit_equal.hpp"
#include "kerascpp/kerascpp.hpp"

namespace K = kerascpp;

namespace {

K::Tensor model_random_tensor(const K::Shape& shape, std::uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(K::shape_numel(shape)));
  for (auto& x : v) x = dist(gen);
  return K::Tensor::from_vector(shape, v);
}

// |a − b| <= rel·max(|a|, |b|): doctest's Approx adds an absolute scale of 1, too loose for small values.
bool close(double a, double b, double rel = 1e-9) {
  return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b));
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

using kerascpp_test::bit_equal;

bool all_bit_equal(const std::vector<K::Tensor>& a, const std::vector<K::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].shape() != b[i].shape() || !bit_equal(a[i], b[i])) return false;
  return true;
}

// Three well separated 2-D Gaussian blobs, `per_class` examples each, classes interleaved.
struct Blobs {
  K::Tensor x, y;
};
Blobs make_blobs(std::int64_t per_class, std::uint32_t seed) {
  const float centers[3][2] = {{0.f, 3.f}, {3.f, -2.f}, {-3.f, -2.f}};
  std::mt19937 gen(seed);
  std::normal_distribution<float> noise(0.f, 0.6f);
  std::vector<float> xs;
  std::vector<std::int32_t> ys;
  for (std::int64_t i = 0; i < per_class; ++i)
    for (int c = 0; c < 3; ++c) {
      xs.push_back(centers[c][0] + noise(gen));
      xs.push_back(centers[c][1] + noise(gen));
      ys.push_back(c);
    }
  return {K::Tensor::from_vector({3 * per_class, 2}, xs), K::Tensor::from_vector({3 * per_class}, ys)};
}

K::Model make_mlp(float dropout = 0.f) {
  auto in = K::Input({2});
  auto h = K::layers::Dense(16, {.activation = "relu"})(in);
  if (dropout > 0.f) h = K::layers::Dropout(dropout)(h);
  auto out = K::layers::Dense(3, {.activation = "softmax"})(h);
  return K::Model(in, out);
}

// For the linear model y = x·W + b with MSE (Keras: mean over the last axis, then over the
// batch): loss and gradients in double precision.
struct LinearGrads {
  double loss = 0;
  std::vector<double> dw, db;
};
LinearGrads linear_mse_grads(const K::Tensor& x, const K::Tensor& y, const K::Tensor& w, const K::Tensor& b) {
  std::int64_t n = x.dim(0), in = x.dim(1), units = w.dim(1);
  const float *px = x.data<float>(), *py = y.data<float>(), *pw = w.data<float>(), *pb = b.data<float>();
  LinearGrads g;
  g.dw.assign(static_cast<std::size_t>(in * units), 0.0);
  g.db.assign(static_cast<std::size_t>(units), 0.0);
  for (std::int64_t r = 0; r < n; ++r)
    for (std::int64_t u = 0; u < units; ++u) {
      double pred = pb[u];
      for (std::int64_t k = 0; k < in; ++k) pred += static_cast<double>(px[r * in + k]) * pw[k * units + u];
      double diff = pred - py[r * units + u];
      g.loss += diff * diff / static_cast<double>(n * units);
      double dpred = 2.0 * diff / static_cast<double>(n * units);
      for (std::int64_t k = 0; k < in; ++k) g.dw[static_cast<std::size_t>(k * units + u)] += px[r * in + k] * dpred;
      g.db[static_cast<std::size_t>(u)] += dpred;
    }
  return g;
}

struct LinearModel {
  K::Model model;
  K::Tensor x, y;
};
LinearModel make_linear(std::uint64_t seed) {
  auto in = K::Input({3});
  auto out = K::layers::Dense(2, {.seed = seed})(in);
  K::Model model(in, out);
  auto w = model.get_weights();
  w[1] = model_random_tensor({2}, 7);  // a non-zero bias
  model.set_weights(w);
  return {model, model_random_tensor({4, 3}, 8), model_random_tensor({4, 2}, 9)};
}

}  // namespace

TEST_CASE("model: functional summary shows layer names, output shapes and Keras parameter counts") {
  auto in = K::Input({784});
  auto h = K::layers::Dense(512, {.activation = "relu", .name = "hidden"})(in);
  auto out = K::layers::Dense(10, {.activation = "softmax", .name = "probabilities"})(h);
  K::Model model(in, out, "mlp");
  std::ostringstream os;
  model.summary(os);
  std::string s = os.str();
  INFO(s);
  CHECK(contains(s, "Model: \"mlp\""));
  CHECK(contains(s, "(InputLayer)"));
  CHECK(contains(s, "(None, 784)"));
  CHECK(contains(s, "hidden (Dense)"));
  CHECK(contains(s, "(None, 512)"));
  CHECK(contains(s, "401920"));  // 784*512 + 512
  CHECK(contains(s, "probabilities (Dense)"));
  CHECK(contains(s, "(None, 10)"));
  CHECK(contains(s, "5130"));
  CHECK(contains(s, "Total params: 407050"));
  CHECK(contains(s, "Trainable params: 407050"));
  CHECK(contains(s, "Non-trainable params: 0"));
  CHECK(model.count_params() == 407050);
  CHECK(model.layers().size() == 3);
  CHECK(model.variables().size() == 4);
  CHECK(model.variables()[0]->path() == "hidden/kernel");
  CHECK(model.variables()[1]->path() == "hidden/bias");
}

TEST_CASE("model: convolutional summary with BatchNormalization's non-trainable statistics") {
  auto in = K::Input({28, 28, 1});
  auto x = K::layers::Conv2D(32, 3, {.activation = "relu"})(in);  // 3*3*1*32 + 32 = 320
  x = K::layers::MaxPooling2D(2)(x);                              // (None, 13, 13, 32)
  x = K::layers::Conv2D(8, 3)(x);                                 // 3*3*32*8 + 8 = 2312
  x = K::layers::BatchNormalization()(x);                         // 4*8 = 32, 16 non-trainable
  x = K::layers::Flatten()(x);                                    // 11*11*8 = 968
  auto out = K::layers::Dense(10)(x);                             // 9690
  K::Model model(in, out);
  std::ostringstream os;
  model.summary(os);
  std::string s = os.str();
  INFO(s);
  for (auto& layer : model.layers()) CHECK(contains(s, layer->name() + " (" + layer->class_name() + ")"));
  for (const char* part :
       {"(None, 26, 26, 32)", "320", "(None, 13, 13, 32)", "(None, 11, 11, 8)", "2312", "32", "(None, 968)", "9690",
        "Total params: 12354", "Trainable params: 12338", "Non-trainable params: 16"})
    CHECK_MESSAGE(contains(s, part), part);
  auto layers = model.layers();
  REQUIRE(layers.size() == 7);
  CHECK(layers[1]->count_params() == 320);
  CHECK(layers[4]->class_name() == "BatchNormalization");
  CHECK(layers[4]->count_params() == 32);
  CHECK(layers[4]->trainable_variables().size() == 2);
  CHECK(layers[4]->variables().size() == 4);
  CHECK(model.trainable_variables().size() == model.variables().size() - 2);
}

TEST_CASE("model: Sequential summary, with an InputLayer and built from the first batch") {
  K::Sequential seq({K::layers::InputLayer({784}), K::layers::Dense(512, {.activation = "relu", .name = "seq_hidden"}),
                     K::layers::Dense(10, {.activation = "softmax"})},
                    "my_sequential");
  std::ostringstream os;
  seq.summary(os);
  std::string s = os.str();
  INFO(s);
  CHECK(contains(s, "Model: \"my_sequential\""));
  CHECK(!contains(s, "(InputLayer)"));  // like Keras, Sequential does not list its input
  CHECK(contains(s, "seq_hidden (Dense)"));
  CHECK(contains(s, "(None, 512)"));
  CHECK(contains(s, "401920"));
  CHECK(contains(s, "5130"));
  CHECK(contains(s, "Total params: 407050"));
  CHECK(seq.layers().size() == 2);

  // No input shape: the first batch builds it.
  K::Sequential lazy;
  lazy.add(K::layers::Dense(4, {.activation = "relu"}));
  lazy.add(K::layers::Dense(2));
  lazy.compile({.optimizer = "sgd", .loss = "mse"});
  K::Tensor y = lazy.predict_on_batch(model_random_tensor({3, 5}, 1));
  CHECK(y.shape() == K::Shape{3, 2});
  std::ostringstream os2;
  lazy.summary(os2);
  INFO(os2.str());
  CHECK(contains(os2.str(), "(None, 4)"));
  CHECK(contains(os2.str(), "24"));  // 5*4 + 4
  CHECK(lazy.count_params() == 24 + 10);
}

TEST_CASE("model: get_weights / set_weights roundtrip") {
  K::set_random_seed(3);
  K::Model model = make_mlp();
  model.compile({.optimizer = "adam", .loss = K::losses::SparseCategoricalCrossentropy()});
  K::Tensor x = model_random_tensor({5, 2}, 2);
  K::Tensor before = model.predict_on_batch(x).clone();

  auto original = model.get_weights();
  REQUIRE(original.size() == 4);
  CHECK(original[0].shape() == K::Shape{2, 16});
  CHECK(original[3].shape() == K::Shape{3});
  // get_weights returns copies.
  float saved = original[0].data<float>()[0];
  original[0].data<float>()[0] = saved + 1.f;
  CHECK(!bit_equal(original[0], model.get_weights()[0]));
  original[0].data<float>()[0] = saved;

  std::vector<K::Tensor> changed;
  std::uint32_t seed = 20;
  for (auto& w : original) changed.push_back(model_random_tensor(w.shape(), seed++));
  model.set_weights(changed);
  CHECK(all_bit_equal(model.get_weights(), changed));
  K::Tensor after_change = model.predict_on_batch(x);
  CHECK(after_change.to_vector() != before.to_vector());

  model.set_weights(original);
  CHECK(all_bit_equal(model.get_weights(), original));
  CHECK(bit_equal(model.predict_on_batch(x), before));
}

TEST_CASE("model: training an MLP on separable blobs reduces the loss and reaches high accuracy") {
  K::set_random_seed(1);
  Blobs data = make_blobs(100, 5);
  auto ds = K::Dataset::from_tensor_slices(data.x, data.y);
  K::Model model = make_mlp();
  model.compile({.optimizer = K::optimizers::Adam(0.01),
                 .loss = K::losses::SparseCategoricalCrossentropy(),
                 .metrics = {"accuracy"}});
  K::Logs initial = model.evaluate(ds.batch(64), {.verbose = 0});
  CHECK(initial.contains("loss"));
  CHECK(initial.contains("accuracy"));

  const int epochs = 6;
  K::callbacks::History history =
      model.fit(ds.shuffle(300).batch(32), {.epochs = epochs, .validation_data = ds.batch(100), .verbose = 0});
  REQUIRE(history.history.count("loss") == 1);
  REQUIRE(history.history.count("accuracy") == 1);
  REQUIRE(history.history.count("val_loss") == 1);
  const auto& loss = history.history["loss"];
  const auto& acc = history.history["accuracy"];
  CHECK(loss.size() == epochs);
  CHECK(acc.size() == epochs);
  CHECK(history.history["val_loss"].size() == epochs);
  CHECK(history.epoch == std::vector<int>{0, 1, 2, 3, 4, 5});
  CHECK(loss.back() < loss.front());
  CHECK(loss.back() < 0.5 * initial["loss"]);
  CHECK(acc.back() > 0.95);

  K::Logs final_logs = model.evaluate(ds.batch(64), {.verbose = 0});
  CHECK(final_logs["loss"] < 0.3);
  CHECK(final_logs["accuracy"] >= 0.97);
  // Validation ran after the last epoch's updates, on the same data: it is a fresh evaluate.
  CHECK(history.history["val_loss"].back() == doctest::Approx(final_logs["loss"]).epsilon(1e-5));
  CHECK(history.history["val_accuracy"].back() == doctest::Approx(final_logs["accuracy"]).epsilon(1e-9));
  // evaluate is a mean over examples: independent of the batch size (partial last batch included).
  K::Logs other_batching = model.evaluate(ds.batch(47), {.verbose = 0});
  CHECK(other_batching["loss"] == doctest::Approx(final_logs["loss"]).epsilon(1e-5));
  CHECK(other_batching["accuracy"] == doctest::Approx(final_logs["accuracy"]).epsilon(1e-9));

  // ... and it agrees with the loss and accuracy computed by hand from predict().
  K::Tensor probs = model.predict(ds.batch(64));
  REQUIRE(probs.shape() == K::Shape{300, 3});
  const float* p = probs.data<float>();
  const auto* y = data.y.data<std::int32_t>();
  double ce = 0, correct = 0;
  for (std::int64_t i = 0; i < 300; ++i) {
    double q = std::min(std::max(static_cast<double>(p[i * 3 + y[i]]), 1e-7), 1.0 - 1e-7);
    ce -= std::log(q);
    int best = 0;
    for (int c = 1; c < 3; ++c)
      if (p[i * 3 + c] > p[i * 3 + best]) best = c;
    correct += best == y[i];
  }
  CHECK(final_logs["loss"] == doctest::Approx(ce / 300).epsilon(1e-4));
  CHECK(final_logs["accuracy"] == doctest::Approx(correct / 300).epsilon(1e-9));
}

TEST_CASE("model: same seed gives bit-identical weights, a different seed does not") {
  Blobs data = make_blobs(40, 6);
  auto train = [&](std::uint64_t seed) {
    K::set_random_seed(seed);
    K::Model model = make_mlp(0.3f);
    model.compile({.optimizer = K::optimizers::Adam(0.01),
                   .loss = K::losses::SparseCategoricalCrossentropy(),
                   .metrics = {"accuracy"}});
    auto ds = K::Dataset::from_tensor_slices(data.x, data.y).shuffle(120).batch(16);
    model.fit(ds, {.epochs = 2, .verbose = 0});
    return model.get_weights();
  };
  auto a = train(1234);
  auto b = train(1234);
  auto c = train(4321);
  REQUIRE(a.size() == 4);
  CHECK(all_bit_equal(a, b));
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(!bit_equal(a[i], c[i]));
}

TEST_CASE("model: predict returns rows in dataset order") {
  K::set_random_seed(2);
  K::Model model = make_mlp();
  model.compile({.optimizer = "adam", .loss = K::losses::SparseCategoricalCrossentropy()});
  K::Tensor x = model_random_tensor({53, 2}, 3, -3.f, 3.f);
  K::Tensor whole = model.predict_on_batch(x);
  for (std::int64_t batch : {1, 7, 53, 100}) {
    CAPTURE(batch);
    K::Tensor p = model.predict(K::Dataset::from_tensor_slices(x).batch(batch));
    REQUIRE(p.shape() == K::Shape{53, 3});
    auto pv = p.to_vector(), wv = whole.to_vector();
    for (std::size_t i = 0; i < pv.size(); ++i) CHECK(pv[i] == doctest::Approx(wv[i]).epsilon(1e-5));
  }
  // A dataset of (x, y) pairs predicts from x.
  K::Tensor labels = K::Tensor::zeros({53}, K::DType::int32);
  K::Tensor p2 = model.predict(K::Dataset::from_tensor_slices(x, labels).batch(10));
  CHECK(p2.shape() == K::Shape{53, 3});
}

TEST_CASE("model: one SGD step equals w - lr * grad") {
  LinearModel lm = make_linear(11);
  const double lr = 0.1;
  lm.model.compile({.optimizer = K::optimizers::SGD(lr), .loss = K::losses::MeanSquaredError()});
  auto w0 = lm.model.get_weights();
  LinearGrads g = linear_mse_grads(lm.x, lm.y, w0[0], w0[1]);
  K::Logs logs = lm.model.train_on_batch(lm.x, lm.y);
  CHECK(logs["loss"] == doctest::Approx(g.loss).epsilon(1e-5));
  CHECK(lm.model.optimizer().iterations() == 1);
  auto w1 = lm.model.get_weights();
  auto k0 = w0[0].to_vector(), k1 = w1[0].to_vector(), b0 = w0[1].to_vector(), b1 = w1[1].to_vector();
  for (std::size_t i = 0; i < k0.size(); ++i) CHECK(k1[i] == doctest::Approx(k0[i] - lr * g.dw[i]).epsilon(1e-5));
  for (std::size_t i = 0; i < b0.size(); ++i) CHECK(b1[i] == doctest::Approx(b0[i] - lr * g.db[i]).epsilon(1e-5));
}

TEST_CASE("model: Adam's first step moves each weight by about lr against the gradient's sign") {
  LinearModel lm = make_linear(12);
  const double lr = 0.01;
  lm.model.compile({.optimizer = K::optimizers::Adam(lr), .loss = "mse"});
  auto w0 = lm.model.get_weights();
  LinearGrads g = linear_mse_grads(lm.x, lm.y, w0[0], w0[1]);
  lm.model.train_on_batch(lm.x, lm.y);
  auto w1 = lm.model.get_weights();
  int checked = 0;
  for (int v = 0; v < 2; ++v) {
    auto before = w0[static_cast<std::size_t>(v)].to_vector(), after = w1[static_cast<std::size_t>(v)].to_vector();
    const auto& grad = v == 0 ? g.dw : g.db;
    for (std::size_t i = 0; i < before.size(); ++i) {
      // Keras 3 adds epsilon to sqrt(v) without bias correction: for |g| >= 1e-2 the step is lr
      // to within 1e-7 / (sqrt(1 - 0.999) * 1e-2) = 3e-4 of lr.
      if (std::fabs(grad[i]) < 1e-2) continue;
      double expected = before[i] - lr * (grad[i] > 0 ? 1.0 : -1.0);
      CAPTURE(grad[i]);
      CHECK(std::fabs(after[i] - expected) <= 2e-3 * lr);
      ++checked;
    }
  }
  CHECK(checked >= 6);
}

TEST_CASE("model: learning-rate schedules") {
  namespace S = K::optimizers::schedules;
  S::ExponentialDecay smooth(0.1, 10, 0.5);
  CHECK(close(smooth(0), 0.1));
  CHECK(close(smooth(5), 0.1 * std::sqrt(0.5)));
  CHECK(close(smooth(10), 0.05));
  CHECK(close(smooth(25), 0.1 * std::pow(0.5, 2.5)));
  S::ExponentialDecay stairs(0.1, 10, 0.5, {.staircase = true});
  CHECK(close(stairs(9), 0.1));
  CHECK(close(stairs(10), 0.05));
  CHECK(close(stairs(25), 0.025));

  S::PiecewiseConstantDecay piecewise({10, 20}, {1.0, 0.5, 0.1});
  CHECK(piecewise(0) == 1.0);
  CHECK(piecewise(10) == 1.0);
  CHECK(piecewise(11) == 0.5);
  CHECK(piecewise(20) == 0.5);
  CHECK(piecewise(21) == 0.1);
  CHECK(piecewise(100000) == 0.1);

  // An optimizer follows its schedule step by step, and the update uses the step's rate.
  LinearModel lm = make_linear(13);
  lm.model.compile({.optimizer = K::optimizers::SGD(S::ExponentialDecay(0.1, 1, 0.5)), .loss = "mse"});
  CHECK(lm.model.optimizer().learning_rate() == doctest::Approx(0.1));
  lm.model.train_on_batch(lm.x, lm.y);
  CHECK(lm.model.optimizer().learning_rate() == doctest::Approx(0.05));
  auto w1 = lm.model.get_weights();
  LinearGrads g = linear_mse_grads(lm.x, lm.y, w1[0], w1[1]);
  lm.model.train_on_batch(lm.x, lm.y);
  auto w2 = lm.model.get_weights();
  auto k1 = w1[0].to_vector(), k2 = w2[0].to_vector();
  for (std::size_t i = 0; i < k1.size(); ++i) CHECK(k2[i] == doctest::Approx(k1[i] - 0.05 * g.dw[i]).epsilon(1e-5));
  CHECK(lm.model.optimizer().learning_rate() == doctest::Approx(0.025));
}

TEST_CASE("model: train_on_batch and test_on_batch return logs with the loss") {
  K::set_random_seed(4);
  Blobs data = make_blobs(10, 7);
  K::Model model = make_mlp();
  model.compile({.optimizer = "adam", .loss = "sparse_categorical_crossentropy", .metrics = {"accuracy"}});
  K::Logs test = model.test_on_batch(data.x, data.y);
  REQUIRE(test.contains("loss"));
  REQUIRE(test.contains("accuracy"));
  CHECK(test["loss"] > 0);
  // test_on_batch is evaluate on one batch.
  K::Logs eval = model.evaluate(K::Dataset::from_tensor_slices(data.x, data.y).batch(30), {.verbose = 0});
  CHECK(eval["loss"] == doctest::Approx(test["loss"]).epsilon(1e-6));
  CHECK(eval["accuracy"] == doctest::Approx(test["accuracy"]));

  K::Logs train = model.train_on_batch(data.x, data.y);
  REQUIRE(train.contains("loss"));
  REQUIRE(train.contains("accuracy"));
  // The training loss is computed before the update, with the same weights test_on_batch saw.
  CHECK(train["loss"] == doctest::Approx(test["loss"]).epsilon(1e-5));
  K::Logs again = model.test_on_batch(data.x, data.y);
  CHECK(again["loss"] != test["loss"]);  // the update changed the weights
  for (int i = 0; i < 30; ++i) model.train_on_batch(data.x, data.y);
  CHECK(model.test_on_batch(data.x, data.y)["loss"] < test["loss"]);
}

// Keras names a layer when it is made; reading names in another order must not reorder them.
TEST_CASE("model: automatic layer names follow construction order") {
  auto suffix = [](const std::string& name) {  // "dense" is 0, "dense_3" is 3
    const auto underscore = name.rfind('_');
    return underscore == std::string::npos ? 0 : std::stoi(name.substr(underscore + 1));
  };
  K::LayerRef a = K::layers::Dense(3);
  K::LayerRef b = K::layers::Dense(3);
  const std::string b_name = b->name();  // read first
  const std::string a_name = a->name();
  CAPTURE(a_name);
  CAPTURE(b_name);
  CHECK(a_name.rfind("dense", 0) == 0);
  CHECK(b_name.rfind("dense", 0) == 0);
  CHECK(suffix(a_name) < suffix(b_name));
}

namespace {

// A user-defined layer whose get_config() is not a JSON object: to_json must say which layer, not emit it.
class BadConfigLayer : public K::Layer {
 public:
  BadConfigLayer() : K::Layer("bad_config") {}
  std::string class_name() const override { return "BadConfig"; }
  K::Json get_config() const override { return K::Json::array({"name", "unquoted"}); }
  std::vector<K::Shape> compute_output_shapes(const std::vector<K::Shape>& in) override { return {in.at(0)}; }
  std::vector<K::Tensor> forward(K::ReplicaContext&, const std::vector<K::Tensor>& in, K::LayerState&) override {
    return in;
  }
  std::vector<K::Tensor> backward(K::ReplicaContext&, const std::vector<K::Tensor>&, const std::vector<K::Tensor>&,
                                  const std::vector<K::Tensor>& grads, K::LayerState&) override {
    return grads;
  }
};

}  // namespace

TEST_CASE("model: to_json escapes names with quotes and backslashes and parses back") {
  const std::string head_name = "my \"head\"\\1";  // my "head"\1
  const std::string input_name = "in\\\"put";      // in\"put
  auto in = K::Input({4}, K::DType::float32, input_name);
  K::LayerRef shared = K::layers::Dense(3, {.activation = "relu", .name = "shared\\"});
  auto sum = K::layers::Add({.name = "sum \"a+b\""})({shared(in), shared(in)});
  auto out = K::layers::Dense(2, {.activation = "softmax", .name = head_name})(sum);
  K::Model model(in, out, "model \"q\"");

  const std::string text = model.to_json();
  INFO(text);
  nlohmann::json j = nlohmann::json::parse(text);  // throws on invalid JSON
  CHECK(j["class_name"] == "Functional");
  CHECK(j["config"]["name"] == "model \"q\"");
  const auto& layers = j["config"]["layers"];
  REQUIRE(layers.size() == 4);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& l : layers) by_name[l["name"].get<std::string>()] = l;
  REQUIRE(by_name.count(head_name) == 1);
  REQUIRE(by_name.count(input_name) == 1);
  const auto& head = by_name[head_name];
  CHECK(head["class_name"] == "Dense");
  CHECK(head["module"] == "keras.layers");
  CHECK(head["config"]["name"] == head_name);
  CHECK(head["config"]["units"] == 2);
  CHECK(head["config"]["activation"] == "softmax");
  CHECK(by_name[input_name]["config"]["batch_shape"] == nlohmann::json::parse("[null, 4]"));
  CHECK(by_name[input_name]["inbound_nodes"].empty());
  // The shared Dense has two calls (node 0 and 1); Add takes both of its outputs as one list.
  CHECK(by_name["shared\\"]["inbound_nodes"].size() == 2);
  const auto& add_args = by_name["sum \"a+b\""]["inbound_nodes"][0]["args"];
  REQUIRE(add_args.size() == 1);
  REQUIRE(add_args[0].size() == 2);
  CHECK(add_args[0][0]["config"]["keras_history"] == nlohmann::json::array({"shared\\", 0, 0}));
  CHECK(add_args[0][1]["config"]["keras_history"] == nlohmann::json::array({"shared\\", 1, 0}));
  CHECK(head["inbound_nodes"][0]["args"][0]["config"]["keras_history"] == nlohmann::json::array({"sum \"a+b\"", 0, 0}));
  CHECK(head["inbound_nodes"][0]["args"][0]["config"]["shape"] == nlohmann::json::parse("[null, 3]"));
  CHECK(j["config"]["input_layers"] == nlohmann::json::array({input_name, 0, 0}));
  CHECK(j["config"]["output_layers"] == nlohmann::json::array({head_name, 0, 0}));

  // A Sequential model lists its layers, the InputLayer first, under its own (escaped) name.
  K::Sequential seq(
      {K::layers::InputLayer({5}, {.name = "seq \"in\""}), K::layers::Dense(2, {.name = head_name + "_s"})}, "seq\\");
  nlohmann::json s = nlohmann::json::parse(seq.to_json());
  CHECK(s["class_name"] == "Sequential");
  CHECK(s["config"]["name"] == "seq\\");
  REQUIRE(s["config"]["layers"].size() == 2);
  CHECK(s["config"]["layers"][0]["config"]["name"] == "seq \"in\"");
  CHECK(s["config"]["layers"][1]["config"]["name"] == head_name + "_s");
  CHECK(s["config"]["build_input_shape"] == nlohmann::json::parse("[null, 5]"));
}

TEST_CASE("model: to_json names a custom layer whose get_config is not a JSON object") {
  auto in = K::Input({2});
  K::LayerRef bad = std::make_shared<BadConfigLayer>();
  K::Model model(in, bad(in), "bad_config_model");
  try {
    (void)model.to_json();
    FAIL("to_json accepted a config that is not a JSON object");
  } catch (const K::ValueError& e) {
    CHECK(std::string(e.what()).find("'bad_config' (BadConfig)") != std::string::npos);
  }
}
