// Whole models in `.keras` archives (Model::save, load_model) and model_from_json: round trips that
// predict the same bits, a model saved under 2 replicas loading under 1, and the errors for a bad
// path, a missing, truncated, corrupted or foreign file and a config kerascpp cannot rebuild.
// Against Python Keras 3 both ways: tests/python/test_keras_archive.py.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "../examples/ncf_model.hpp"
#include "../examples/transformer_model.hpp"
#include "io/keras_archive.hpp"
#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing.hpp"
#include "temp_dir.hpp"
#include "training/compile_config.hpp"

namespace K = kerascpp;
namespace KT = kerascpp::testing;
namespace fs = std::filesystem;

namespace {

// Every layer class load_model rebuilds, in one functional model.
K::Model every_layer_model() {
  K::set_random_seed(3);
  auto img = K::Input({6, 6, 2}, K::DType::float32, "image");
  auto x = K::layers::ZeroPadding2D({1, 0, 2, 1})(img);
  x = K::layers::Conv2D(
      3, {3, 2},
      {.strides = {1, 2}, .activation = "relu", .kernel_regularizer = K::regularizers::L1L2(1e-3f, 1e-4f)})(x);
  x = K::layers::BatchNormalization({.momentum = 0.8f})(x);
  auto p = K::layers::MaxPooling2D(2, {.padding = K::Padding::same})(x);
  auto q = K::layers::AveragePooling2D(2, {.strides = 1})(x);
  auto g = K::layers::Concatenate()({K::layers::GlobalAveragePooling2D()(p), K::layers::GlobalMaxPooling2D()(q)});
  auto f = K::layers::Flatten()(K::layers::Reshape({2, 3})(g));
  auto d = K::layers::Dense(4, {.activation = "tanh", .kernel_constraint = K::constraints::MaxNorm(2.f)})(f);
  auto e = K::layers::Dense(4)(K::layers::Dropout(0.3f)(f));
  auto m =
      K::layers::Average()({K::layers::Add()({d, e}), K::layers::Subtract()({d, e}), K::layers::Multiply()({d, e})});
  m = K::layers::LayerNormalization({.epsilon = 1e-5f})(K::layers::Activation("sigmoid")(m));
  auto tokens = K::Input({5}, K::DType::int32, "tokens");
  auto t = K::layers::Embedding(7, 4, {.mask_zero = true})(tokens);
  t = K::layers::Softmax({.axis = 1})(K::layers::Flatten()(t));  // Flatten drops the mask
  auto out = K::layers::Dense(3, {.activation = "softmax"})(K::layers::Concatenate()({m, t}));
  return K::Model({img, tokens}, {out}, "every_layer");
}

// A model loaded on one device from a model trained under 2 replicas: the same weights, bit for
// bit, and the same predictions up to float32 rounding (the source predicts each half batch on
// its own replica with one thread; oneDNN's AVX2 kernels may then round one element differently
// from the whole batch on two threads: 1 ulp seen on an AMD EPYC without AVX-512).
void expect_same_weights_and_predictions(K::Model& loaded, K::Model& source, const std::vector<K::Tensor>& xs) {
  const auto a = loaded.get_weights(), b = source.get_weights();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].to_vector() == b[i].to_vector());
  CHECK(KT::allclose(loaded.predict_on_batch(xs), source.predict_on_batch(xs), 1e-6, 1e-7));
}

std::vector<K::Tensor> inputs() {
  std::vector<float> img(4 * 6 * 6 * 2);
  for (std::size_t i = 0; i < img.size(); ++i) img[i] = static_cast<float>((i * 37) % 17) / 8.f - 1.f;
  std::vector<std::int32_t> ids(4 * 5);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int32_t>((i * 3) % 7);
  return {K::Tensor::from_vector({4, 6, 6, 2}, img), K::Tensor::from_vector({4, 5}, ids)};
}

std::vector<char> bytes_of(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& p, const std::vector<char>& b) {
  std::ofstream(p, std::ios::binary).write(b.data(), static_cast<std::streamsize>(b.size()));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const K::Error& e) { return e.what(); }
  return "(no error)";
}

}  // namespace

TEST_CASE("keras archive: save then load_model rebuilds every supported layer and predicts the same bits") {
  kerascpp_test::TempDir dir;
  K::Model model = every_layer_model();
  model.compile({.optimizer = K::optimizers::Adam(1e-2), .loss = "sparse_categorical_crossentropy"});
  K::Tensor y = K::Tensor::from_vector({4}, std::vector<std::int32_t>{0, 2, 1, 2});
  model.train_on_batch(inputs(), y);  // moving statistics and weights away from their initial values
  const std::string path = (dir.path / "m.keras").string();
  model.save(path);
  K::Model loaded = K::load_model(path);
  CHECK(loaded.to_json() == model.to_json());
  CHECK(loaded.count_params() == model.count_params());
  CHECK(loaded.regularization_loss() == doctest::Approx(model.regularization_loss()));
  CHECK(loaded.predict_on_batch(inputs()).to_vector() == model.predict_on_batch(inputs()).to_vector());
  // model_from_json alone gives the architecture with fresh weights.
  K::Model fresh = K::model_from_json(model.to_json());
  CHECK(fresh.to_json() == model.to_json());
  CHECK(fresh.predict_on_batch(inputs()).to_vector() != model.predict_on_batch(inputs()).to_vector());
}

TEST_CASE("keras archive: Conv1D, LSTM, GRU, DepthwiseConv2D, Conv2DTranspose, UpSampling2D and Dot round-trip") {
  kerascpp_test::TempDir dir;
  K::set_random_seed(6);
  auto seq = K::Input({7, 3}, K::DType::float32, "sequence");
  auto s = K::layers::Conv1D(4, 3, {.padding = K::Padding::causal, .activation = "relu"})(seq);
  s = K::layers::LSTM(5, {.return_sequences = true})(s);
  s = K::layers::GRU(3, {.kernel_regularizer = K::regularizers::L2(1e-3f), .go_backwards = true})(s);
  auto img = K::Input({4, 4, 2}, K::DType::float32, "picture");
  auto i = K::layers::DepthwiseConv2D(3, {.padding = K::Padding::same, .depth_multiplier = 2})(img);
  i = K::layers::Conv2DTranspose(2, 2, {.strides = 2})(i);
  i = K::layers::UpSampling2D({2, 1}, {.interpolation = "bilinear"})(i);
  i = K::layers::Dense(3)(K::layers::GlobalAveragePooling2D()(i));
  auto d = K::layers::Dot(1, {.normalize = true})({i, s});
  K::Model model({seq, img}, {K::layers::Dense(2)(K::layers::Concatenate()({d, s}))}, "more_layers");
  std::vector<float> a(3 * 7 * 3), b(3 * 4 * 4 * 2);
  for (std::size_t k = 0; k < a.size(); ++k) a[k] = static_cast<float>((k * 13) % 11) / 5.f - 1.f;
  for (std::size_t k = 0; k < b.size(); ++k) b[k] = static_cast<float>((k * 7) % 9) / 4.f - 1.f;
  const std::vector<K::Tensor> xs{K::Tensor::from_vector({3, 7, 3}, a), K::Tensor::from_vector({3, 4, 4, 2}, b)};
  model.save(dir.file("more.keras"));
  K::Model loaded = K::load_model(dir.file("more.keras"));
  CHECK(loaded.to_json() == model.to_json());
  CHECK(loaded.predict_on_batch(xs).to_vector() == model.predict_on_batch(xs).to_vector());
}

TEST_CASE("keras archive: MultiHeadAttention (causal self-attention; cross-attention with a key and a mask input)") {
  kerascpp_test::TempDir dir;
  K::set_random_seed(9);
  auto q = K::Input({4, 6}, K::DType::float32, "queries");
  auto v = K::Input({5, 6}, K::DType::float32, "values");
  auto m = K::Input({4, 5}, K::DType::uint8, "keep");
  auto self = K::layers::MultiHeadAttention(2, 3, {.output_shape = 6})(q, q, {.use_causal_mask = true});
  auto x = K::layers::LayerNormalization()(K::layers::Add()({q, self}));
  auto cross = K::layers::MultiHeadAttention(3, 2, {.value_dim = 4, .use_bias = false})(
      x, v, {.key = K::layers::Dense(6)(v), .attention_mask = m});
  K::Model model({q, v, m}, {K::layers::Dense(2)(cross)}, "attention");
  std::vector<float> qa(2 * 4 * 6), va(2 * 5 * 6);
  for (std::size_t k = 0; k < qa.size(); ++k) qa[k] = static_cast<float>((k * 5) % 13) / 6.f - 1.f;
  for (std::size_t k = 0; k < va.size(); ++k) va[k] = static_cast<float>((k * 11) % 7) / 3.f - 1.f;
  std::vector<std::uint8_t> keep(2 * 4 * 5);
  for (std::size_t k = 0; k < keep.size(); ++k) keep[k] = k % 3 != 1;
  K::Tensor mask({2, 4, 5}, K::DType::uint8, K::Device{});
  std::copy(keep.begin(), keep.end(), mask.data<std::uint8_t>());
  const std::vector<K::Tensor> xs{K::Tensor::from_vector({2, 4, 6}, qa), K::Tensor::from_vector({2, 5, 6}, va), mask};
  model.save(dir.file("attention.keras"));
  K::Model loaded = K::load_model(dir.file("attention.keras"));
  CHECK(loaded.to_json() == model.to_json());
  CHECK(loaded.predict_on_batch(xs).to_vector() == model.predict_on_batch(xs).to_vector());
}

TEST_CASE("keras archive: the NCF example's NeuMF (two id inputs, L2 on embeddings and layers) round-trips") {
  kerascpp_test::TempDir dir;
  K::set_random_seed(8);
  K::Model model = examples::neumf_model({.num_users = 30,
                                          .num_items = 20,
                                          .mf_dim = 4,
                                          .layers = {8, 6, 4},
                                          .mf_regularization = 1e-3,
                                          .mlp_regularization = {0.0, 1e-3, 1e-3}});
  const std::vector<K::Tensor> ids{K::Tensor::from_vector({4, 1}, std::vector<std::int32_t>{0, 7, 29, 3}),
                                   K::Tensor::from_vector({4, 1}, std::vector<std::int32_t>{19, 2, 5, 0})};
  model.save(dir.file("ncf.keras"));
  K::Model loaded = K::load_model(dir.file("ncf.keras"));
  CHECK(loaded.to_json() == model.to_json());
  CHECK(loaded.regularization_loss() == doctest::Approx(model.regularization_loss()));
  CHECK(loaded.predict_on_batch(ids).to_vector() == model.predict_on_batch(ids).to_vector());
}

TEST_CASE("keras archive: the Transformer (a custom layer, registered) round-trips; unregistered it is named") {
  namespace T = examples::transformer;
  kerascpp_test::TempDir dir;
  const T::Params p = T::micro_params();
  K::set_random_seed(5);
  K::Model model = T::build_transformer(p, 4, 3).model;
  const std::vector<K::Tensor> xs{K::Tensor::from_vector({2, 4}, std::vector<std::int32_t>{2, 5, 9, 1, 3, 3, 7, 10}),
                                  K::Tensor::from_vector({2, 4}, std::vector<std::int32_t>{1, 2, 5, 9, 1, 3, 3, 7}),
                                  K::Tensor::from_vector({2, 4}, std::vector<std::int32_t>{0, 1, 2, 3, 0, 1, 2, 3})};
  const std::string path = dir.file("transformer.keras");
  model.save(path);
  // Before registration (the registry is process-wide: only this test registers the class).
  const std::string unknown = error_of([&] { K::load_model(path); });
  CHECK(unknown.find("EmbeddingSharedWeights") != std::string::npos);
  CHECK(unknown.find("register_layer_class") != std::string::npos);
  T::register_transformer_layers();
  K::Model loaded = K::load_model(path);
  CHECK(loaded.to_json() == model.to_json());
  CHECK(loaded.count_params() == model.count_params());
  CHECK(loaded.predict_on_batch(xs).to_vector() == model.predict_on_batch(xs).to_vector());
  // A factory that makes the wrong class, or throws, is named; built-in classes cannot be replaced.
  K::register_layer_class("EmbeddingSharedWeights", [](const K::LayerConfig&) { return K::layers::Dense(3); });
  CHECK(error_of([&] { K::load_model(path); }).find("must make a 'EmbeddingSharedWeights'") != std::string::npos);
  K::register_layer_class("EmbeddingSharedWeights",
                          [](const K::LayerConfig&) -> K::LayerRef { throw K::ValueError("no vocabulary"); });
  CHECK(error_of([&] { K::load_model(path); }).find("no vocabulary") != std::string::npos);
  CHECK_THROWS_AS(K::register_layer_class("Dense", [](const K::LayerConfig&) { return K::layers::Dense(3); }),
                  K::ValueError);
  T::register_transformer_layers();
}

TEST_CASE("keras archive: a Sequential model with a frozen layer round-trips; saving again replaces the file") {
  kerascpp_test::TempDir dir;
  K::set_random_seed(4);
  K::LayerRef frozen = K::layers::Dense(5, {.activation = "relu"});
  frozen->set_trainable(false);
  K::Sequential model({K::layers::InputLayer({3}), frozen, K::layers::Dense(2)});
  const std::string path = (dir.path / "seq.keras").string();
  model.save(path);
  K::Model loaded = K::load_model(path);
  CHECK_FALSE(loaded.get_layer(0)->trainable());
  CHECK(loaded.to_json() == model.to_json());
  K::Tensor x = K::Tensor::from_vector({2, 3}, std::vector<float>{1, 2, 3, -1, 0.5f, 0});
  CHECK(loaded.predict_on_batch(x).to_vector() == model.predict_on_batch(x).to_vector());
  auto w = model.get_weights();
  w[0] = K::Tensor::zeros(w[0].shape());
  model.set_weights(w);
  model.save(path);
  CHECK(K::load_model(path).predict_on_batch(x).to_vector() == model.predict_on_batch(x).to_vector());
}

TEST_CASE("keras archive: a model trained under 2 replicas loads under one device") {
  kerascpp_test::TempDir dir;
  auto train = [](K::distribute::Strategy s) {
    K::Model m = every_layer_model();
    m.compile({.optimizer = "sgd", .loss = "sparse_categorical_crossentropy", .distribute = s});
    m.train_on_batch(inputs(), K::Tensor::from_vector({4}, std::vector<std::int32_t>{1, 0, 2, 1}));
    return m;
  };
  K::Model two = train(K::distribute::MirroredStrategy<>(2));
  const std::string path = (dir.path / "two.keras").string();
  two.save(path);
  K::Model loaded = K::load_model(path);
  loaded.compile({.optimizer = "sgd", .loss = "sparse_categorical_crossentropy"});
  expect_same_weights_and_predictions(loaded, two, inputs());
}

TEST_CASE("keras archive: bad paths and bad files are clear errors") {
  kerascpp_test::TempDir dir;
  K::Model model = every_layer_model();
  CHECK_THROWS_WITH_AS(model.save((dir.path / "m.h5").string()), doctest::Contains("must end in \".keras\""),
                       K::ValueError);
  CHECK_THROWS_WITH_AS(K::load_model((dir.path / "missing.keras").string()), doctest::Contains("check the path"),
                       K::IOError);
  const fs::path good = dir.path / "good.keras";
  model.save(good.string());
  const std::vector<char> bytes = bytes_of(good);

  const fs::path text = dir.path / "text.keras";
  write_bytes(text, std::vector<char>(100, 'x'));
  CHECK_THROWS_WITH_AS(K::load_model(text.string()), doctest::Contains("not a readable .keras archive"), K::IOError);

  const fs::path truncated = dir.path / "truncated.keras";
  write_bytes(truncated, std::vector<char>(bytes.begin(), bytes.begin() + static_cast<long>(bytes.size() / 2)));
  CHECK_THROWS_AS(K::load_model(truncated.string()), K::IOError);

  // One byte of the stored weights changed: the member's CRC-32 no longer matches.
  const fs::path corrupted = dir.path / "corrupted.keras";
  std::vector<char> flipped = bytes;
  const std::string marker = "model.weights.h5";
  const auto at = std::search(flipped.begin(), flipped.end(), marker.begin(), marker.end());
  REQUIRE(at != flipped.end());
  *(at + static_cast<long>(marker.size()) + 600) ^= 0x5A;  // inside the (stored, uncompressed) HDF5 bytes
  write_bytes(corrupted, flipped);
  const std::string message = error_of([&] { K::load_model(corrupted.string()); });
  CHECK(message.find("corrupted") != std::string::npos);

  // A zip that is not a Keras model: no model.weights.h5.
  const fs::path foreign = dir.path / "foreign.keras";
  kerascpp::io::write_keras_archive(foreign.string(), {model.to_json(), "{}", {}});
  CHECK_THROWS_AS(K::load_model(foreign.string()), K::IOError);
  kerascpp::io::write_keras_archive(foreign.string(), {"{\"class_name\": \"Sequential\"", "{}", {'x'}});
  CHECK_THROWS_WITH_AS(K::load_model(foreign.string()), doctest::Contains("not JSON"), K::ValueError);
}

TEST_CASE("model_from_json: settings kerascpp lacks are named, not ignored") {
  K::Model model = every_layer_model();
  std::string json = model.to_json();
  const std::string conv = "\"filters\":3";
  REQUIRE(json.find(conv) != std::string::npos);
  json.replace(json.find(conv), conv.size(), conv + ",\"dilation_rate\":[2,2]");
  CHECK_THROWS_WITH_AS(K::model_from_json(json), doctest::Contains("dilation_rate"), K::ValueError);
  CHECK_THROWS_WITH_AS(K::model_from_json("{\"class_name\": \"Weird\", \"config\": {}}"), doctest::Contains("Weird"),
                       K::ValueError);
}

TEST_CASE("ModelCheckpoint(save_weights_only = false) writes .keras archives that load_model reads") {
  kerascpp_test::TempDir dir;
  CHECK_THROWS_WITH_AS(K::callbacks::ModelCheckpoint(dir.file("e{epoch}.weights.h5"), {.save_weights_only = false}),
                       doctest::Contains("must end in '.keras'"), K::ValueError);
  CHECK_THROWS_WITH_AS(K::callbacks::ModelCheckpoint(dir.file("e{epoch}.keras")), doctest::Contains(".weights.h5"),
                       K::ValueError);
  K::Model model = every_layer_model();
  model.compile({.optimizer = "adam",
                 .loss = "sparse_categorical_crossentropy",
                 .distribute = K::distribute::MirroredStrategy<>(2)});
  auto ckpt = std::make_shared<K::callbacks::ModelCheckpoint>(
      dir.file("ckpt/e{epoch:02d}.keras"), K::callbacks::ModelCheckpointOptions{.save_weights_only = false});
  auto xs = inputs();
  auto y = K::Tensor::from_vector({4}, std::vector<std::int32_t>{2, 1, 0, 0});
  model.fit(K::Dataset::from_tensor_slices({xs[0], xs[1], y}).batch(2),
            {.epochs = 2, .callbacks = {ckpt}, .verbose = 0});
  CHECK(ckpt->last_saved() == dir.file("ckpt/e02.keras"));
  CHECK(fs::exists(dir.path / "ckpt" / "e01.keras"));
  K::Model loaded = K::load_model(ckpt->last_saved());
  expect_same_weights_and_predictions(loaded, model, xs);
}

TEST_CASE("keras archive: a compiled model's compile_config comes back compiled, and training goes on") {
  kerascpp_test::TempDir dir;
  auto make = [] {
    K::set_random_seed(11);
    auto in = K::Input({4});
    auto h = K::layers::Dense(6, {.activation = "relu"})(in);
    return K::Model(in, K::layers::Dense(3)(h));
  };
  const K::Tensor x =
      K::Tensor::from_vector({4, 4}, std::vector<float>{0.1f, -0.4f, 0.9f, 0.3f, -0.7f, 0.2f, 0.5f, -0.1f, 0.6f, 0.8f,
                                                        -0.3f, -0.9f, 0.0f, 0.4f, -0.5f, 0.7f});
  const K::Tensor y = K::Tensor::from_vector({4}, std::vector<std::int32_t>{2, 0, 1, 2});
  K::Model model = make();
  auto adam = K::optimizers::Adam(0.02, {.beta_1 = 0.8, .beta_2 = 0.99, .epsilon = 1e-6});
  adam.set_gradient_clipping({.clipnorm = 5.0});
  model.compile({.optimizer = adam,
                 .loss = K::losses::SparseCategoricalCrossentropy({.from_logits = true}),
                 .metrics = {"accuracy"}});
  for (int i = 0; i < 3; ++i) model.train_on_batch(x, y);
  const std::string path = (dir.path / "compiled.keras").string();
  model.save(path);

  K::Model loaded = K::load_model(path);
  REQUIRE(loaded.compiled());
  CHECK(loaded.optimizer().class_name() == "Adam");
  CHECK(loaded.optimizer().learning_rate() == doctest::Approx(0.02));
  CHECK(loaded.optimizer().iterations() == 3);  // the optimizer state came with the weights
  REQUIRE(loaded.optimizer().gradient_clipping().clipnorm.has_value());
  CHECK(*loaded.optimizer().gradient_clipping().clipnorm == doctest::Approx(5.0));
  CHECK(loaded.metrics_names() == model.metrics_names());
  // Two more steps from the archive give the weights two more steps of the original give.
  for (int i = 0; i < 2; ++i) {
    model.train_on_batch(x, y);
    loaded.train_on_batch(x, y);
  }
  const auto a = model.get_weights(), b = loaded.get_weights();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].to_vector() == b[i].to_vector());

  // A learning-rate schedule is not rebuilt (as Keras would need the schedule's class): no
  // compile_config is written, so the model comes back uncompiled, weights intact.
  K::Model scheduled = make();
  scheduled.compile({.optimizer = K::optimizers::SGD(K::optimizers::schedules::CosineDecay(0.1, 100)),
                     .loss = "sparse_categorical_crossentropy"});
  scheduled.save(path);
  CHECK_FALSE(K::load_model(path).compiled());
}

// Keras writes every loss object's reduction; kerascpp's losses take the mean over the batch
// ("sum_over_batch_size"), so a file asking for another is not compiled (training with the mean
// would be silently off by the batch size for "sum").
TEST_CASE("keras archive: a compile_config loss with a reduction kerascpp lacks leaves the model uncompiled") {
  auto compile_with_reduction = [](const char* reduction) {
    auto in = K::Input({3});
    K::Model model(in, K::layers::Dense(2)(in));
    const nlohmann::ordered_json config = {
        {"optimizer", nlohmann::ordered_json::parse(K::optimizers::serialize(K::optimizers::SGD(0.1)))},
        {"loss",
         {{"module", "keras.losses"},
          {"class_name", "MeanSquaredError"},
          {"config", {{"name", "mean_squared_error"}, {"reduction", reduction}}}}}};
    K::detail::compile_from_config(model, config, "test.keras");
    return model.compiled();
  };
  CHECK(compile_with_reduction("sum_over_batch_size"));
  CHECK_FALSE(compile_with_reduction("sum"));
  CHECK_FALSE(compile_with_reduction("none"));
}

// Keras saves a metric made with arguments as an object; load_model rebuilds the ones kerascpp
// has, with their arguments, and refuses (uncompiled, with a warning) an argument it lacks.
TEST_CASE("keras archive: compile_config metric objects are rebuilt; arguments kerascpp lacks are refused") {
  using Json = nlohmann::ordered_json;
  auto compile_with_metric = [](K::Model& model, Json metric) {
    const Json config = {{"optimizer", Json::parse(K::optimizers::serialize(K::optimizers::SGD(0.1)))},
                         {"loss", "mse"},
                         {"metrics", Json::array({std::move(metric)})}};
    K::detail::compile_from_config(model, config, "test.keras");
    return model.compiled();
  };
  auto metric = [](const char* cls, Json config) {
    return Json{{"module", "keras.metrics"}, {"class_name", cls}, {"config", std::move(config)}};
  };
  auto in = K::Input({2});
  K::Model model(in, K::layers::Dense(3)(in));
  // R2Score sized by the model's 3 outputs (Keras builds it on the first batch), checked against
  // the uniform average of the per-output R² computed here in float64.
  REQUIRE(compile_with_metric(model, metric("R2Score", {{"name", "r2"}, {"class_aggregation", "uniform_average"}})));
  const std::vector<float> xv{0.1f, -0.4f, 0.7f, 0.2f, -0.3f, 0.9f, 0.5f, -0.8f};
  const std::vector<float> yv{0.3f, -1.f, 0.5f, 1.2f, 0.1f, -0.2f, -0.7f, 0.4f, 0.9f, 0.2f, 0.6f, -0.5f};
  const K::Tensor x = K::Tensor::from_vector({4, 2}, xv), y = K::Tensor::from_vector({4, 3}, yv);
  const std::vector<float> p = model.predict_on_batch(x).to_vector();
  double expected = 0;
  for (int c = 0; c < 3; ++c) {
    double mean = 0, residual = 0, total = 0;
    for (int r = 0; r < 4; ++r) mean += yv[r * 3 + c] / 4.0;
    for (int r = 0; r < 4; ++r) {
      residual += (yv[r * 3 + c] - p[r * 3 + c]) * double(yv[r * 3 + c] - p[r * 3 + c]);
      total += (yv[r * 3 + c] - mean) * (yv[r * 3 + c] - mean);
    }
    expected += (1 - residual / total) / 3;
  }
  CHECK(model.test_on_batch(x, y)["r2"] == doctest::Approx(expected).epsilon(1e-5));
  auto compiles = [&](Json m) {
    auto fresh_in = K::Input({2});
    K::Model fresh(fresh_in, K::layers::Dense(3)(fresh_in));
    return compile_with_metric(fresh, std::move(m));
  };
  CHECK(compiles(metric("F1Score", {{"average", "macro"}, {"threshold", 0.5}})));
  CHECK(compiles(metric("Precision", {{"thresholds", 0.4}, {"top_k", nullptr}})));
  // Arguments kerascpp has no option for: not swapped for a default, refused.
  CHECK_FALSE(compiles(metric("Precision", {{"thresholds", {0.3, 0.6}}})));
  CHECK_FALSE(compiles(metric("AUC", {{"multi_label", true}})));
  CHECK_FALSE(compiles(metric("CosineSimilarity", {{"axis", 0}})));
  CHECK_FALSE(compiles(metric("NoSuchMetric", Json::object())));
}
