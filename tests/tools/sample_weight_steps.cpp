// sample_weight_steps: drives tests/python/test_sample_weights.py, which checks per-example
// weights and class_weight against Python Keras 3 (evaluate with sample_weight, weighted_metrics)
// and against a NumPy reference of SGD steps.
//   sample_weight_steps <dir> <replicas>
// builds Input(6) -> Dense(8, tanh) -> Dense(3, softmax) with fixed weights, and writes to <dir>:
//   model.json, initial.weights.h5         the model before training
//   x.f32 [16, 6], y.f32 [16], sw.f32 [16] the batch (labels as floats) and its weights
//   w<i>_initial.f32, w<i>_final.f32       every weight before and after the 20 weighted steps
//   w<i>_cw.f32                            every weight after the class_weight run
//   result.json  {"shapes", "eval" (evaluate of (x, y, sw) in batches of 5 before training:
//                loss, accuracy, weighted_accuracy), "train_losses" (20 train_on_batch(x, y, sw)),
//                "cw_losses" (5 epochs of fit(class_weight) on the whole batch)}
// Training: SGD(0.1, momentum 0.9), sparse categorical crossentropy, metrics "accuracy" and
// weighted_metrics "accuracy"; with replicas > 1 under MirroredStrategy with that many CPU replicas.
#include <kerascpp/kerascpp.hpp>

#include "tool_io.hpp"

#include <cstdint>
#include <cstdio>
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
constexpr int kClassWeightEpochs = 5;

K::Model build(const std::vector<K::Tensor>* weights, int replicas) {
  K::set_random_seed(1);
  auto in = K::Input({6});
  auto x = K::layers::Dense(8, {.activation = "tanh"})(in);
  K::Model model(in, K::layers::Dense(3, {.activation = "softmax"})(x));
  if (weights) model.set_weights(*weights);
  K::CompileOptions options{.optimizer = K::optimizers::SGD(0.1, {.momentum = 0.9}),
                            .loss = "sparse_categorical_crossentropy",
                            .metrics = {"accuracy"},
                            .weighted_metrics = {"accuracy"}};
  if (replicas > 1) options.distribute = K::distribute::MirroredStrategy<>(replicas);
  model.compile(options);
  return model;
}

int run(const fs::path& dir, int replicas) {
  K::Model model = build(nullptr, replicas);
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
  std::vector<float> sw = uniform(kExamples, 4242, 0.f, 3.f);
  sw[3] = 0.f;  // a zero weight: the example drops out of the loss but still counts in N
  K::Tensor w = K::Tensor::from_vector({kExamples}, sw);
  write_f32(dir / "x.f32", x.to_vector());
  write_f32(dir / "y.f32", std::vector<float>(labels.begin(), labels.end()));
  write_f32(dir / "sw.f32", sw);

  K::Logs eval = model.evaluate(K::Dataset::from_tensor_slices({x, y, w}).batch(5), {.verbose = 0});
  std::vector<double> train_losses;
  for (int step = 0; step < kSteps; ++step) train_losses.push_back(model.train_on_batch(x, y, w).at("loss"));
  write_weights(dir, model.get_weights(), "_final");

  K::Model cw_model = build(&weights, replicas);
  auto history = cw_model.fit(K::Dataset::from_tensor_slices(x, y).batch(kExamples),
                              {.epochs = kClassWeightEpochs, .class_weight = {{0, 0.5}, {2, 2.5}}, .verbose = 0});
  write_weights(dir, cw_model.get_weights(), "_cw");

  std::ofstream json(dir / "result.json", std::ios::trunc);
  json << "{\"shapes\": [";
  for (std::size_t i = 0; i < weights.size(); ++i) {
    json << (i ? ", " : "") << "[";
    for (std::size_t d = 0; d < weights[i].shape().size(); ++d) json << (d ? ", " : "") << weights[i].shape()[d];
    json << "]";
  }
  json << "], \"eval\": {\"loss\": " << g17(eval.at("loss")) << ", \"accuracy\": " << g17(eval.at("accuracy"))
       << ", \"weighted_accuracy\": " << g17(eval.at("weighted_accuracy"))
       << "}, \"train_losses\": " << json_list(train_losses)
       << ", \"cw_losses\": " << json_list(history.history.at("loss")) << "}\n";
  if (!json) throw K::Error("cannot write result.json");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: sample_weight_steps <dir> <replicas>\n");
    return 2;
  }
  try {
    return run(argv[1], std::stoi(argv[2]));
  } catch (const K::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
