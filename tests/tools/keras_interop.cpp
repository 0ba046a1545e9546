// keras_interop: drives tests/python/test_keras_interop.py (kerascpp <-> Python Keras weights).
//   keras_interop save <mlp|cnn> <dir>
//       builds the model (set_random_seed(1)), trains it a few steps on random data with Adam (so
//       weights and BatchNormalization statistics are non-trivial), writes <dir>/model.weights.h5,
//       a fixed input batch <dir>/x.f32, kerascpp's prediction for it <dir>/y.f32 (raw float32,
//       little-endian, row-major) and the shapes in <dir>/shapes.json.
//   keras_interop load <mlp|cnn> <dir>
//       builds the same architecture, loads <dir>/model.weights.h5 (e.g. written by Keras), reads
//       <dir>/x.f32 (shape from <dir>/shapes.json, or 5 examples), predicts, writes <dir>/y_cpp.f32.
//   keras_interop config <mlp|cnn|quoted|sequential> <dir>
//       writes the model's Model::to_json() to <dir>/model.json (set_random_seed(1), as save does,
//       so the layer names match). `quoted`: layer names with quotes and backslashes, a shared
//       layer, Add and Concatenate branches; `sequential`: a Sequential model.
// The Python side builds the equivalent Keras functional model with the same layers in the same
// order, so Keras' automatic layer names match kerascpp's. Errors: stderr, exit status 1.
#include <kerascpp/kerascpp.hpp>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace K = kerascpp;
namespace fs = std::filesystem;

namespace {

static_assert(std::endian::native == std::endian::little, "the .f32 files are little-endian");

constexpr std::int64_t kExamples = 5;

K::Model build_model(const std::string& kind) {
  auto inputs = K::Input({28, 28, 1});
  K::KerasTensor x = inputs;
  if (kind == "mlp") {
    x = K::layers::Flatten()(x);
    x = K::layers::Dense(32, {.activation = "relu"})(x);
  } else if (kind == "cnn") {
    x = K::layers::Conv2D(8, 3, {.activation = "relu"})(x);
    x = K::layers::MaxPooling2D(2)(x);
    x = K::layers::Conv2D(16, 3, {.strides = {2, 2}, .padding = K::Padding::same, .activation = "relu"})(x);
    x = K::layers::BatchNormalization()(x);
    x = K::layers::Flatten()(x);
  } else {
    throw K::Error("model must be mlp or cnn, got '" + kind + "'");
  }
  auto outputs = K::layers::Dense(10, {.activation = "softmax"})(x);
  return K::Model(inputs, outputs);
}

// Names a JSON writer must escape, a layer called twice and layers called on lists of tensors.
K::Model build_quoted_model() {
  auto a = K::Input({6}, K::DType::float32, "in \"a\"");
  auto b = K::Input({6}, K::DType::float32, "in\\b");
  K::LayerRef shared = K::layers::Dense(4, {.activation = "tanh", .name = "shared \"dense\""});
  auto sum = K::layers::Add({.name = "sum\\"})({shared(a), shared(b)});
  auto both = K::layers::Concatenate(-1, {.name = "cat \"\\ \""})({sum, K::layers::Dropout(0.25f)(a)});
  auto head = K::layers::Dense(3, {.activation = "softmax", .name = "my \"head\"\\1"})(both);
  return K::Model({a, b}, {head}, "model \"quoted\"");
}

K::Model build_sequential_model() {
  return K::Sequential({K::layers::InputLayer({8, 8, 1}, {.name = "pixels"}),
                        K::layers::Conv2D(4, {3, 5}, {.strides = {2, 1}, .padding = K::Padding::same}),
                        K::layers::AveragePooling2D(2, {.strides = 1}), K::layers::Flatten(),
                        K::layers::Dense(2, {.name = "seq \"out\""})},
                       "sequential \"model\"");
}

// The CNN under mixed_bfloat16 with a float32 head: every layer's dtype policy in the config.
K::Model build_mixed_model() {
  K::mixed_precision::set_global_policy("mixed_bfloat16");
  auto inputs = K::Input({8, 8, 1});
  auto x = K::layers::Flatten()(K::layers::Conv2D(4, 3, {.activation = "relu"})(inputs));
  auto outputs = K::layers::Dense(3, {.activation = "softmax", .dtype = "float32"})(x);
  K::mixed_precision::set_global_policy("float32");
  return K::Model(inputs, outputs);
}

int config(const std::string& kind, const fs::path& dir) {
  K::set_random_seed(1);
  K::Model model = kind == "quoted"       ? build_quoted_model()
                   : kind == "sequential" ? build_sequential_model()
                   : kind == "mixed"      ? build_mixed_model()
                                          : build_model(kind);
  fs::create_directories(dir);
  std::ofstream json(dir / "model.json", std::ios::trunc);
  json << model.to_json() << "\n";
  if (!json) throw K::Error("cannot write model.json");
  return 0;
}

void compile(K::Model& model) {
  model.compile({.optimizer = K::optimizers::Adam(1e-2), .loss = K::losses::SparseCategoricalCrossentropy()});
}

// Pseudo-random images in [0, 1): the same for a given seed on every platform (mt19937 is exact).
std::vector<float> random_images(std::int64_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<float> values(static_cast<std::size_t>(n * 28 * 28));
  for (auto& v : values) v = static_cast<float>(gen() >> 8) / 16777216.0f;
  return values;
}

void write_f32(const fs::path& path, const K::Tensor& t) {
  std::vector<float> values = t.to_vector();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
  if (!out) throw K::Error("cannot write '" + path.string() + "'");
}

std::vector<float> read_f32(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw K::Error("cannot read '" + path.string() + "'");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() % sizeof(float)) throw K::Error("'" + path.string() + "' is not a whole number of float32");
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

std::string shape_json(const K::Shape& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

K::Tensor predict(K::Model& model, const K::Tensor& x) {
  return model.predict(K::Dataset::from_tensor_slices(x).batch(kExamples), {.verbose = 0});
}

int save(const std::string& kind, const fs::path& dir) {
  K::set_random_seed(1);
  K::Model model = build_model(kind);
  compile(model);
  // A few Adam steps on random data with random labels: every variable moves away from its
  // initializer and BatchNormalization's moving statistics leave (0, 1).
  constexpr std::int64_t kBatch = 16;
  std::mt19937 labels_gen(7);
  for (int step = 0; step < 5; ++step) {
    K::Tensor x = K::Tensor::from_vector({kBatch, 28, 28, 1}, random_images(kBatch, 100 + step));
    std::vector<std::int32_t> labels(kBatch);
    for (auto& l : labels) l = static_cast<std::int32_t>(labels_gen() % 10);
    model.train_on_batch(x, K::Tensor::from_vector({kBatch}, labels));
  }
  fs::create_directories(dir);
  model.save_weights((dir / "model.weights.h5").string());
  K::Tensor x = K::Tensor::from_vector({kExamples, 28, 28, 1}, random_images(kExamples, 12345));
  K::Tensor y = predict(model, x);
  write_f32(dir / "x.f32", x);
  write_f32(dir / "y.f32", y);
  std::ofstream json(dir / "shapes.json", std::ios::trunc);
  json << "{\"x\": " << shape_json(x.shape()) << ", \"y\": " << shape_json(y.shape()) << "}\n";
  if (!json) throw K::Error("cannot write shapes.json");
  return 0;
}

int load(const std::string& kind, const fs::path& dir) {
  K::set_random_seed(1);
  K::Model model = build_model(kind);
  compile(model);
  model.load_weights((dir / "model.weights.h5").string());
  std::vector<float> values = read_f32(dir / "x.f32");
  const std::int64_t per_example = 28 * 28;
  if (values.empty() || values.size() % per_example)
    throw K::Error("x.f32 holds " + std::to_string(values.size()) + " floats, not a whole number of 28x28x1 images");
  const auto n = static_cast<std::int64_t>(values.size()) / per_example;
  K::Tensor x = K::Tensor::from_vector({n, 28, 28, 1}, values);
  write_f32(dir / "y_cpp.f32", predict(model, x));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string command = argc == 4 ? argv[1] : "";
  if (command != "save" && command != "load" && command != "config") {
    std::fprintf(stderr,
                 "usage: keras_interop save|load mlp|cnn <dir>\n       keras_interop config "
                 "mlp|cnn|quoted|sequential <dir>\n");
    return 2;
  }
  try {
    if (command == "config") return config(argv[2], argv[3]);
    return command == "save" ? save(argv[2], argv[3]) : load(argv[2], argv[3]);
  } catch (const K::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
