// NCF (NeuMF) recommendation, the official TensorFlow models' Keras NCF
// (official/recommendation/ncf_keras_main.py), on synthetic implicit feedback in MovieLens-1M
// shapes: binary cross-entropy on logits with num_neg sampled negatives per positive, Adam, and
// the official leave-one-out HR@10 / NDCG@10 evaluation after every epoch, next to the
// popularity baseline's. Flag names are the official ones (ncf_common.py); the defaults are the
// official run.sh's (--batch_size 2048 --eval_batch_size 100000 --learning_rate 0.0005 --layers
// 256,256,128,64 --num_factors 64; Adam's betas and epsilon from ncf_common.py) but 2 epochs
// instead of its 20 on ml-20m, to stay a few minutes on a small CPU. (ncf_common.py's own
// defaults, batch 99000 and learning rate 0.001 for 2 epochs, make ~100 steps, too few to beat
// the popularity baseline on this data.) The strategy flags are the ones every example shares.
#include <CLI/CLI.hpp>
#include <kerascpp/kerascpp.hpp>

#include "flag_checks.hpp"
#include "ncf_data.hpp"
#include "ncf_model.hpp"
#include "precision_flags.hpp"
#include "strategy_flags.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>

namespace K = kerascpp;

namespace {

// --export_model: what tests/python/test_ncf_official.py compares with the official model.
int export_model(const K::Model& model, const examples::NcfParams& p, const std::string& dir) {
  namespace fs = std::filesystem;
  std::FILE* json = std::fopen((fs::path(dir) / "model.json").string().c_str(), "w");
  std::FILE* info = std::fopen((fs::path(dir) / "model_info.json").string().c_str(), "w");
  std::string layers;
  for (auto l : p.layers) layers += (layers.empty() ? "" : ", ") + std::to_string(l);
  bool ok = json && info && std::fputs(model.to_json().c_str(), json) >= 0 &&
            std::fprintf(info,
                         "{\"params\": %lld, \"num_users\": %lld, \"num_items\": %lld, \"mf_dim\": %lld, "
                         "\"layers\": [%s]}\n",
                         static_cast<long long>(model.count_params()), static_cast<long long>(p.num_users),
                         static_cast<long long>(p.num_items), static_cast<long long>(p.mf_dim), layers.c_str()) > 0;
  ok = (!json || std::fclose(json) == 0) && ok;
  ok = (!info || std::fclose(info) == 0) && ok;
  if (!ok) std::fprintf(stderr, "error: cannot write the model to '%s'\n", dir.c_str());
  return ok ? 0 : 1;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"NCF (NeuMF) with kerascpp on synthetic MovieLens-1M-shaped implicit feedback"};
  examples::last_flag_wins(app);
  examples::StrategyFlags devices{.num_gpus = 0};
  examples::NcfParams params;
  examples::ImplicitDataOptions data_options;
  int train_epochs = 2;
  std::int64_t batch_size = 2048, eval_batch_size = 100000, num_neg = 4;
  double learning_rate = 0.0005, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  std::uint64_t seed = 42;
  bool small = false;
  std::string export_dir, model_dir;
  app.add_option("--train_epochs", train_epochs, "Epochs to train (official run.sh: 20 on ml-20m)")
      ->check(examples::kPositiveInteger);
  app.add_option("--batch_size", batch_size, "Global training batch size (official run.sh: 2048)")
      ->check(examples::kPositiveInteger);
  app.add_option("--eval_batch_size", eval_batch_size, "Prediction batch size for the evaluation")
      ->check(examples::kPositiveInteger);
  app.add_option("--learning_rate", learning_rate, "Adam learning rate")->check(examples::kFinitePositive);
  app.add_option("--beta1", beta1, "Adam beta_1")->check(CLI::Range(0.0, 0.999999));
  app.add_option("--beta2", beta2, "Adam beta_2")->check(CLI::Range(0.0, 0.999999));
  app.add_option("--epsilon", epsilon, "Adam epsilon (official default 1e-8)")->check(examples::kFinitePositive);
  app.add_option("--num_factors", params.mf_dim, "Embedding size of the GMF (MF) part")
      ->check(examples::kPositiveInteger);
  app.add_option("--layers", params.layers, "MLP sizes, the first one the user+item embedding width (even)")
      ->delimiter(',')
      ->trigger_on_parse()
      ->check(examples::kPositiveInteger);
  app.add_option("--mf_regularization", params.mf_regularization, "L2 factor of the embeddings")
      ->check(CLI::Range(0.0, 1e9));
  app.add_option("--mlp_regularization", params.mlp_regularization, "L2 factor of each MLP layer, one per --layers")
      ->delimiter(',')
      ->trigger_on_parse()
      ->check(CLI::Range(0.0, 1e9));
  app.add_option("--num_neg", num_neg, "Negatives sampled per training positive")->check(examples::kPositiveInteger);
  app.add_option("--num_users", data_options.num_users, "Synthetic users (MovieLens-1M: 6040)")
      ->check(examples::kPositiveInteger);
  app.add_option("--num_items", data_options.num_items, "Synthetic items (MovieLens-1M: 3706)")
      ->check(CLI::Range(2, 1 << 30));
  app.add_option("--mean_interactions", data_options.mean_interactions, "Mean interactions per user (ML-1M: ~166)")
      ->check(CLI::Range(20, 1 << 30));
  app.add_option("--num_eval_negatives", data_options.num_eval_negatives,
                 "Negatives each held-out item is ranked against (official: 999)")
      ->check(examples::kPositiveInteger);
  app.add_flag("--small", small,
               "A quick configuration: 1000 users, 800 items, 40 interactions each, 99 evaluation negatives, "
               "ncf_common.py's default model (--num_factors 8 --layers 64,32,16,8), batch 1024, learning rate "
               "0.005, 10 epochs (flags given explicitly still win)");
  app.add_option("--seed", seed, "Seed of the data, the negatives and the weights");
  bool synthetic = true;  // accepted like the other examples' flag; the data are always synthetic
  app.add_flag("--use_synthetic_data", synthetic, "Train on synthetic data (the only input; accepted for symmetry)");
  app.add_option("--model_dir", model_dir, "If set, checkpoints (ckpt/) and TensorBoard logs (logs/) go here")
      ->check(examples::kWritableDirectory);
  app.add_option("--export_model", export_dir,
                 "Write the untrained model (model.json, model_info.json with its parameter count) here and exit")
      ->check(examples::kWritableDirectory);
  examples::add_strategy_flags(app, devices, /*parameter_server=*/true);
  examples::PrecisionFlags precision;
  examples::add_precision_flags(app, precision);
  CLI11_PARSE(app, argc, argv);

  if (small) {  // only where the flag was not given
    auto unset = [&](const char* flag) { return app.count(flag) == 0; };
    if (unset("--num_users")) data_options.num_users = 1000;
    if (unset("--num_items")) data_options.num_items = 800;
    if (unset("--mean_interactions")) data_options.mean_interactions = 40;
    if (unset("--num_eval_negatives")) data_options.num_eval_negatives = 99;
    if (unset("--batch_size")) batch_size = 1024;
    if (unset("--train_epochs")) train_epochs = 10;
    if (unset("--learning_rate")) learning_rate = 0.005;
    if (unset("--num_factors")) params.mf_dim = 8;
    if (unset("--layers")) params.layers = {64, 32, 16, 8};
  }
  data_options.seed = seed;
  params.num_users = data_options.num_users;
  params.num_items = data_options.num_items;
  if (app.count("--mlp_regularization") == 0) params.mlp_regularization.assign(params.layers.size(), 0.0);

  try {
    examples::check_ncf_params(params);  // before generating any data
    K::set_random_seed(seed);
    if (!export_dir.empty()) {
      K::Model model = examples::neumf_model(params);
      return export_model(model, params, export_dir);
    }
    auto strategy = examples::make_strategy(devices);
    std::printf("Strategy: %s\n", strategy.describe().c_str());
    if (!strategy.is_chief()) K::set_default_verbose(0);
    // A ParameterServerStrategy worker runs the chief's steps inside fit and has nothing to report.
    const bool ps_job = devices.distribution_strategy == "parameter_server";
    const bool reports = !ps_job || strategy.is_chief();
    auto t0 = std::chrono::steady_clock::now();
    examples::ImplicitData data = examples::make_implicit_data(data_options);
    std::printf("Synthetic data: %lld users, %lld items, %lld training interactions (%.1f s)\n",
                static_cast<long long>(data.num_users), static_cast<long long>(data.num_items),
                static_cast<long long>(data.num_train), seconds_since(t0));
    auto pop = examples::popularity_baseline(data);
    std::printf("Popularity baseline: HR@10 %.4f - NDCG@10 %.4f\n", pop.hit_rate, pop.ndcg);

    examples::apply_dtype_policy(precision);
    K::Model model = examples::neumf_model(params);
    if (strategy.is_chief()) model.summary();
    model.compile(
        {.optimizer = examples::with_loss_scale(
             precision, K::optimizers::Adam(learning_rate, {.beta_1 = beta1, .beta_2 = beta2, .epsilon = epsilon})),
         .loss = K::losses::BinaryCrossentropy({.from_logits = true}),
         .distribute = strategy});
    std::vector<K::callbacks::CallbackRef> callbacks;
    if (!model_dir.empty()) {
      namespace fs = std::filesystem;
      callbacks.push_back(
          K::callbacks::ModelCheckpoint((fs::path(model_dir) / "ckpt" / "e{epoch:02d}.weights.h5").string()));
      callbacks.push_back(K::callbacks::TensorBoard((fs::path(model_dir) / "logs").string()));
    }
    auto start = std::chrono::steady_clock::now();
    examples::RankingMetrics m;
    for (int epoch = 0; epoch < train_epochs; ++epoch) {
      // Fresh negatives every epoch, as the official input pipeline.
      auto e = examples::make_training_epoch(data, num_neg, seed * 1000003 + static_cast<std::uint64_t>(epoch));
      auto t = std::chrono::steady_clock::now();
      // ParameterServerStrategy needs steps_per_epoch (as Keras): the epoch's batches.
      const std::int64_t steps = ps_job ? (e.labels.dim(0) + batch_size - 1) / batch_size : -1;
      auto history = model.fit(K::Dataset::from_tensor_slices({e.users, e.items, e.labels}).batch(batch_size),
                               {.epochs = epoch + 1,
                                .steps_per_epoch = steps,
                                .initial_epoch = epoch,
                                .callbacks = callbacks,
                                .verbose = 0});
      const double train_s = seconds_since(t);
      if (!reports) continue;
      m = examples::model_ranking(model, data, eval_batch_size);
      std::printf("Epoch %d/%d: loss %.4f - HR@10 %.4f - NDCG@10 %.4f (%lld examples, train %.1f s, %.0f examples/s)\n",
                  epoch + 1, train_epochs, history.history.at("loss").back(), m.hit_rate, m.ndcg,
                  static_cast<long long>(e.labels.dim(0)), train_s, double(e.labels.dim(0)) / train_s);
      std::fflush(stdout);
    }
    if (!reports) return 0;
    std::printf(
        "Final: NeuMF HR@10 %.4f NDCG@10 %.4f vs popularity HR@10 %.4f NDCG@10 %.4f (%.1f s training + "
        "evaluation)\n",
        m.hit_rate, m.ndcg, pop.hit_rate, pop.ndcg, seconds_since(start));
  } catch (const K::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
