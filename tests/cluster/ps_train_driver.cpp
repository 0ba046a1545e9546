// The ParameterServerStrategy test driver: trains a small recommender-shaped model (an Embedding
// under a Dense head, fixed seed, fixed data) either in one process (--single) or as one task of
// the TF_CONFIG cluster the environment describes, so that test_parameter_server.py can compare
// the chief's final weights with one process and kill tasks mid-training. The chief (and the single
// run) write the final weights to --weights (the test's file).
#include <CLI/CLI.hpp>
#include <kerascpp/distribute/parameter_server.hpp>
#include <kerascpp/kerascpp.hpp>

#include <cstdio>
#include <iostream>

namespace K = kerascpp;
namespace D = kerascpp::distribute;

namespace {

K::Model make_model() {
  K::set_random_seed(3);
  auto ids = K::Input({2}, K::DType::int32, "ids");
  auto x = K::layers::Flatten()(K::layers::Embedding(40, 4, {.name = "table"})(ids));
  x = K::layers::Dense(8, {.activation = "relu"})(x);
  return K::Model(ids, K::layers::Dense(1, {.activation = "sigmoid"})(x));
}

K::Dataset make_data(std::int64_t n, std::int64_t batch) {
  K::Rng rng(17);
  K::Tensor ids({n, 2}, K::DType::int32, K::Device{});
  K::Tensor y({n, 1}, K::DType::float32, K::Device{});
  for (std::int64_t i = 0; i < ids.numel(); ++i)
    ids.data<std::int32_t>()[i] = static_cast<std::int32_t>(rng.next_u64() % 40);
  for (std::int64_t i = 0; i < n; ++i) y.data<float>()[i] = static_cast<float>(rng.next_u64() % 2);
  return K::Dataset::from_tensor_slices(ids, y).batch(batch).repeat();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("ParameterServerStrategy test driver");
  std::string weights;
  bool single = false, omit_steps = false;
  int steps = 6, epochs = 2, shards = 0;
  app.add_option("--weights", weights, "where the chief writes the final weights")->required();
  app.add_flag("--single", single, "one process, no cluster");
  app.add_option("--steps_per_epoch", steps);
  app.add_option("--epochs", epochs);
  app.add_option("--shards", shards, "FixedShardsPartitioner(shards) when > 0");
  app.add_flag("--omit_steps_per_epoch", omit_steps, "call fit without steps_per_epoch (an error)");
  CLI11_PARSE(app, argc, argv);
  try {
    D::Strategy strategy = D::OneDeviceStrategy();
    if (!single) {
      D::VariablePartitioner partitioner;
      if (shards > 0) partitioner = D::FixedShardsPartitioner(shards);
      strategy = D::ParameterServerStrategy(D::TFConfigClusterResolver(), partitioner);  // a ps task never returns
    }
    K::Model model = make_model();
    model.compile({.optimizer = K::optimizers::Adam(0.05), .loss = "binary_crossentropy", .distribute = strategy});
    model.fit(make_data(24, 4), {.epochs = epochs, .steps_per_epoch = omit_steps ? -1 : steps, .verbose = 0});
    if (strategy.is_chief()) model.save_weights(weights);
    // A worker's own optimizer counts the steps it ran (the ps tasks apply the updates).
    std::cout << "done " << strategy.describe() << " steps " << model.optimizer().iterations() << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << std::endl;
    return 1;
  }
}
