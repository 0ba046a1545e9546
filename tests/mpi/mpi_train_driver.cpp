// The multi-worker test driver: trains a small fixed-seed model on fixed data under
// MirroredStrategy (one process) or MultiWorkerMirroredStrategy (under mpirun), so that
// tests/mpi/test_multi_worker.py can compare the final weights, the files written and the
// behaviour when a worker dies. Every worker writes its own final weights to
// --weights_prefix.rank<R>.h5 (the test's files, not a user path); callbacks write under
// --model_dir as a user's would (the chief only).
#include <CLI/CLI.hpp>
#include <kerascpp/distribute/distribute_dataset.hpp>
#include <kerascpp/kerascpp.hpp>

#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <thread>

namespace K = kerascpp;
namespace D = kerascpp::distribute;

namespace {

K::Model make_model(const std::string& kind) {
  K::set_random_seed(11);
  if (kind == "mlp") {
    auto in = K::Input({12});
    auto x = K::layers::Dense(16, {.activation = "relu"})(in);
    x = K::layers::Dense(8, {.activation = "tanh"})(x);
    return K::Model(in, K::layers::Dense(3, {.activation = "softmax"})(x));
  }
  auto in = K::Input({6, 6, 2});
  auto x = K::layers::Conv2D(4, 3, {.padding = K::Padding::same, .use_bias = false})(in);
  x = K::layers::BatchNormalization({.synchronized = kind == "cnn_sync_bn"})(x);
  x = K::layers::Activation("relu")(x);
  x = K::layers::MaxPooling2D(2)(x);
  x = K::layers::Flatten()(x);
  return K::Model(in, K::layers::Dense(3, {.activation = "softmax"})(x));
}

// With `weighted`, elements are (x, y, sample_weight): weights 0.25..2 drawn after the labels.
K::Dataset make_data(const std::string& kind, std::int64_t n, std::int64_t batch, bool weighted = false) {
  K::Rng rng(99);
  K::Shape shape = kind == "mlp" ? K::Shape{n, 12} : K::Shape{n, 6, 6, 2};
  K::Tensor x(shape, K::DType::float32, K::Device{});
  K::Tensor y({n}, K::DType::int32, K::Device{});
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(rng.normal());
  for (std::int64_t i = 0; i < n; ++i) y.data<std::int32_t>()[i] = static_cast<std::int32_t>(rng.next_u64() % 3);
  // Shuffled with a fixed seed: every worker (and the one-process run) sees the same batches.
  if (!weighted) return K::Dataset::from_tensor_slices(x, y).shuffle(n, 5).batch(batch);
  K::Tensor w({n}, K::DType::float32, K::Device{});
  for (std::int64_t i = 0; i < n; ++i) w.data<float>()[i] = 0.25f * static_cast<float>(1 + rng.next_u64() % 8);
  return K::Dataset::from_tensor_slices({x, y, w}).shuffle(n, 5).batch(batch);
}

// AUC of class 0 (softmax column 0 against label == 0), built on the host from the sparse
// labels: a metric of 4·200 confusion counts that must add up over every replica of every worker.
class ClassZeroAUC : public K::metrics::AUC {
 public:
  ClassZeroAUC() : AUC({}, "class0_auc") {}
  std::vector<double> shard_totals(K::Backend& backend, const K::Tensor& pred, const K::Tensor& y) const override {
    const std::int64_t n = pred.dim(0), classes = pred.dim(-1);
    K::Tensor p({n}, K::DType::float32, K::Device{}), t({n}, K::DType::float32, K::Device{});
    for (std::int64_t i = 0; i < n; ++i) {
      p.data<float>()[i] = pred.data<float>()[i * classes];
      t.data<float>()[i] = y.data<std::int32_t>()[i] == 0 ? 1.f : 0.f;
    }
    return AUC::shard_totals(backend, p, t);
  }
};

K::AutoShardPolicy policy_named(const std::string& policy) {
  return policy == "FILE"   ? K::AutoShardPolicy::FILE
         : policy == "DATA" ? K::AutoShardPolicy::DATA
         : policy == "OFF"  ? K::AutoShardPolicy::OFF
                            : K::AutoShardPolicy::AUTO;
}

// The lines of `files` this worker gets from experimental_distribute_dataset under `policy`.
int print_shard(const D::Strategy& strategy, const std::vector<std::string>& files, const std::string& policy) {
  const K::AutoShardPolicy p = policy_named(policy);
  const K::Dataset mine = D::experimental_distribute_dataset(
      strategy, K::data::TextLineDataset(files).with_options({.auto_shard_policy = p}));
  auto it = mine.make_iterator();
  for (K::Example e; it->next(e);)
    std::printf("rank %d element %s\n", strategy.worker_index(), K::data::tensor_bytes(e.at(0)).c_str());
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"multi-worker test driver"};
  std::string strategy_kind = "multi_worker", model_kind = "mlp", optimizer_kind = "sgdm", prefix, model_dir;
  int replicas = 1, epochs = 3, timeout_s = 300, step_delay_ms = 0;
  std::int64_t examples = 250, batch = 25;
  bool trace_steps = false, sample_weights = false;
  std::vector<std::string> shard_files;
  std::string shard_policy = "AUTO";
  app.add_option("--strategy", strategy_kind)->check(CLI::IsMember({"mirrored", "multi_worker"}));
  app.add_option("--model", model_kind)->check(CLI::IsMember({"mlp", "cnn_bn", "cnn_sync_bn"}));
  app.add_option("--optimizer", optimizer_kind)->check(CLI::IsMember({"sgdm", "adam", "nadam", "adam_loss_scale"}));
  app.add_option("--replicas", replicas, "replicas per process");
  app.add_option("--examples", examples);
  app.add_option("--batch", batch, "global batch");
  app.add_option("--epochs", epochs);
  app.add_option("--weights_prefix", prefix)->required();
  app.add_option("--model_dir", model_dir, "ModelCheckpoint, BackupAndRestore, CSVLogger, TensorBoard here");
  app.add_option("--timeout", timeout_s, "collective timeout (s)");
  app.add_option("--step_delay_ms", step_delay_ms, "sleep after each step (gives the fault tests time)");
  app.add_flag("--trace_steps", trace_steps, "print 'rank R step S' after each step");
  app.add_flag("--sample_weights", sample_weights, "(x, y, sample_weight) data and weighted_metrics");
  app.add_option("--shard_files", shard_files,
                 "instead of training: print 'rank R element LINE' for each line of these text files that "
                 "experimental_distribute_dataset gives this worker under --shard_policy");
  app.add_option("--shard_policy", shard_policy)->check(CLI::IsMember({"AUTO", "FILE", "DATA", "OFF"}));
  CLI11_PARSE(app, argc, argv);

  try {
    D::StrategyOptions options{.threads_per_replica = 1, .collective_timeout = std::chrono::seconds(timeout_s)};
    D::Strategy strategy = strategy_kind == "mirrored"
                               ? D::Strategy(D::MirroredStrategy<>(replicas, options))
                               : D::Strategy(D::MultiWorkerMirroredStrategy<>(replicas, options));
    const int rank = strategy.worker_index();
    std::printf("rank %d pid %d workers %d replicas_in_sync %d: %s\n", rank, static_cast<int>(getpid()),
                strategy.num_workers(), strategy.num_replicas_in_sync(), strategy.describe().c_str());
    std::fflush(stdout);
    if (!shard_files.empty()) return print_shard(strategy, shard_files, shard_policy);
    K::Model model = make_model(model_kind);
    K::optimizers::OptimizerRef opt = optimizer_kind == "adam" ? K::optimizers::OptimizerRef(K::optimizers::Adam(0.01))
                                      : optimizer_kind == "nadam"
                                          ? K::optimizers::OptimizerRef(K::optimizers::Nadam(0.01))
                                          : K::optimizers::OptimizerRef(K::optimizers::SGD(0.05, {.momentum = 0.9}));
    // Loss scaling over MPI: the scale's growth and the all-reduced finiteness verdict span the workers.
    if (optimizer_kind == "adam_loss_scale")
      opt = K::optimizers::LossScaleOptimizer(K::optimizers::Adam(0.01), {.dynamic_growth_steps = 5});
    model.compile({.optimizer = opt,
                   .loss = K::losses::SparseCategoricalCrossentropy(),
                   .metrics = {"accuracy", ClassZeroAUC()},
                   .weighted_metrics = sample_weights ? std::vector<K::metrics::MetricRef>{"accuracy", ClassZeroAUC()}
                                                      : std::vector<K::metrics::MetricRef>{},
                   .distribute = strategy});
    std::vector<K::callbacks::CallbackRef> cbs;
    if (!model_dir.empty()) {
      cbs.push_back(K::callbacks::BackupAndRestore(model_dir + "/backup"));
      cbs.push_back(
          K::callbacks::ModelCheckpoint(model_dir + "/ckpt/e{epoch:02d}.weights.h5", {.save_weights_only = true}));
      cbs.push_back(K::callbacks::CSVLogger(model_dir + "/log.csv"));
      cbs.push_back(K::callbacks::TensorBoard(model_dir + "/tb"));
    }
    if (trace_steps || step_delay_ms > 0) {
      auto trace = std::make_shared<K::callbacks::LambdaCallback>();
      trace->on_train_batch_end_fn = [&, step = 0](std::int64_t, const K::Logs&) mutable {
        if (trace_steps) std::printf("rank %d step %d\n", rank, ++step), std::fflush(stdout);
        if (step_delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(step_delay_ms));
      };
      cbs.push_back(trace);
    }
    // --shard_policy without --shard_files: the policy on the training data (fit keeps splitting
    // global batches, and says so for FILE and OFF).
    K::Dataset data = make_data(model_kind, examples, batch, sample_weights)
                          .with_options({.auto_shard_policy = policy_named(shard_policy)});
    auto history = model.fit(data, {.epochs = epochs,
                                    .validation_data = make_data(model_kind, 60, batch, sample_weights),
                                    .callbacks = cbs,
                                    .verbose = 0});
    std::printf("rank %d final loss %.9g accuracy %.9g\n", rank, history.history.at("loss").back(),
                history.history.at("accuracy").back());
    std::printf("rank %d final class0_auc %.17g val_class0_auc %.17g\n", rank, history.history.at("class0_auc").back(),
                history.history.at("val_class0_auc").back());
    if (sample_weights)
      std::printf("rank %d final weighted_accuracy %.17g weighted_class0_auc %.17g val_weighted_class0_auc %.17g\n",
                  rank, history.history.at("weighted_accuracy").back(),
                  history.history.at("weighted_class0_auc").back(),
                  history.history.at("val_weighted_class0_auc").back());
    model.save_weights(prefix + ".rank" + std::to_string(rank) + ".weights.h5");
    // predict() returns every row on every worker.
    K::Tensor p = model.predict(make_data(model_kind, 37, batch), {.verbose = 0});
    double checksum = 0;
    for (float v : p.to_vector()) checksum += v;
    std::printf("rank %d predict rows %lld checksum %.9g\n", rank, static_cast<long long>(p.dim(0)), checksum);
    return 0;
  } catch (const K::Error& e) {
    std::fprintf(stderr, "mpi_train_driver: %s\n", e.what());
    return 1;
  }
}
