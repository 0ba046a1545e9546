// The official Transformer (transformer_model.hpp) on a synthetic sequence-to-sequence task the
// example generates: "reverse" (the target is the source backwards) or "copy". It trains with the
// official schedule (learning_rate · hidden^-0.5 · min(step/warmup, 1) · max(step, warmup)^-0.5
// under Adam(0.9, 0.997, 1e-9)) and label smoothing, under the strategy flags every example
// takes, and reports the loss and token accuracy (teacher forcing) on held-out sequences.
//
//   build/transformer --param_set tiny --task reverse --train_steps 200 --train_epochs 5 --cpu_replicas 2
#include <CLI/CLI.hpp>
#include <kerascpp/kerascpp.hpp>

#include "flag_checks.hpp"
#include "precision_flags.hpp"
#include "strategy_flags.hpp"
#include "transformer_model.hpp"
#include "transformer_task.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace K = kerascpp;
namespace T = examples::transformer;

int main(int argc, char** argv) {
  CLI::App app{"The official Transformer with kerascpp on a synthetic sequence-to-sequence task"};
  examples::last_flag_wins(app);
  std::string param_set = "tiny", task = "reverse", model_dir;
  examples::StrategyFlags devices;
  std::int64_t batch_size = 64, train_steps = 200, length = 10, vocab = 18, num_layers = 0, warmup = 0;
  std::int64_t train_examples = 20000, eval_examples = 1000;
  int train_epochs = 5;
  double learning_rate = 0;
  std::uint64_t seed = 1;
  app.add_option("--param_set", param_set, "tiny (hidden 32, 4 heads, filter 256) or base (512, 8, 2048)")
      ->check(CLI::IsMember({"tiny", "base"}));
  app.add_option("--task", task, "reverse or copy (default reverse)")->check(CLI::IsMember({"reverse", "copy"}));
  app.add_option("--batch_size", batch_size, "Global batch size in sequences (default 64)")
      ->check(examples::kPositiveInteger);
  app.add_option("--train_steps", train_steps, "Steps per epoch (default 200)")->check(examples::kPositiveInteger);
  app.add_option("--train_epochs", train_epochs, "Epochs (default 5)")->check(examples::kPositiveInteger);
  app.add_option("--sequence_length", length, "Tokens per sequence (default 10)")->check(examples::kPositiveInteger);
  app.add_option("--vocab_size", vocab, "Vocabulary incl. padding and start ids (default 18)")
      ->check(CLI::Range(3, 1 << 20));
  app.add_option("--num_hidden_layers", num_layers, "Encoder and decoder layers (default: the param set's, 6)")
      ->check(examples::kPositiveInteger);
  app.add_option("--learning_rate", learning_rate, "The schedule's factor (default: the official 2.0)")
      ->check(examples::kFinitePositive);
  app.add_option("--warmup_steps", warmup,
                 "Warm-up steps of the schedule (default: the official 16000 for base, 200 for tiny on this task)")
      ->check(examples::kPositiveInteger);
  app.add_option("--train_examples", train_examples, "Distinct training sequences (default 20000)")
      ->check(examples::kPositiveInteger);
  app.add_option("--seed", seed, "Random seed (weights, data)");
  app.add_option("--model_dir", model_dir, "If set, checkpoints (ckpt/) and TensorBoard logs (logs/) go here")
      ->check(examples::kWritableDirectory);
  examples::add_strategy_flags(app, devices);
  examples::PrecisionFlags precision;
  examples::add_precision_flags(app, precision);
  CLI11_PARSE(app, argc, argv);

  try {
    T::Params p = param_set == "base" ? T::base_params() : T::tiny_params();
    p.vocab_size = vocab;
    if (num_layers > 0) p.num_hidden_layers = num_layers;
    if (learning_rate > 0) p.learning_rate = learning_rate;
    // The official 16000 warm-up steps are for days of WMT training; the tiny task takes minutes.
    p.learning_rate_warmup_steps = warmup > 0 ? warmup : (param_set == "base" ? 16000 : 200);
    K::set_random_seed(seed);
    auto strategy = examples::make_strategy(devices);
    std::printf("Strategy: %s\n", strategy.describe().c_str());
    examples::apply_dtype_policy(precision);
    T::Built built = T::build_transformer(p, length, seed);
    K::Model& model = built.model;
    std::printf("Transformer (%s): %lld layers, hidden %lld, %lld heads, filter %lld, vocab %lld, %lld parameters\n",
                param_set.c_str(), static_cast<long long>(p.num_hidden_layers), static_cast<long long>(p.hidden_size),
                static_cast<long long>(p.num_heads), static_cast<long long>(p.filter_size),
                static_cast<long long>(p.vocab_size), static_cast<long long>(model.count_params()));
    model.compile(
        {.optimizer = examples::with_loss_scale(
             precision,
             K::optimizers::Adam(K::optimizers::schedules::TransformerSchedule(p.learning_rate, p.hidden_size,
                                                                               p.learning_rate_warmup_steps),
                                 {.beta_1 = p.adam_beta1, .beta_2 = p.adam_beta2, .epsilon = p.adam_epsilon})),
         .loss = K::losses::CategoricalCrossentropy({.from_logits = true, .label_smoothing = p.label_smoothing}),
         .metrics = {"accuracy"},
         .distribute = strategy});

    auto train = K::Dataset::from_tensor_slices(T::make_task(task, train_examples, length, vocab, seed + 1))
                     .shuffle(train_examples, seed)
                     .batch(batch_size, true)
                     .repeat();
    auto held_out =
        K::Dataset::from_tensor_slices(T::make_task(task, eval_examples, length, vocab, seed + 2)).batch(batch_size);
    std::vector<K::callbacks::CallbackRef> callbacks;
    if (!model_dir.empty()) {
      namespace fs = std::filesystem;
      callbacks.push_back(
          K::callbacks::ModelCheckpoint((fs::path(model_dir) / "ckpt" / "e{epoch:02d}.weights.h5").string()));
      callbacks.push_back(K::callbacks::TensorBoard((fs::path(model_dir) / "logs").string()));
    }
    const auto start = std::chrono::steady_clock::now();
    model.fit(train, {.epochs = train_epochs, .steps_per_epoch = train_steps, .callbacks = callbacks, .verbose = 2});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double tokens = static_cast<double>(train_steps * train_epochs * batch_size * length);
    K::Logs logs = model.evaluate(held_out, {.verbose = 0});
    std::printf("Trained %lld steps in %.1f s (%.0f target tokens/s)\n",
                static_cast<long long>(train_steps * train_epochs), seconds, tokens / seconds);
    std::printf("Held-out: loss %.4f, token accuracy %.4f\n", logs.at("loss"), logs.at("accuracy"));
    return 0;
  } catch (const K::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
