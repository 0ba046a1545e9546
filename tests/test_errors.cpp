// Bad input gets a kerascpp::Error whose message names the layer, the shapes or the file —
// never a crash or a hang — and the model stays usable afterwards.
#include <doctest/doctest.h>

#include "temp_dir.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "data/idx_reader.hpp"
#include "kerascpp/kerascpp.hpp"

namespace K = kerascpp;
namespace fs = std::filesystem;

namespace {

// Runs f and returns the message of the kerascpp::Error it throws; any other outcome fails.
std::string kerascpp_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const K::Error& e) { return e.what(); } catch (const std::exception& e) {
    FAIL("threw a std::exception that is not a kerascpp::Error: " << e.what());
  } catch (...) { FAIL("threw something that is not a std::exception"); }
  FAIL("no exception was thrown");
  return {};
}

void expect_error(const std::function<void()>& f, std::initializer_list<std::string> parts) {
  std::string msg = kerascpp_error(f);
  INFO("message: " << msg);
  for (const auto& part : parts) CHECK_MESSAGE(msg.find(part) != std::string::npos, "missing \"" << part << "\"");
}
using kerascpp_test::TempDir;

K::Tensor errors_random_tensor(const K::Shape& shape, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(static_cast<std::size_t>(K::shape_numel(shape)));
  for (auto& x : v) x = dist(gen);
  return K::Tensor::from_vector(shape, v);
}

K::Tensor int_labels(std::vector<std::int32_t> v) {
  auto n = static_cast<std::int64_t>(v.size());
  return K::Tensor::from_vector({n}, v);
}

// A compiled 4 -> 10 classifier named `name`.
K::Model classifier(const std::string& name) {
  auto in = K::Input({4}, K::DType::float32, name + "_input");
  auto out = K::layers::Dense(10, {.activation = "softmax"})(in);
  K::Model model(in, out, name);
  model.compile({.optimizer = "adam", .loss = "sparse_categorical_crossentropy", .metrics = {"accuracy"}});
  return model;
}

// Writes a small but valid Fashion-MNIST directory (raw or gzip IDX files).
void write_fake_fashion_mnist(const fs::path& dir, bool gzip) {
  for (const char* prefix : {"train", "t10k"}) {
    std::vector<std::uint8_t> pixels(5 * 28 * 28);
    for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>(i * 7);
    std::vector<std::uint8_t> labels = {0, 1, 2, 9, 4};
    std::string suffix = gzip ? ".gz" : "";
    K::write_idx((dir / (std::string(prefix) + "-images-idx3-ubyte" + suffix)).string(),
                 K::Tensor::from_vector({5, 28, 28}, pixels), gzip);
    K::write_idx((dir / (std::string(prefix) + "-labels-idx1-ubyte" + suffix)).string(),
                 K::Tensor::from_vector({5}, labels), gzip);
  }
}

}  // namespace

TEST_CASE("errors: Dense on a rank-1 input names the layer and the shape") {
  auto in = K::Input({});  // per-example shape (): batches of shape (None,)
  expect_error([&] { K::layers::Dense(3, {.name = "dense_on_scalars"})(in); },
               {"dense_on_scalars", "Dense", "(None,)", "rank"});
}

TEST_CASE("errors: Conv2D on a rank-2 input") {
  auto in = K::Input({10});
  expect_error([&] { K::layers::Conv2D(4, 3, {.name = "conv_on_vectors"})(in); },
               {"conv_on_vectors", "Conv2D", "(None, 10)", "rank 4", "Reshape"});
  auto img = K::Input({2, 2, 1});
  expect_error([&] { K::layers::Conv2D(4, 3, {.name = "conv_too_small"})(img); },
               {"conv_too_small", "(None, 2, 2, 1)", "3x3"});
  expect_error([&] { K::layers::MaxPooling2D(2, {.name = "pool_on_vectors"})(in); }, {"pool_on_vectors", "(None, 10)"});
}

TEST_CASE("errors: Add of different shapes and Concatenate on mismatched axes") {
  auto a = K::Input({3});
  auto b = K::Input({4});
  expect_error([&] { K::layers::Add({.name = "add_mismatch"})({a, b}); }, {"add_mismatch", "(None, 3)", "(None, 4)"});
  expect_error([&] { K::layers::Add({.name = "add_single"})({a}); }, {"add_single", "2 inputs"});

  auto c = K::Input({2, 3});
  auto d = K::Input({3, 4});
  expect_error([&] { K::layers::Concatenate(-1, {.name = "concat_mismatch"})({c, d}); },
               {"concat_mismatch", "(None, 2, 3)", "(None, 3, 4)"});
  auto e = K::Input({2, 3, 5});
  expect_error([&] { K::layers::Concatenate(-1, {.name = "concat_rank"})({c, e}); },
               {"concat_rank", "(None, 2, 3, 5)"});
  expect_error([&] { K::layers::Concatenate(3, {.name = "concat_axis"})({c, c}); }, {"concat_axis", "axis 3"});
  expect_error([&] { K::layers::Concatenate(0, {.name = "concat_batch"})({c, c}); }, {"concat_batch", "batch"});
}

TEST_CASE("errors: shared layers called on incompatible shapes, bad Reshape") {
  K::LayerRef dense = K::layers::Dense(3, {.name = "shared_dense"});
  dense(K::Input({4}));
  expect_error([&] { dense(K::Input({5})); }, {"shared_dense", "4", "(None, 5)"});
  expect_error([&] { K::layers::Reshape({5, 5}, {.name = "bad_reshape"})(K::Input({12})); },
               {"bad_reshape", "(None, 12)", "(5, 5)"});
}

TEST_CASE("errors: labels out of range in fit, and the model stays usable") {
  K::Model model = classifier("labels_model");
  K::Tensor x = errors_random_tensor({6, 4}, 1);
  auto bad = K::Dataset::from_tensor_slices(x, int_labels({0, 1, 10, 3, 4, 5})).batch(3);
  expect_error([&] { model.fit(bad, {.verbose = 0}); }, {"label 10", "10 classes"});
  auto negative = K::Dataset::from_tensor_slices(x, int_labels({0, -1, 2, 3, 4, 5})).batch(6);
  expect_error([&] { model.evaluate(negative, {.verbose = 0}); }, {"label -1"});
  // After the failed step the same model trains on good data (no hang, no poisoned state).
  auto good = K::Dataset::from_tensor_slices(x, int_labels({0, 1, 9, 3, 4, 5})).batch(3);
  auto history = model.fit(good, {.epochs = 2, .verbose = 0});
  CHECK(history.history["loss"].size() == 2);
}

TEST_CASE("errors: wrong dtypes — uint8 images for a float32 Input, float labels for sparse crossentropy") {
  K::Model model = classifier("dtype_model");
  std::vector<std::uint8_t> pixels(8 * 4, 7);
  K::Tensor images = K::Tensor::from_vector({8, 4}, pixels);
  auto ds = K::Dataset::from_tensor_slices(images, int_labels({0, 1, 2, 3, 4, 5, 6, 7})).batch(4);
  expect_error([&] { model.fit(ds, {.verbose = 0}); }, {"dtype_model_input", "float32", "uint8"});
  expect_error([&] { model.predict_on_batch(images); }, {"dtype_model_input", "float32", "uint8"});

  K::Tensor x = errors_random_tensor({8, 4}, 2);
  K::Tensor float_labels = K::Tensor::from_vector({8}, std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7});
  expect_error([&] { model.fit(K::Dataset::from_tensor_slices(x, float_labels).batch(4), {.verbose = 0}); },
               {"float32", "integer"});

  // A uint8 Input wired straight into a float32 layer is refused when the graph is built.
  auto raw = K::Input({4}, K::DType::uint8);
  expect_error([&] { K::layers::Dense(2, {.name = "dense_on_bytes"})(raw); }, {"dense_on_bytes", "uint8", "float32"});
}

TEST_CASE("errors: shapes that do not match the Input") {
  K::Model model = classifier("shape_model");
  K::Tensor x = errors_random_tensor({6, 5}, 3);
  auto ds = K::Dataset::from_tensor_slices(x, int_labels({0, 1, 2, 3, 4, 5})).batch(3);
  expect_error([&] { model.fit(ds, {.verbose = 0}); }, {"shape_model_input", "(None, 4)", "(3, 5)"});
  K::Tensor y_short = int_labels({0, 1, 2});
  expect_error([&] { model.train_on_batch(errors_random_tensor({6, 4}, 4), y_short); }, {"shape_model", "6", "3"});
}

TEST_CASE("errors: empty dataset, batch size 0, unbatched dataset") {
  K::Model model = classifier("data_model");
  K::Tensor x0({0, 4});
  K::Tensor y0({0}, K::DType::int32);
  auto empty = K::Dataset::from_tensor_slices(x0, y0);
  expect_error([&] { model.fit(empty.batch(4), {.verbose = 0}); }, {"data_model", "empty"});
  expect_error([&] { model.evaluate(empty.batch(4), {.verbose = 0}); }, {"data_model", "empty"});
  expect_error([&] { model.predict(empty.batch(4)); }, {"data_model", "empty"});

  K::Tensor x = errors_random_tensor({6, 4}, 5);
  auto ds = K::Dataset::from_tensor_slices(x, int_labels({0, 1, 2, 3, 4, 5}));
  expect_error([&] { ds.batch(0); }, {"batch_size", "0"});
  expect_error([&] { ds.batch(-3); }, {"batch_size", "-3"});
  expect_error([&] { model.fit(ds, {.verbose = 0}); }, {"data_model", "batch"});
  expect_error([&] { model.evaluate(ds, {.verbose = 0}); }, {"data_model", "batch"});
  expect_error([&] { model.predict(ds); }, {"data_model", "batch"});
  expect_error([&] { model.fit(ds.batch(2).repeat(), {.verbose = 0}); }, {"data_model", "steps_per_epoch"});
  // fit needs (x, y) elements.
  expect_error([&] { model.fit(K::Dataset::from_tensor_slices(x).batch(2), {.verbose = 0}); }, {"data_model"});
}

TEST_CASE("errors: Fashion-MNIST loader with a missing or truncated IDX file") {
  SUBCASE("missing files") {
    TempDir dir;
    expect_error([&] { K::datasets::fashion_mnist::load(dir.path.string()); },
                 {dir.path.string(), "train-images-idx3-ubyte", "dataset-fashion-mnist"});
  }
  SUBCASE("one file missing") {
    TempDir dir;
    write_fake_fashion_mnist(dir.path, false);
    fs::remove(dir.path / "t10k-labels-idx1-ubyte");
    expect_error([&] { K::datasets::fashion_mnist::load(dir.path.string()); },
                 {dir.path.string(), "t10k-labels-idx1-ubyte"});
  }
  SUBCASE("a valid fake directory loads") {
    TempDir dir;
    write_fake_fashion_mnist(dir.path, true);
    auto [train, test] = K::datasets::fashion_mnist::load(dir.path.string());
    CHECK(train.cardinality() == 5);
    CHECK(test.cardinality() == 5);
  }
  SUBCASE("truncated raw image file") {
    TempDir dir;
    write_fake_fashion_mnist(dir.path, false);
    fs::path images = dir.path / "train-images-idx3-ubyte";
    fs::resize_file(images, 16 + 1000);  // header + a part of the 3920 pixel bytes
    expect_error([&] { K::datasets::fashion_mnist::load(dir.path.string()); }, {images.string(), "truncated"});
  }
  SUBCASE("truncated header") {
    TempDir dir;
    write_fake_fashion_mnist(dir.path, false);
    fs::path labels = dir.path / "train-labels-idx1-ubyte";
    fs::resize_file(labels, 6);
    expect_error([&] { K::datasets::fashion_mnist::load(dir.path.string()); }, {labels.string(), "truncated"});
  }
  SUBCASE("truncated gzip file") {
    TempDir dir;
    write_fake_fashion_mnist(dir.path, true);
    fs::path images = dir.path / "train-images-idx3-ubyte.gz";
    fs::resize_file(images, fs::file_size(images) / 2);
    expect_error([&] { K::datasets::fashion_mnist::load(dir.path.string()); }, {images.string()});
  }
  SUBCASE("label out of range in the file") {
    TempDir dir;
    write_fake_fashion_mnist(dir.path, false);
    K::write_idx((dir.path / "t10k-labels-idx1-ubyte").string(),
                 K::Tensor::from_vector({5}, std::vector<std::uint8_t>{0, 1, 12, 3, 4}), false);
    expect_error([&] { K::datasets::fashion_mnist::load(dir.path.string()); }, {"t10k-labels-idx1-ubyte", "12"});
  }
}

TEST_CASE("errors: unknown activation, loss, optimizer and metric names") {
  expect_error([] { K::layers::Dense(3, {.activation = "relux"}); }, {"Dense", "relux", "relu"});
  expect_error([] { K::layers::Conv2D(3, 3, {.activation = "swishy"}); }, {"Conv2D", "swishy"});
  expect_error([] { K::layers::Activation("gelu_fast"); }, {"gelu_fast"});
  expect_error([] { K::padding_from_name("full", "Conv2D"); }, {"Conv2D", "full", "same"});

  auto in = K::Input({4});
  K::Model model(in, K::layers::Dense(2)(in), "names_model");
  expect_error([&] { model.compile({.optimizer = "adam", .loss = "mean_squared_eror"}); }, {"mean_squared_eror"});
  expect_error([&] { model.compile({.optimizer = "adamw_fast", .loss = "mse"}); }, {"adamw_fast", "adam"});
  expect_error([&] { model.compile({.optimizer = "adam", .loss = "mse", .metrics = {"f1_score"}}); },
               {"f1_score", "accuracy"});
  expect_error([&] { model.compile({.optimizer = "adam"}); }, {"names_model", "loss"});
  CHECK(!model.compiled());
}

TEST_CASE("errors: using a model before compile, and a Sequential model without an input shape") {
  auto in = K::Input({4});
  K::Model model(in, K::layers::Dense(2)(in), "uncompiled_model");
  K::Tensor x = errors_random_tensor({3, 4}, 6);
  K::Tensor y = int_labels({0, 1, 1});
  // predict needs no compile() (Keras allows it: the default strategy); training does.
  CHECK(model.predict(K::Dataset::from_tensor_slices(x).batch(2)).shape() == K::Shape{3, 2});
  CHECK(model.predict_on_batch(x).shape() == K::Shape{3, 2});
  expect_error([&] { model.fit(K::Dataset::from_tensor_slices(x, y).batch(2), {.verbose = 0}); },
               {"uncompiled_model", "compile()", "fit"});
  expect_error([&] { model.evaluate(K::Dataset::from_tensor_slices(x, y).batch(2), {.verbose = 0}); },
               {"uncompiled_model", "compile()"});
  expect_error([&] { model.train_on_batch(x, y); }, {"uncompiled_model", "compile()"});
  expect_error([&] { model.optimizer(); }, {"uncompiled_model", "compile()"});

  K::Sequential seq({K::layers::Dense(3)}, "seq_without_input");
  std::ostringstream os;
  expect_error([&] { seq.summary(os); }, {"seq_without_input", "InputLayer"});
  expect_error([&] { seq.to_json(); }, {"seq_without_input"});
  K::Sequential empty(std::vector<K::LayerRef>{}, "empty_sequential");
  empty.compile({.optimizer = "sgd", .loss = "mse"});
  expect_error([&] { empty.predict_on_batch(x); }, {"empty_sequential", "no layers"});
}

TEST_CASE("errors: set_weights with the wrong count or shapes") {
  auto in = K::Input({4});
  K::Model model(in, K::layers::Dense(2)(in), "weights_model");
  auto w = model.get_weights();
  REQUIRE(w.size() == 2);
  expect_error([&] { model.set_weights({w[0]}); }, {"weights_model", "1", "2"});
  expect_error([&] { model.set_weights({w[0], K::Tensor::zeros({3})}); }, {"weights_model", "(2,)", "(3,)"});
  // Nothing was changed by the failed calls.
  auto after = model.get_weights();
  CHECK(after[0].to_vector() == w[0].to_vector());
  CHECK(after[1].to_vector() == w[1].to_vector());
}

TEST_CASE("errors: invalid layer arguments") {
  expect_error([] { K::layers::Dense(0); }, {"Dense", "units", "0"});
  expect_error([] { K::layers::Conv2D(0, 3); }, {"Conv2D", "filters"});
  expect_error([] { K::layers::Dropout(1.0f); }, {"Dropout", "rate"});
  expect_error([] { K::layers::MaxPooling2D(0); }, {"pool_size"});
  expect_error([] { K::Input({28, -1}); }, {"Input", "(28, None)"});
}
