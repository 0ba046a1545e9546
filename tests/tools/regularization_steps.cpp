// regularization_steps: drives tests/python/test_regularization.py, which checks weight
// regularizers (L1, L2, L1L2 on kernels and biases), the MaxNorm constraint and the regularized
// loss against Python Keras 3 (evaluate, model.losses) and against a NumPy reference of 20 SGD steps;
// with an optimizer named, it drives tests/python/test_clipping_and_schedules.py (the same model
// and steps under gradient clipping or a learning-rate schedule, against Keras' optimizers).
//   regularization_steps <dir> <replicas> [OPTIMIZER PARAMS...]
// OPTIMIZER (default sgd):
//   sgd                                 SGD(0.1, momentum 0.9)
//   clipnorm C | global_clipnorm C      the same SGD with Keras' gradient clipping at C
//   adam_cosine INITIAL DECAY_STEPS ALPHA WARMUP_TARGET WARMUP_STEPS
//                                       Adam (Keras' defaults) under CosineDecay with warmup
//   adam_transformer INITIAL HIDDEN_SIZE WARMUP_STEPS
//                                       Adam (Keras' defaults) under TransformerSchedule
// builds Input(6) -> Dense(8, tanh, L1L2 kernel, L2 bias, MaxNorm kernel) -> Dense(3, softmax,
// L2 kernel, L1 bias) with fixed weights, and writes to <dir>:
//   model.json, initial.weights.h5   the model before training (Model::to_json, save_weights)
//   x.f32 [16, 6], y.f32 [16]        the batch (labels as floats)
//   w<i>_initial.f32, w<i>_final.f32 every weight (get_weights order) before and after training
//   result.json                      {"shapes", "eval_loss" (before training), "train_losses"
//                                    (the 20 losses train_on_batch reported), "eval_loss_after"}
// Training: 20 x train_on_batch on the whole batch with OPTIMIZER, sparse categorical crossentropy;
// with replicas > 1 under MirroredStrategy with that many CPU replicas.
#include <kerascpp/kerascpp.hpp>

#include "tool_io.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace K = kerascpp;
namespace fs = std::filesystem;

namespace {

using namespace tool_io;

constexpr std::int64_t kExamples = 16;
constexpr int kSteps = 20;

K::Model build() {
  namespace R = K::regularizers;
  auto in = K::Input({6});
  auto x = K::layers::Dense(8, {.activation = "tanh",
                                .kernel_regularizer = R::L1L2(0.01f, 0.02f),
                                .bias_regularizer = R::L2(0.05f),
                                .kernel_constraint = K::constraints::MaxNorm(0.9f)})(in);
  auto out = K::layers::Dense(
      3, {.activation = "softmax", .kernel_regularizer = R::L2(0.03f), .bias_regularizer = R::L1(0.01f)})(x);
  return K::Model(in, out);
}

// The optimizer named by args[0] with its parameters args[1..] (see the usage above).
K::optimizers::OptimizerRef make_optimizer(const std::vector<std::string>& args) {
  namespace O = K::optimizers;
  const std::string kind = args.empty() ? "sgd" : args[0];
  auto num = [&](std::size_t i) {
    if (i >= args.size()) throw K::Error("optimizer '" + kind + "' needs more parameters");
    return std::atof(args[i].c_str());
  };
  auto steps = [&](std::size_t i) { return static_cast<std::int64_t>(num(i)); };
  if (kind == "adam_cosine")
    return O::Adam(O::schedules::CosineDecay(num(1), steps(2),
                                             {.alpha = num(3), .warmup_target = num(4), .warmup_steps = steps(5)}));
  if (kind == "adam_transformer") return O::Adam(O::schedules::TransformerSchedule(num(1), steps(2), steps(3)));
  O::SGD sgd(0.1, {.momentum = 0.9});
  if (kind == "clipnorm") sgd.set_gradient_clipping({.clipnorm = num(1)});
  else if (kind == "global_clipnorm") sgd.set_gradient_clipping({.global_clipnorm = num(1)});
  else if (kind != "sgd") throw K::Error("unknown optimizer '" + kind + "'");
  return sgd;
}

int run(const fs::path& dir, int replicas, const std::vector<std::string>& optimizer_args) {
  K::set_random_seed(1);
  K::Model model = build();
  std::vector<K::Tensor> weights = model.get_weights();
  std::uint32_t seed = 70;
  for (auto& w : weights)
    w = K::Tensor::from_vector(w.shape(), uniform(static_cast<std::size_t>(w.numel()), seed++, -0.9f, 1.1f));
  model.set_weights(weights);
  fs::create_directories(dir);
  model.save_weights((dir / "initial.weights.h5").string());
  std::ofstream(dir / "model.json", std::ios::trunc) << model.to_json() << "\n";
  write_weights(dir, weights, "_initial");

  K::Tensor x = K::Tensor::from_vector({kExamples, 6}, uniform(kExamples * 6, 12345, -2.f, 2.f));
  std::vector<std::int32_t> labels(kExamples);
  std::mt19937 gen(777);
  for (auto& l : labels) l = static_cast<std::int32_t>(gen() % 3);
  K::Tensor y = K::Tensor::from_vector({kExamples}, labels);
  write_f32(dir / "x.f32", x.to_vector());
  write_f32(dir / "y.f32", std::vector<float>(labels.begin(), labels.end()));

  K::CompileOptions options{.optimizer = make_optimizer(optimizer_args), .loss = "sparse_categorical_crossentropy"};
  if (replicas > 1) options.distribute = K::distribute::MirroredStrategy<>(replicas);
  model.compile(options);
  const double eval_loss = model.test_on_batch(x, y).at("loss");
  std::vector<double> train_losses;
  for (int step = 0; step < kSteps; ++step) train_losses.push_back(model.train_on_batch(x, y).at("loss"));
  const double eval_after = model.test_on_batch(x, y).at("loss");
  write_weights(dir, model.get_weights(), "_final");

  std::ofstream json(dir / "result.json", std::ios::trunc);
  json << "{\"shapes\": [";
  for (std::size_t i = 0; i < weights.size(); ++i) {
    json << (i ? ", " : "") << "[";
    for (std::size_t d = 0; d < weights[i].shape().size(); ++d) json << (d ? ", " : "") << weights[i].shape()[d];
    json << "]";
  }
  json << "], \"eval_loss\": " << g17(eval_loss) << ", \"train_losses\": " << json_list(train_losses)
       << ", \"eval_loss_after\": " << g17(eval_after) << "}\n";
  if (!json) throw K::Error("cannot write result.json");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: regularization_steps <dir> <replicas> [OPTIMIZER PARAMS...]\n");
    return 2;
  }
  try {
    return run(argv[1], std::stoi(argv[2]), std::vector<std::string>(argv + 3, argv + argc));
  } catch (const K::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
