// bn_reference: the kerascpp side of tests/python/test_bn_reference.py (small networks trained
// against a float64 Keras reference).
//   bn_reference <dir> <steps> <batch> <learning_rate> <threads> [model [dump]]
// builds `model` on Input(28, 28, 1) (Keras' automatic layer names):
//   bn        Conv2D(8, 3) → BatchNormalization → ReLU → Flatten → Dense(10, softmax), SGD (default)
//   cnn_bn    [Conv2D(8|16, 3) → BatchNormalization → ReLU → MaxPooling2D] x 2 → Flatten → Dense, SGD
//   cnn_adam  [Conv2D(8|16, 3, relu) → MaxPooling2D] x 2 → Flatten → Dense, Adam
// loads <dir>/init.weights.h5 (written by Keras), trains `steps` steps of `batch` examples in
// order from <dir>/x.f32 (float32 images) and <dir>/y.i32 (int32 labels), on one CPU replica
// with `threads` threads, and writes <dir>/final_t<threads>.weights.h5. Errors: stderr, exit
// status 1.
// With `dump`, also writes <dir>/dump/step_<s>.f32 for every step s: each trainable variable's
// value before the step, then the gradient the step applied, in trainable_variables() order
// (names in <dir>/dump/variables.txt), for comparing each step's gradients with a float64
// computation from the same weights.
#include <kerascpp/kerascpp.hpp>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace K = kerascpp;
namespace fs = std::filesystem;

namespace {

static_assert(std::endian::native == std::endian::little, "the .f32/.i32 files are little-endian");

constexpr std::int64_t kSide = 28;

K::Model build_model(const std::string& model) {
  auto inputs = K::Input({kSide, kSide, 1});
  K::KerasTensor x = inputs;
  if (model == "bn") {
    x = K::layers::Conv2D(8, 3)(x);
    x = K::layers::BatchNormalization()(x);
    x = K::layers::Activation("relu")(x);
  } else if (model == "cnn_bn" || model == "cnn_adam") {
    for (std::int64_t filters : {8, 16}) {
      if (model == "cnn_bn") {
        x = K::layers::Conv2D(filters, 3)(x);
        x = K::layers::BatchNormalization()(x);
        x = K::layers::Activation("relu")(x);
      } else {
        x = K::layers::Conv2D(filters, 3, {.activation = "relu"})(x);
      }
      x = K::layers::MaxPooling2D(2)(x);
    }
  } else {
    throw K::ValueError("model must be bn, cnn_bn or cnn_adam, got '" + model + "'");
  }
  x = K::layers::Flatten()(x);
  auto outputs = K::layers::Dense(10, {.activation = "softmax"})(x);
  return K::Model(inputs, outputs);
}

// The raw little-endian values of `path`, `count` of them exactly.
template <class T>
std::vector<T> read_raw(const fs::path& path, std::int64_t count) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw K::IOError("cannot read '" + path.string() + "'");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() != static_cast<std::size_t>(count) * sizeof(T))
    throw K::ValueError("'" + path.string() + "' holds " + std::to_string(bytes.size()) + " bytes, expected " +
                        std::to_string(count * static_cast<std::int64_t>(sizeof(T))) + " (steps x batch values)");
  std::vector<T> values(static_cast<std::size_t>(count));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

std::int64_t positive(const char* arg, const char* what) {
  char* end = nullptr;
  long long v = std::strtoll(arg, &end, 10);
  if (*end != '\0' || v <= 0) throw K::ValueError(std::string(what) + " must be a positive integer, got '" + arg + "'");
  return v;
}

void append(std::ofstream& out, const K::Tensor& t) {
  const std::vector<float> values = t.to_vector();
  out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
}

int run(const fs::path& dir, std::int64_t steps, std::int64_t batch, double learning_rate, int threads,
        const std::string& name, bool dump) {
  K::set_random_seed(1);
  K::Model model = build_model(name);
  K::optimizers::OptimizerRef optimizer = K::optimizers::SGD(learning_rate);
  if (name == "cnn_adam") optimizer = K::optimizers::Adam(learning_rate);
  model.compile({.optimizer = optimizer,
                 .loss = K::losses::SparseCategoricalCrossentropy(),
                 .distribute = K::distribute::OneDeviceStrategy("cpu:0", {.threads_per_replica = threads})});
  model.load_weights((dir / "init.weights.h5").string());
  const std::int64_t pixels = kSide * kSide;
  std::vector<float> images = read_raw<float>(dir / "x.f32", steps * batch * pixels);
  std::vector<std::int32_t> labels = read_raw<std::int32_t>(dir / "y.i32", steps * batch);
  const std::vector<K::Variable*> variables = model.trainable_variables();
  if (dump) {
    fs::create_directories(dir / "dump");
    std::ofstream names(dir / "dump" / "variables.txt");
    for (const K::Variable* v : variables) names << v->path() << '\n';
  }
  for (std::int64_t s = 0; s < steps; ++s) {
    std::vector<K::Tensor> before;
    if (dump)
      for (K::Variable* v : variables) before.push_back(v->value().clone());
    std::vector<float> xs(images.begin() + s * batch * pixels, images.begin() + (s + 1) * batch * pixels);
    std::vector<std::int32_t> ys(labels.begin() + s * batch, labels.begin() + (s + 1) * batch);
    model.train_on_batch(K::Tensor::from_vector({batch, kSide, kSide, 1}, xs), K::Tensor::from_vector({batch}, ys));
    if (!dump) continue;
    // The gradient buffers keep the step's gradients until the next step resets them.
    std::ofstream out(dir / "dump" / ("step_" + std::to_string(s) + ".f32"), std::ios::binary);
    for (const K::Tensor& t : before) append(out, t);
    for (K::Variable* v : variables) append(out, v->grad(0));
    if (!out) throw K::IOError("cannot write the dump of step " + std::to_string(s) + " under '" + dir.string() + "'");
  }
  model.save_weights((dir / ("final_t" + std::to_string(threads) + ".weights.h5")).string());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6 || argc > 8 || (argc == 8 && std::strcmp(argv[7], "dump") != 0)) {
    std::fprintf(stderr,
                 "usage: bn_reference <dir> <steps> <batch> <learning_rate> <threads> [bn|cnn_bn|cnn_adam [dump]]\n");
    return 2;
  }
  try {
    char* end = nullptr;
    double lr = std::strtod(argv[4], &end);
    if (*end != '\0' || !(lr > 0)) throw K::ValueError(std::string("learning_rate must be > 0, got '") + argv[4] + "'");
    return run(argv[1], positive(argv[2], "steps"), positive(argv[3], "batch"), lr,
               static_cast<int>(positive(argv[5], "threads")), argc >= 7 ? argv[6] : "bn", argc == 8);
  } catch (const K::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
