// keras_archive_interop: drives tests/python/test_keras_archive.py (`.keras` archives both ways
// with Python Keras 3).
//   keras_archive_interop save <kind> <dir>
//       builds model `kind` (mlp, cnn_bn, branching, separable, preprocessing, encoding,
//       augmentation), sets every weight to fixed pseudo-random
//       values, writes <dir>/model.keras (Model::save), a fixed input batch <dir>/x.f32, the
//       prediction <dir>/y.f32 (raw float32) and the shapes in <dir>/shapes.json.
//   keras_archive_interop load <model.keras> <x.f32> <out.f32> <d0> <d1> ...
//       load_model(model.keras), predicts on x.f32 of batch shape (d0, d1, ...) and writes out.f32;
//       prints the model's to_json() on stdout, with "kerascpp_compiled" (optimizer, learning
//       rate, metrics names) added when the archive's compile_config compiled it.
//   keras_archive_interop save transformer|ncf <dir>
//       the Transformer example (a custom layer: its shared embedding) or a small NeuMF (the NCF
//       example) with fixed pseudo-random weights: <dir>/model.keras, its int32 inputs
//       <dir>/ids0.i32, ids1.i32, ... (Transformer: three of 2 x 4; NCF: user and item ids, 5 x 1)
//       and <dir>/y.f32, the shapes and the number of inputs in <dir>/shapes.json.
//   keras_archive_interop load_ids <model.keras> <out.f32> <rows> <cols> <ids.i32> ...
//       load_model (the Transformer's layer registered) and predicts on int32 inputs [rows, cols].
//   The encoding kind also writes <dir>/adapt.f32, the 40 values its Discretization adapted on.
//   The mlp kind is compiled (Adam(0.003, beta_1 = 0.85)) and trained one step before saving;
//   mlp_lso with a LossScaleOptimizer around Adam(0.01) (initial scale 1024, growth every 2 steps)
//   and trained 3 steps.
// Errors: stderr, exit status 1.
#include <kerascpp/kerascpp.hpp>

#include "../../examples/ncf_model.hpp"
#include "../../examples/transformer_model.hpp"
#include "tool_io.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace K = kerascpp;
namespace fs = std::filesystem;
using namespace tool_io;

namespace {

// What the "encoding" kind's Discretization adapts on (written to adapt.f32 for Keras to adapt on too).
std::vector<float> adapt_values() { return uniform(40, 11, -1.f, 1.f); }

K::Model build(const std::string& kind) {
  K::set_random_seed(1);
  if (kind == "mlp" || kind == "mlp_lso")
    return K::Sequential({K::layers::InputLayer({12}), K::layers::Dense(16, {.activation = "relu"}),
                          K::layers::Dropout(0.2f), K::layers::Dense(4, {.activation = "softmax"})});
  if (kind == "cnn_bn") {  // the CNN with BatchNormalization, L2 and a frozen layer
    auto in = K::Input({8, 8, 2});
    auto x = K::layers::ZeroPadding2D(1)(in);
    x = K::layers::Conv2D(4, 3, {.use_bias = false, .kernel_regularizer = K::regularizers::L2(1e-4f)})(x);
    x = K::layers::BatchNormalization({.momentum = 0.9f, .epsilon = 1e-5f})(x);
    x = K::layers::Activation("relu")(x);
    x = K::layers::MaxPooling2D(2, {.strides = 2, .padding = K::Padding::same})(x);
    x = K::layers::Flatten()(x);
    K::LayerRef frozen = K::layers::Dense(6, {.activation = "tanh"});
    frozen->set_trainable(false);
    x = frozen(x);
    return K::Model(in, K::layers::Dense(3, {.activation = "softmax"})(x), "cnn_bn");
  }
  if (kind == "branching") {  // two branches joined by Add and Concatenate, a shared layer
    auto in = K::Input({6, 6, 3});
    auto a = K::layers::Conv2D(4, 3, {.padding = K::Padding::same, .activation = "relu"})(in);
    auto b = K::layers::Conv2D(4, 1, {.strides = 1})(in);
    auto s = K::layers::Add()({a, b});
    auto g = K::layers::GlobalAveragePooling2D()(s);
    auto m = K::layers::GlobalMaxPooling2D()(a);
    K::LayerRef shared = K::layers::Dense(5, {.activation = "tanh"});
    auto c = K::layers::Concatenate()({shared(g), shared(m)});
    c = K::layers::LayerNormalization()(c);
    return K::Model(in, K::layers::Dense(2)(c), "branching");
  }
  if (kind == "separable") {  // the separable convolutions, DepthwiseConv1D, Conv1DTranspose, GroupNormalization
    auto in = K::Input({6, 6, 3});
    auto x = K::layers::SeparableConv2D(
        4, 3, {.strides = 2, .padding = K::Padding::same, .depth_multiplier = 2, .activation = "relu"})(in);
    x = K::layers::GroupNormalization({.groups = 2, .epsilon = 1e-4f})(x);
    x = K::layers::Reshape({9, 4})(x);
    x = K::layers::DepthwiseConv1D(2, {.depth_multiplier = 2, .activation = "tanh"})(x);
    x = K::layers::SeparableConv1D(3, 3, {.padding = K::Padding::same, .use_bias = false})(x);
    x = K::layers::Conv1DTranspose(2, 3, {.strides = 2})(x);
    return K::Model(in, K::layers::Dense(2)(K::layers::Flatten()(x)), "separable");
  }
  if (kind == "preprocessing") {  // the preprocessing layers (RandomFlip: identity in predict)
    auto in = K::Input({7, 6, 3});
    auto x = K::layers::Rescaling(1.f / 127.5f, {.offset = -1.f})(in);
    x = (*K::layers::Normalization())(x);
    x = (*K::layers::Normalization({.mean = {{0.1f, -0.2f, 0.3f}}, .variance = {{2.f, 0.5f, 1.f}}}))(x);
    x = K::layers::Resizing(9, 8)(x);
    x = K::layers::Resizing(5, 7, {.interpolation = "nearest", .crop_to_aspect_ratio = true})(x);
    x = K::layers::CenterCrop(4, 5)(x);
    x = K::layers::RandomFlip("horizontal", {.seed = 3})(x);
    x = K::layers::Conv2D(2, 3)(x);
    return K::Model(in, K::layers::Dense(2)(K::layers::Flatten()(x)), "preprocessing");
  }
  if (kind == "encoding") {  // Discretization (given and adapted boundaries) and CategoryEncoding
    auto in = K::Input({4});
    auto ids = (*K::layers::Discretization({.bin_boundaries = {{-0.5f, 0.f, 0.5f}}}))(in);
    auto counts = K::layers::CategoryEncoding(4, "count")(ids);
    auto adapted = K::layers::Discretization({.num_bins = 3, .output_mode = "multi_hot"});
    adapted->adapt(K::Dataset::from_tensor_slices(K::Tensor::from_vector({40}, adapt_values())).batch(40));
    auto x = K::layers::Concatenate()({counts, (*adapted)(in)});
    return K::Model(in, K::layers::Dense(2)(x), "encoding");
  }
  if (kind == "augmentation") {  // RandomRotation, RandomZoom, RandomTranslation (identity in predict)
    auto in = K::Input({6, 5, 2});
    auto x = K::layers::RandomRotation(0.1, {.fill_mode = "constant", .fill_value = 0.5f, .seed = 1})(in);
    x = K::layers::RandomZoom(K::layers::AffineFactor::pair(-0.2, 0.3), K::layers::AffineFactor::symmetric(0.1))(x);
    x = K::layers::RandomTranslation(K::layers::AffineFactor::symmetric(0.1), K::layers::AffineFactor::pair(-0.2, 0.3),
                                     {.fill_mode = "wrap", .interpolation = "nearest", .seed = 4})(x);
    x = K::layers::Conv2D(2, 3)(x);
    return K::Model(in, K::layers::Dense(2)(K::layers::Flatten()(x)), "augmentation");
  }
  throw K::Error("unknown model kind '" + kind + "'");
}

const std::map<std::string, K::Shape> kExampleShapes = {{"mlp", {12}},
                                                        {"mlp_lso", {12}},
                                                        {"cnn_bn", {8, 8, 2}},
                                                        {"branching", {6, 6, 3}},
                                                        {"separable", {6, 6, 3}},
                                                        {"preprocessing", {7, 6, 3}},
                                                        {"encoding", {4}},
                                                        {"augmentation", {6, 5, 2}}};

// The Transformer's ids: 2 sequences of 4 source ids, 4 decoder ids, positions 0..3.
std::vector<K::Tensor> transformer_ids() {
  return {K::Tensor::from_vector({2, 4}, std::vector<std::int32_t>{2, 5, 9, 1, 3, 3, 7, 10}),
          K::Tensor::from_vector({2, 4}, std::vector<std::int32_t>{1, 2, 5, 9, 1, 3, 3, 7}),
          K::Tensor::from_vector({2, 4}, std::vector<std::int32_t>{0, 1, 2, 3, 0, 1, 2, 3})};
}

void write_i32(const fs::path& path, const K::Tensor& ids) {
  std::ofstream(path, std::ios::binary)
      .write(static_cast<const char*>(ids.raw()), static_cast<std::streamsize>(ids.nbytes()));
}

K::Tensor read_i32(const fs::path& path, std::int64_t rows, std::int64_t cols) {
  K::Tensor ids({rows, cols}, K::DType::int32, K::Device{});
  std::ifstream f(path, std::ios::binary);
  f.read(static_cast<char*>(ids.raw()), static_cast<std::streamsize>(ids.nbytes()));
  if (f.gcount() != static_cast<std::streamsize>(ids.nbytes()))
    throw K::IOError(path.string() + " holds fewer than " + std::to_string(rows * cols) + " int32 ids");
  return ids;
}

void set_pseudo_random_weights(K::Model& model, bool positive_vectors) {
  std::vector<K::Tensor> weights = model.get_weights();
  std::uint32_t seed = 7;
  for (auto& w : weights) {
    auto v = uniform(static_cast<std::size_t>(w.numel()), seed++, -0.5f, 0.5f);
    if (w.shape().size() == 1 && positive_vectors)  // BN variances must stay positive
      for (auto& x : v) x = std::fabs(x) + 0.5f;
    w = K::Tensor::from_vector(w.shape(), v);
  }
  model.set_weights(weights);
}

// NCF's ids: 5 (user, item) pairs of a NeuMF with 7 users, 6 items, mf_dim 3, layers 8-4.
std::vector<K::Tensor> ncf_ids() {
  return {K::Tensor::from_vector({5, 1}, std::vector<std::int32_t>{0, 6, 3, 3, 1}),
          K::Tensor::from_vector({5, 1}, std::vector<std::int32_t>{5, 0, 2, 4, 4})};
}

// The models that take int32 ids: the Transformer or the NCF example.
int save_ids_model(const std::string& kind, const fs::path& dir) {
  K::set_random_seed(1);
  K::Model model =
      kind == "transformer"
          ? examples::transformer::build_transformer(examples::transformer::micro_params(), 4, 3).model
          : examples::neumf_model(
                {.num_users = 7, .num_items = 6, .mf_dim = 3, .layers = {8, 4}, .mlp_regularization = {0.0, 0.0}});
  set_pseudo_random_weights(model, false);
  const std::vector<K::Tensor> ids = kind == "transformer" ? transformer_ids() : ncf_ids();
  K::Tensor y = model.predict_on_batch(ids);
  model.save((dir / "model.keras").string());
  for (std::size_t i = 0; i < ids.size(); ++i) write_i32(dir / ("ids" + std::to_string(i) + ".i32"), ids[i]);
  write_f32(dir / "y.f32", y.to_vector());
  std::ofstream(dir / "shapes.json") << "{\"ids\": " << json_list({ids[0].shape().begin(), ids[0].shape().end()})
                                     << ", \"inputs\": " << ids.size()
                                     << ", \"y\": " << json_list({y.shape().begin(), y.shape().end()}) << "}\n";
  return 0;
}

int save(const std::string& kind, const fs::path& dir) {
  if (kind == "transformer" || kind == "ncf") return save_ids_model(kind, dir);
  K::Model model = build(kind);
  set_pseudo_random_weights(model, kind == "cnn_bn" || kind == "preprocessing");
  K::Shape shape = kExampleShapes.at(kind);
  shape.insert(shape.begin(), 5);
  K::Tensor x = K::Tensor::from_vector(shape, uniform(static_cast<std::size_t>(K::shape_numel(shape)), 99, -1.f, 1.f));
  const K::Tensor labels = K::Tensor::from_vector({5}, std::vector<std::int32_t>{0, 1, 2, 3, 1});
  if (kind == "mlp") {  // compiled and trained one step: the archive carries a compile_config
    model.compile({.optimizer = K::optimizers::Adam(0.003, {.beta_1 = 0.85}),
                   .loss = "sparse_categorical_crossentropy",
                   .metrics = {"accuracy"}});
    model.train_on_batch(x, labels);
  }
  if (kind == "mlp_lso") {  // loss scaling: 3 steps with growth every 2, so the scale doubled once
    model.compile({.optimizer = K::optimizers::LossScaleOptimizer(K::optimizers::Adam(0.01),
                                                                  {.initial_scale = 1024, .dynamic_growth_steps = 2}),
                   .loss = "sparse_categorical_crossentropy"});
    for (int i = 0; i < 3; ++i) model.train_on_batch(x, labels);
  }
  K::Tensor y = model.predict_on_batch(x);
  model.save((dir / "model.keras").string());
  write_f32(dir / "x.f32", x.to_vector());
  write_f32(dir / "y.f32", y.to_vector());
  if (kind == "encoding") write_f32(dir / "adapt.f32", adapt_values());
  std::ofstream(dir / "shapes.json") << "{\"x\": " << json_list({x.shape().begin(), x.shape().end()})
                                     << ", \"y\": " << json_list({y.shape().begin(), y.shape().end()}) << "}\n";
  return 0;
}

// Prints the model's config, plus how load_model compiled it (from the archive's compile_config).
void print_config(K::Model& model) {
  auto config = nlohmann::ordered_json::parse(model.to_json());
  if (model.compiled())
    config["kerascpp_compiled"] = {{"optimizer", model.optimizer().class_name()},
                                   {"learning_rate", model.optimizer().learning_rate()},
                                   {"metrics_names", model.metrics_names()}};
  std::printf("%s\n", config.dump().c_str());
}

int load(const std::string& path, const fs::path& x_path, const fs::path& out, const K::Shape& shape) {
  K::Model model = K::load_model(path);
  K::Tensor x = K::Tensor::from_vector(shape, read_f32(x_path));
  write_f32(out, model.predict_on_batch(x).to_vector());
  print_config(model);
  return 0;
}

int load_ids(char** argv, int argc) {
  examples::transformer::register_transformer_layers();
  K::Model model = K::load_model(argv[2]);
  const std::int64_t rows = std::stoll(argv[4]), cols = std::stoll(argv[5]);
  std::vector<K::Tensor> ids;
  for (int i = 6; i < argc; ++i) ids.push_back(read_i32(argv[i], rows, cols));
  write_f32(argv[3], model.predict_on_batch(ids).to_vector());
  print_config(model);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (!((command == "save" && argc == 4) || (command == "load" && argc >= 6) || (command == "load_ids" && argc >= 7))) {
    std::fprintf(
        stderr,
        "usage: keras_archive_interop save <kind> <dir> | load <model.keras> <x.f32> <out.f32> <d0> <d1> ... | "
        "load_ids <model.keras> <out.f32> <rows> <cols> <ids.i32> ...\n");
    return 2;
  }
  try {
    if (command == "save") return save(argv[2], argv[3]);
    if (command == "load_ids") return load_ids(argv, argc);
    K::Shape shape;
    for (int i = 5; i < argc; ++i) shape.push_back(std::stoll(argv[i]));
    return load(argv[2], argv[3], argv[4], shape);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
