// Trains an MLP or a small CNN on Fashion-MNIST with the official models' flags, under
// MirroredStrategy (GPUs, or CPU replicas on a machine without GPUs).
#include <CLI/CLI.hpp>
#include <kerascpp/kerascpp.hpp>

#include "fashion_mnist_models.hpp"
#include "flag_checks.hpp"
#include "precision_flags.hpp"
#include "strategy_flags.hpp"

#include <cstdio>
#include <filesystem>

namespace K = kerascpp;

namespace {

// --max_train_steps counts optimizer steps over the whole run, like the official models.
class StopAfterSteps : public K::callbacks::Callback {
 public:
  explicit StopAfterSteps(std::int64_t steps) : steps_(steps) {}
  void on_train_batch_end(std::int64_t, const K::Logs&) override {
    if (steps_ > 0 && model().optimizer().iterations() >= steps_) model().stop_training = true;
  }

 private:
  std::int64_t steps_;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Fashion-MNIST with kerascpp"};
  examples::last_flag_wins(app);
  std::string data_dir, model_dir = "/tmp/fashion_mnist_model", model_kind = "cnn", load_weights;
  int train_epochs = 5;
  examples::StrategyFlags devices{.num_gpus = 0};
  std::int64_t batch_size = 64, max_train_steps = -1;
  double learning_rate = 1e-3;
  std::uint64_t seed = 42;
  bool synthetic = false, shuffle = true;
  app.add_option("--data_dir", data_dir, "Fashion-MNIST IDX directory (default: $KERASCPP_DATA or the Debian package)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--model_dir", model_dir, "Where checkpoints, TensorBoard logs and final weights go")
      ->check(examples::kWritableDirectory);
  app.add_option("--model", model_kind, "mlp, cnn (the official models' MNIST CNN) or small_cnn")
      ->check(CLI::IsMember({"mlp", "cnn", "small_cnn"}));
  app.add_option("--train_epochs", train_epochs, "Epochs to train")->check(examples::kPositiveInteger);
  app.add_option("--batch_size", batch_size, "Global batch size (split across replicas)")
      ->check(examples::kPositiveInteger);
  app.add_option("--learning_rate", learning_rate, "Adam learning rate")->check(examples::kFinitePositive);
  app.add_option("--seed", seed, "Random seed (weights, shuffling, dropout)");
  app.add_flag("--use_synthetic_data", synthetic, "Train on constant synthetic data (no dataset needed)");
  app.add_option("--max_train_steps", max_train_steps, "Stop after this many training steps in total (-1: no limit)")
      ->check(examples::kPositiveOrMinusOne);
  app.add_option("--load_weights", load_weights, "Start from these .weights.h5")->check(CLI::ExistingFile);
  app.add_option("--shuffle", shuffle, "Shuffle the training data each epoch (true/false)");
  examples::add_strategy_flags(app, devices);
  examples::PrecisionFlags precision;
  examples::add_precision_flags(app, precision);
  CLI11_PARSE(app, argc, argv);

  try {
    K::set_random_seed(seed);
    K::Dataset train, test;
    if (synthetic) {
      train = K::Dataset::synthetic({28, 28, 1}, {}, 60000);
      test = K::Dataset::synthetic({28, 28, 1}, {}, 10000);
    } else {
      try {
        auto data = K::datasets::fashion_mnist::load(data_dir);
        train = data.train;
        test = data.test;
      } catch (const K::IOError& e) {
        // Name the flag (or its default) that led here, then the loader's own words.
        throw K::IOError(std::string(data_dir.empty() ? "--data_dir (not given)" : "--data_dir") + ": " + e.what());
      }
    }
    if (shuffle) train = train.shuffle(60000, seed);
    K::Dataset train_batches = train.batch(batch_size).prefetch(2);
    K::Dataset test_batches = test.batch(1024);

    auto strategy = examples::make_strategy(devices);
    std::printf("Strategy: %s\n", strategy.describe().c_str());
    if (!strategy.is_chief()) K::set_default_verbose(0);  // one progress bar per job: the chief's
    examples::apply_dtype_policy(precision);
    K::Model model = examples::fashion_mnist_model(model_kind);
    if (strategy.is_chief()) model.summary();
    model.compile({.optimizer = examples::with_loss_scale(precision, K::optimizers::Adam(learning_rate)),
                   .loss = K::losses::SparseCategoricalCrossentropy(),
                   .metrics = {"accuracy"},
                   .distribute = strategy});
    if (!load_weights.empty()) {
      try {
        model.load_weights(load_weights);
      } catch (const K::Error& e) {
        std::fprintf(stderr, "error: --load_weights: %s\n", e.what());
        return 1;
      }
    }
    namespace fs = std::filesystem;
    fs::path dir(model_dir);
    // Re-running after a crash resumes from the last backup (bit-identical on CPU).
    model.fit(train_batches,
              {.epochs = train_epochs,
               .validation_data = test_batches,
               .callbacks = {K::callbacks::BackupAndRestore((dir / "backup").string(), {.save_freq = 100}),
                             K::callbacks::ModelCheckpoint((dir / "ckpt" / "e{epoch:02d}.weights.h5").string()),
                             K::callbacks::TensorBoard((dir / "logs").string(), {.histogram_freq = 1}),
                             StopAfterSteps(max_train_steps)}});
    K::Logs result = model.evaluate(test_batches, {.verbose = 0});
    std::printf("Final evaluation: test_loss: %.4f - test_accuracy: %.4f\n", result["loss"], result["accuracy"]);
    if (strategy.is_chief()) {  // in a multi-worker job the chief alone writes under --model_dir
      model.save_weights((dir / "final.weights.h5").string());
      std::printf("Saved %s\n", (dir / "final.weights.h5").c_str());
    }
  } catch (const K::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
