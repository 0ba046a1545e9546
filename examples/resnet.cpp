// ResNet v1 exactly as in the TensorFlow official models' Keras ResNets, trained on synthetic data:
//  - CIFAR-10 shapes (32x32x3, 10 classes): ResNet-20/32/56 (depth 6n+2),
//    official/benchmark/models/resnet_cifar_model.py: convs with biases, L2(2e-4) on every
//    kernel and bias, ZeroPadding2D(1) + "valid" stem, he_normal classifier;
//  - ImageNet shapes (224x224x3, 1000 classes): ResNet-50 (v1.5: the stride sits on the 3x3
//    conv of a bottleneck), official/legacy/image_classification/resnet/resnet_model.py: convs
//    without biases, L2(1e-4) on the kernels and on the classifier's bias, ZeroPadding2D(3) +
//    "valid" 7x7/2 stem, classifier RandomNormal(stddev=0.01).
// The regularization loss joins the reported loss, as in Keras. Devices: --num_gpus (default -1:
// every GPU, or the CPU when there is none), see strategy_flags.hpp.
#include <CLI/CLI.hpp>
#include <kerascpp/kerascpp.hpp>

#include "flag_checks.hpp"
#include "precision_flags.hpp"
#include "resnet_models.hpp"
#include "strategy_flags.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace K = kerascpp;
using examples::resnet::cifar_resnet;
using examples::resnet::resnet50;
using examples::resnet::synthetic_data;

namespace {

// The official Keras mains' learning rate: base_lr * batch_size / (128 CIFAR, 256 ImageNet),
// linear warm-up over `warmup_epochs` (ImageNet: 5), then x0.1 at each boundary epoch
// (CIFAR 91/136/182, ImageNet 30/60/80).
class OfficialSchedule : public K::optimizers::schedules::LearningRateSchedule {
 public:
  OfficialSchedule(double rate, std::int64_t steps_per_epoch, int warmup_epochs, std::vector<int> boundaries)
      : rate_(rate),
        steps_per_epoch_(steps_per_epoch),
        warmup_epochs_(warmup_epochs),
        boundaries_(std::move(boundaries)) {}
  double operator()(std::int64_t step) const override {
    const std::int64_t warmup_steps = warmup_epochs_ * steps_per_epoch_;
    if (step < warmup_steps) return rate_ * static_cast<double>(step) / static_cast<double>(warmup_steps);
    double rate = rate_;
    for (int epoch : boundaries_)
      if (step > epoch * steps_per_epoch_) rate *= 0.1;  // tf piecewise_constant: boundary step keeps the old value
    return rate;
  }

 private:
  double rate_;
  std::int64_t steps_per_epoch_;
  int warmup_epochs_;
  std::vector<int> boundaries_;
};

// Times every step but the very first (which creates the oneDNN primitives), including data
// loading and excluding epoch-end callbacks; prints examples/s every `log_steps`; stops on a
// non-finite loss.
class TimeHistory : public K::callbacks::Callback {
 public:
  TimeHistory(std::int64_t batch_size, std::int64_t log_steps) : batch_size_(batch_size), log_steps_(log_steps) {}
  void on_epoch_begin(int, const K::Logs&) override { last_ = now(); }
  void on_train_batch_end(std::int64_t, const K::Logs& logs) override {
    const double t = now();
    if (steps_++ > 0) {
      timed_seconds_ += t - last_;
      ++timed_steps_;
      window_seconds_ += t - last_;
      ++window_steps_;
    }
    last_ = t;
    loss_ = logs["loss"];
    if (!std::isfinite(loss_)) {
      std::fprintf(stderr, "error: the loss became %f at step %lld\n", loss_, static_cast<long long>(steps_));
      model().stop_training = true;
    }
    if (log_steps_ > 0 && steps_ % log_steps_ == 0 && window_steps_ > 0) {
      std::printf("step %lld: loss %.4f, %.1f images/s\n", static_cast<long long>(steps_), loss_,
                  window_steps_ * batch_size_ / window_seconds_);
      window_seconds_ = 0;
      window_steps_ = 0;
    }
  }
  std::int64_t steps() const { return steps_; }
  double loss() const { return loss_; }
  // Over every step after the first; with a single step, that step.
  double images_per_second(double total_seconds) const {
    if (timed_steps_ > 0) return timed_steps_ * batch_size_ / timed_seconds_;
    return steps_ * batch_size_ / total_seconds;
  }

 private:
  static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  std::int64_t batch_size_, log_steps_;
  std::int64_t steps_ = 0, timed_steps_ = 0, window_steps_ = 0;
  double last_ = 0, timed_seconds_ = 0, window_seconds_ = 0;
  double loss_ = 0;
};

// --export_model: what tests/python/test_resnet_official.py compares with Keras.
int export_model(const K::Model& model, const std::string& dir) {
  namespace fs = std::filesystem;
  model.save_weights((fs::path(dir) / "model.weights.h5").string());
  std::FILE* json = std::fopen((fs::path(dir) / "model.json").string().c_str(), "w");
  std::FILE* info = std::fopen((fs::path(dir) / "model_info.json").string().c_str(), "w");
  bool ok = json && info && std::fputs(model.to_json().c_str(), json) >= 0 &&
            std::fprintf(info, "{\"params\": %lld, \"regularization_loss\": %.17g}\n",
                         static_cast<long long>(model.count_params()), model.regularization_loss()) > 0;
  ok = (!json || std::fclose(json) == 0) && ok;
  ok = (!info || std::fclose(info) == 0) && ok;
  if (!ok) std::fprintf(stderr, "error: cannot write the model to '%s'\n", dir.c_str());
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ResNet v1 (official models' Keras ResNets) with kerascpp on synthetic data"};
  examples::last_flag_wins(app);
  std::string dataset, model_dir;
  int resnet_size = 0, train_epochs = 1;
  examples::StrategyFlags devices{.num_gpus = -1};
  std::int64_t batch_size = 0, train_steps = 100, log_steps = 100;
  double learning_rate = 0.1;
  std::uint64_t seed = 42;
  bool synthetic = false, print_summary = false;
  std::string export_dir;
  app.add_option("--resnet_size", resnet_size, "20, 32, 56 (CIFAR-10 shapes) or 50 (ImageNet shapes); default 56 or 50")
      ->check(CLI::IsMember({20, 32, 56, 50}));
  app.add_option("--dataset", dataset, "cifar10 or imagenet (default: from --resnet_size, else cifar10)")
      ->check(CLI::IsMember({"cifar10", "imagenet"}));
  app.add_flag("--use_synthetic_data", synthetic, "Train on random images and labels (required for now)");
  // Left unset (0), --batch_size takes the dataset's default; given, it must be positive.
  app.add_option("--batch_size", batch_size,
                 "Global batch size, split across replicas (default 128 CIFAR, 256 ImageNet)")
      ->check(examples::kPositiveInteger);
  app.add_option("--train_steps", train_steps, "Steps per epoch (default 100)")->check(examples::kPositiveInteger);
  app.add_option("--train_epochs", train_epochs, "Epochs to train (default 1)")->check(examples::kPositiveInteger);
  app.add_option("--learning_rate", learning_rate,
                 "Base learning rate per 128 (CIFAR) / 256 (ImageNet) images (default 0.1), scaled by batch "
                 "size, with the official warm-up and decay (SGD, momentum 0.9)")
      ->check(examples::kFinitePositive);
  app.add_option("--seed", seed, "Random seed (weights, synthetic data)");
  app.add_option("--model_dir", model_dir, "If set, checkpoints (ckpt/) and TensorBoard logs (logs/) go here")
      ->check(examples::kWritableDirectory);
  app.add_option("--log_steps", log_steps, "Print loss and images/s every this many steps (default 100; 0: never)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--print_summary", print_summary, "Print the model summary");
  app.add_option("--export_model", export_dir,
                 "Write the untrained model (model.json, model.weights.h5, model_info.json with its parameter "
                 "count and regularization loss) to this directory and exit")
      ->check(examples::kWritableDirectory);
  examples::add_strategy_flags(app, devices);
  examples::PrecisionFlags precision;
  examples::add_precision_flags(app, precision);
  CLI11_PARSE(app, argc, argv);

  if (dataset.empty()) dataset = resnet_size == 50 ? "imagenet" : "cifar10";
  if (resnet_size == 0) resnet_size = dataset == "imagenet" ? 50 : 56;
  const bool imagenet = dataset == "imagenet";
  if (imagenet != (resnet_size == 50)) {
    std::fprintf(stderr,
                 "error: --resnet_size %d does not fit --dataset %s: ResNet-50 is the ImageNet model "
                 "(224x224x3, 1000 classes) and ResNet-20/32/56 are the CIFAR-10 models (32x32x3, 10 classes)\n",
                 resnet_size, dataset.c_str());
    return 2;
  }
  if (!synthetic && export_dir.empty()) {
    std::fprintf(stderr, "error: only synthetic data is supported for now; pass --use_synthetic_data\n");
    return 2;
  }
  if (batch_size == 0) batch_size = imagenet ? 256 : 128;  // not given; a given one was checked > 0

  try {
    K::set_random_seed(seed);
    const int num_classes = imagenet ? 1000 : 10;
    const K::Shape image_shape = imagenet ? K::Shape{224, 224, 3} : K::Shape{32, 32, 3};
    K::Dataset train =
        synthetic_data(image_shape, num_classes, std::min<std::int64_t>(batch_size, 64), batch_size, seed);

    auto strategy = examples::make_strategy(devices);
    std::printf("Strategy: %s\n", strategy.describe().c_str());
    examples::apply_dtype_policy(precision);
    K::Model model = imagenet ? resnet50(num_classes) : cifar_resnet(resnet_size, num_classes);
    if (print_summary) model.summary();
    if (!export_dir.empty()) return export_model(model, export_dir);
    std::printf("Model: %s, %lld parameters, %s shapes, global batch %lld\n", model.name().c_str(),
                static_cast<long long>(model.count_params()), dataset.c_str(), static_cast<long long>(batch_size));

    const double rate = learning_rate * static_cast<double>(batch_size) / (imagenet ? 256.0 : 128.0);
    OfficialSchedule schedule(rate, train_steps, imagenet ? 5 : 0,
                              imagenet ? std::vector<int>{30, 60, 80} : std::vector<int>{91, 136, 182});
    model.compile({.optimizer = examples::with_loss_scale(precision, K::optimizers::SGD(schedule, {.momentum = 0.9})),
                   .loss = K::losses::SparseCategoricalCrossentropy(),
                   .metrics = {"accuracy"},
                   .distribute = strategy});

    auto timer = std::make_shared<TimeHistory>(batch_size, log_steps);
    std::vector<K::callbacks::CallbackRef> callbacks{timer};
    if (!model_dir.empty()) {
      namespace fs = std::filesystem;
      fs::path dir(model_dir);
      callbacks.push_back(K::callbacks::ModelCheckpoint((dir / "ckpt" / "e{epoch:02d}.weights.h5").string()));
      callbacks.push_back(K::callbacks::TensorBoard((dir / "logs").string()));
    }
    const auto start = std::chrono::steady_clock::now();
    model.fit(train, {.epochs = train_epochs, .steps_per_epoch = train_steps, .callbacks = callbacks, .verbose = 2});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    const std::int64_t expected = train_steps * train_epochs;
    if (!std::isfinite(timer->loss())) {
      std::fprintf(stderr, "error: training diverged (loss %f after %lld steps)\n", timer->loss(),
                   static_cast<long long>(timer->steps()));
      return 3;
    }
    for (K::Variable* v : model.variables()) {
      const K::Tensor w = v->value().to(K::Device{});  // host view (a copy for GPU replicas)
      const float* p = w.data<float>();
      for (std::int64_t i = 0, n = w.numel(); i < n; ++i)
        if (!std::isfinite(p[i])) {
          std::fprintf(stderr, "error: training diverged (%s holds %f)\n", v->path().c_str(), p[i]);
          return 3;
        }
    }
    if (timer->steps() != expected) {
      std::fprintf(stderr, "error: trained %lld of %lld steps\n", static_cast<long long>(timer->steps()),
                   static_cast<long long>(expected));
      return 3;
    }
    std::printf("trained %lld steps in %.2f s, final loss %.4f\n", static_cast<long long>(expected), seconds,
                timer->loss());
    std::printf("throughput: %.1f images/s (global batch %lld, %s)\n", timer->images_per_second(seconds),
                static_cast<long long>(batch_size), expected > 1 ? "steps after the first" : "one step");
  } catch (const K::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
