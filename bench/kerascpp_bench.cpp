// kerascpp side of the benchmark (bench/README.md): one workload per process so that peak RSS
// and time to first step belong to that workload alone. Prints one JSON line per measurement.
//
//   kerascpp_bench train   --model mlp|cnn|official_cnn|transformer|ncf|resnet20|resnet50 [--batch B] [--width W]
//   [--replicas R]
//                          [--threads T] [--windows N] [--window-steps S] [--warmup-steps W]
//                          [--device cpu|gpu] [--strategy one_device|mirrored|multi_worker]
//                          [--dtype fp32|bf16|fp16]  (the dtype policy: float32, mixed_bfloat16, mixed_float16)
//                          [--paired-gemm-bound 1]  (mlp: after each window, its GEMMs alone, mlp_gemms.hpp)
//                          [--paired-sgemm-peak 1]  (mlp: after each window, the sgemm peak, mlp_gemms.hpp)
//                          [--paired-float32 1]  (bf16/fp16: a float32 twin trained window for window in turn)
//   kerascpp_bench predict [--samples N] [--warmup N] [--threads T] [--device cpu|gpu]
// --device gpu trains on gpu:0 (OneDeviceStrategy), or with --strategy mirrored on every GPU
// through MirroredStrategy<>() (NCCL); resnet50 is ResNet-50 v1.5 on synthetic ImageNet shapes,
// resnet20 the CIFAR ResNet-20 on synthetic CIFAR-10 shapes. Every train line also gives the
// model's parameter count (trainable and not, as Keras' count_params) and its loss after the first
// step and over the last window, so that the frameworks' models and runs can be checked alike.
#include <omp.h>
#include <sys/resource.h>
#include <kerascpp/kerascpp.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "fashion_mnist_models.hpp"
#include "mlp_gemms.hpp"
#include "ncf_model.hpp"
#include "resnet_models.hpp"
#include "transformer_model.hpp"
#include "transformer_task.hpp"

namespace K = kerascpp;
using Clock = std::chrono::steady_clock;

namespace {

const Clock::time_point g_start = Clock::now();  // process start (static init), for time to first step

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

using mlp_gemms::median;

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double idx = p / 100.0 * static_cast<double>(v.size() - 1);
  auto lo = static_cast<std::size_t>(idx);
  std::size_t hi = std::min(lo + 1, v.size() - 1);
  double f = idx - static_cast<double>(lo);
  return v[lo] * (1 - f) + v[hi] * f;
}

std::string json_list(const std::vector<double>& v) {
  std::string s = "[";
  char buf[64];
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.6g", i ? ", " : "", v[i]);
    s += buf;
  }
  return s + "]";
}

// A JSON number, or null where there is none (a loss never logged, or one that diverged).
std::string json_num(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

struct Args {
  std::map<std::string, std::string> kv;
  Args(int argc, char** argv, int first) {
    for (int i = first; i < argc; ++i) {
      std::string a = argv[i];
      if (a.rfind("--", 0) != 0 || i + 1 >= argc) {
        std::fprintf(stderr, "bad argument '%s' (expected --name value)\n", a.c_str());
        std::exit(2);
      }
      kv[a.substr(2)] = argv[++i];
    }
  }
  std::string str(const std::string& k, const std::string& d) const {
    auto it = kv.find(k);
    return it == kv.end() ? d : it->second;
  }
  long num(const std::string& k, long d) const {
    auto it = kv.find(k);
    return it == kv.end() ? d : std::stol(it->second);
  }
};

// bench's "cnn" is the example's "small_cnn" and its "official_cnn" the example's "cnn" (the
// official models' MNIST CNN, which examples/fashion_mnist trains); the large MLP is "mlp" with a width.
K::Model build_model(const std::string& kind, std::int64_t width) {
  if (kind == "official_cnn") return examples::fashion_mnist_model("cnn");
  if (kind != "mlp" && kind != "cnn") throw K::Error("--model must be mlp, cnn or official_cnn, got '" + kind + "'");
  return examples::fashion_mnist_model(kind == "cnn" ? "small_cnn" : kind, width);
}

// A training workload: the model compiled under `strategy` and its endless batched data.
struct Workload {
  K::Model model;
  K::Dataset data;
};

// The official Transformer's tiny config (6 layers, hidden 32) on examples/transformer.cpp's
// reversal task: sequences of 10 tokens, vocabulary 18, the official schedule and smoothing.
constexpr std::int64_t kTransformerLength = 10, kTransformerVocab = 18;

Workload transformer_workload(std::int64_t batch, const K::distribute::Strategy& strategy) {
  namespace T = examples::transformer;
  T::Params p = T::tiny_params();
  p.vocab_size = kTransformerVocab;
  p.learning_rate_warmup_steps = 200;
  T::Built built = T::build_transformer(p, kTransformerLength, 1);
  built.model.compile(
      {.optimizer = K::optimizers::Adam(
           K::optimizers::schedules::TransformerSchedule(p.learning_rate, p.hidden_size, p.learning_rate_warmup_steps),
           {.beta_1 = p.adam_beta1, .beta_2 = p.adam_beta2, .epsilon = p.adam_epsilon}),
       .loss = K::losses::CategoricalCrossentropy({.from_logits = true, .label_smoothing = p.label_smoothing}),
       .metrics = {"accuracy"},
       .distribute = strategy});
  K::Dataset data =
      K::Dataset::from_tensor_slices(T::make_task("reverse", 20000, kTransformerLength, kTransformerVocab, 2))
          .shuffle(20000)
          .batch(batch, true)
          .repeat()
          .prefetch(2);
  return {built.model, data};
}

// NCF: the official run.sh NeuMF (examples/ncf_model.hpp's defaults), learning rate and loss, on
// random (user, item, label) rows in MovieLens-1M shapes, a fifth of them positive (num_neg 4).
// peers/common.py's ncf_data() makes rows of the same shapes and proportions with numpy's
// generator; throughput does not depend on the values. Unshuffled: the rows are random already.
Workload ncf_workload(std::int64_t batch, const K::distribute::Strategy& strategy) {
  const std::int64_t n = 1 << 20;
  K::Rng rng(3);
  K::Tensor users({n, 1}, K::DType::int32, K::Device{}), items({n, 1}, K::DType::int32, K::Device{});
  K::Tensor labels({n, 1}, K::DType::float32, K::Device{});
  for (std::int64_t i = 0; i < n; ++i) {
    users.data<std::int32_t>()[i] = static_cast<std::int32_t>(rng.next_u64() % 6040);
    items.data<std::int32_t>()[i] = static_cast<std::int32_t>(rng.next_u64() % 3706);
    labels.data<float>()[i] = i % 5 == 0 ? 1.f : 0.f;
  }
  K::Model model = examples::neumf_model({});
  model.compile({.optimizer = K::optimizers::Adam(0.0005, {.epsilon = 1e-8}),
                 .loss = K::losses::BinaryCrossentropy({.from_logits = true}),
                 .distribute = strategy});
  return {model, K::Dataset::from_tensor_slices({users, items, labels}).batch(batch).repeat().prefetch(2)};
}

// The ResNets of examples/resnet_models.hpp on synthetic images, with the official optimizer (SGD,
// momentum 0.9) at its base rate 0.1 held constant (the schedule changes nothing in a few hundred
// steps); a pool of 64 images repeated, as in examples/resnet. resnet50: ResNet-50 v1.5 on
// 224x224x3, 1000 classes; resnet20: the CIFAR ResNet-20 on 32x32x3, 10 classes (0.1 is the
// official CIFAR rate at batch 128).
Workload resnet_workload(const std::string& kind, std::int64_t batch, const K::distribute::Strategy& strategy) {
  const bool imagenet = kind == "resnet50";
  const int classes = imagenet ? 1000 : 10;
  K::Model model = imagenet ? examples::resnet::resnet50(classes) : examples::resnet::cifar_resnet(20, classes);
  model.compile({.optimizer = K::optimizers::SGD(0.1, {.momentum = 0.9}),
                 .loss = K::losses::SparseCategoricalCrossentropy(),
                 .metrics = {"accuracy"},
                 .distribute = strategy});
  const K::Shape image = imagenet ? K::Shape{224, 224, 3} : K::Shape{32, 32, 3};
  return {model, examples::resnet::synthetic_data(image, classes, std::min<std::int64_t>(batch, 64), batch, 42)};
}

// The strategy a workload trains under: --device cpu|gpu, --replicas, --strategy.
K::distribute::Strategy make_strategy(const Args& a, int replicas, int threads) {
  namespace D = K::distribute;
  const std::string device = a.str("device", "cpu"), kind = a.str("strategy", "");
  if (device != "cpu" && device != "gpu") throw K::Error("--device must be cpu or gpu, got '" + device + "'");
  if (kind == "multi_worker") return D::MultiWorkerMirroredStrategy<>(replicas, {.threads_per_replica = threads});
  if (device == "gpu") {
    if (kind == "mirrored") return D::MirroredStrategy<>();  // every GPU, NCCL
    return D::OneDeviceStrategy("gpu:0");
  }
  if (replicas == 1) return D::OneDeviceStrategy("cpu:0", {.threads_per_replica = threads});
  return D::MirroredStrategy<>(replicas, {.threads_per_replica = threads});
}

Workload fashion_mnist_workload(const std::string& kind, std::int64_t batch, std::int64_t width,
                                const K::distribute::Strategy& strategy) {
  auto [train_ds, test_ds] = K::datasets::fashion_mnist::load();
  (void)test_ds;
  K::Model model = build_model(kind, width);
  model.compile({.optimizer = K::optimizers::Adam(1e-3),
                 .loss = K::losses::SparseCategoricalCrossentropy(),
                 .metrics = {"accuracy"},
                 .distribute = strategy});
  return {model, train_ds.shuffle(60000).batch(batch).repeat().prefetch(2)};
}

// Window timing: one fit() "epoch" of steps_per_epoch steps is one window; epoch 0 is warm-up.
// Also keeps the loss of the first step and the mean loss of the last window (fit's epoch logs).
class WindowTimer : public K::callbacks::Callback {
 public:
  Clock::time_point epoch_start;
  std::vector<double> seconds;  // per epoch
  double first_step_s = -1;
  double first_loss = NAN, last_loss = NAN;
  void on_epoch_begin(int, const K::Logs&) override { epoch_start = Clock::now(); }
  void on_epoch_end(int, const K::Logs& logs) override {
    seconds.push_back(since(epoch_start));
    if (logs.contains("loss")) last_loss = logs["loss"];
  }
  void on_train_batch_end(std::int64_t, const K::Logs& logs) override {
    if (first_step_s >= 0) return;
    first_step_s = since(g_start);
    if (logs.contains("loss")) first_loss = logs["loss"];
  }
};

// The GEMM-only bound (mlp_gemms.hpp) timed right after each training window, in the same
// process: this VM's speed drifts by up to 1.5x for seconds at a time, so a bound measured in
// another process minutes apart can make the MLP's fraction of it read 0.7 or 0.9 for one build.
// Paired per window, the ratio compares like with like.
class PairedGemmBound : public K::callbacks::Callback {
 public:
  PairedGemmBound(long batch, const std::vector<long>& dims, int threads)
      : batch_(batch),
        threads_(threads),
        gemms_(mlp_gemms::step_gemms(batch, dims)),
        reps_(std::max(1L, static_cast<long>(4e10 / mlp_gemms::flops(gemms_)))) {}
  std::vector<double> bound_sps;  // per window
  void on_epoch_end(int, const K::Logs&) override {
    omp_set_num_threads(threads_);
    bound_sps.push_back(static_cast<double>(batch_) / mlp_gemms::time_pass(gemms_, 1, reps_, 1));
  }

 private:
  long batch_;
  int threads_;
  std::vector<mlp_gemms::Gemm> gemms_;
  long reps_;
};

// The sgemm peak (mlp_gemms::peak_gflops, what sgemm_bench peak measures) timed right after each
// window, for the large MLP's fraction of it: paired for the same reason as the bound above.
class PairedSgemmPeak : public K::callbacks::Callback {
 public:
  explicit PairedSgemmPeak(int threads) : threads_(threads), shapes_(mlp_gemms::peak_gemms()) {}
  std::vector<double> peak_gflops;  // per window
  void on_epoch_end(int, const K::Logs&) override {
    omp_set_num_threads(threads_);
    peak_gflops.push_back(mlp_gemms::peak_gflops(shapes_, 1, 1));
  }

 private:
  int threads_;
  std::vector<mlp_gemms::Gemm> shapes_;  // built once: their operands are ~370 MB
};

int train(const Args& a) {
  std::string kind = a.str("model", "mlp");
  std::int64_t batch = a.num("batch", 128), width = a.num("width", 0);
  int replicas = static_cast<int>(a.num("replicas", 1)), threads = static_cast<int>(a.num("threads", 2));
  int windows = static_cast<int>(a.num("windows", 5));
  std::int64_t window_steps = a.num("window-steps", 100), warmup_steps = a.num("warmup-steps", window_steps);
  std::string workload = a.str("workload", kind);

  K::set_random_seed(1);
  const std::string dtype = a.str("dtype", "fp32");
  const std::map<std::string, std::string> policies = {
      {"fp32", "float32"}, {"bf16", "mixed_bfloat16"}, {"fp16", "mixed_float16"}};
  if (!policies.count(dtype)) throw K::Error("--dtype must be fp32, bf16 or fp16, got '" + dtype + "'");
  K::mixed_precision::set_global_policy(policies.at(dtype));
  const K::DType compute = K::mixed_precision::global_policy().compute_dtype();

  // --strategy multi_worker: started by mpirun, each worker runs `replicas` replicas (rank 0 reports).
  K::distribute::Strategy strategy = make_strategy(a, replicas, threads);
  auto make_workload = [&] {
    return kind == "transformer"                      ? transformer_workload(batch, strategy)
           : kind == "ncf"                            ? ncf_workload(batch, strategy)
           : kind == "resnet50" || kind == "resnet20" ? resnet_workload(kind, batch, strategy)
                                                      : fashion_mnist_workload(kind, batch, width, strategy);
  };
  Workload w = make_workload();
  K::Model& model = w.model;
  K::Dataset& data = w.data;

  // Warm-up window (steps may differ), then `windows` timed windows. fit() is called twice so
  // the warm-up can have its own length; the model, iterator and caches carry over.
  auto timer = std::make_shared<WindowTimer>();
  model.fit(data, {.epochs = 1, .steps_per_epoch = warmup_steps, .callbacks = {timer}, .verbose = 0});
  double warmup_s = timer->seconds.at(0);
  timer->seconds.clear();
  // The pairings below allocate GEMM operands or a second model: with one, the peak RSS reported is
  // the one after the warm-up window, before they exist (the workload's own memory).
  const bool pairing = a.num("paired-gemm-bound", 0) || a.num("paired-sgemm-peak", 0) || a.num("paired-float32", 0);
  const double rss_before_pairing = pairing ? peak_rss_mb() : 0;
  std::vector<long> mlp_dims = width > 0
                                   ? std::vector<long>{784, static_cast<long>(width), static_cast<long>(width), 10}
                                   : std::vector<long>{784, 512, 256, 10};
  std::shared_ptr<PairedGemmBound> paired;
  std::vector<K::callbacks::CallbackRef> callbacks{timer};
  std::shared_ptr<PairedSgemmPeak> paired_peak;
  if (a.num("paired-gemm-bound", 0) || a.num("paired-sgemm-peak", 0)) {
    if (kind != "mlp" || dtype != "fp32" || replicas != 1 || a.str("device", "cpu") != "cpu" ||
        !a.str("strategy", "").empty())
      throw K::Error("--paired-gemm-bound and --paired-sgemm-peak are for --model mlp on one CPU replica in fp32");
    // After the timer: the window's time is taken before the GEMMs run.
    if (a.num("paired-gemm-bound", 0)) {
      paired = std::make_shared<PairedGemmBound>(static_cast<long>(batch), mlp_dims, threads);
      callbacks.push_back(paired);
    }
    if (a.num("paired-sgemm-peak", 0)) {
      paired_peak = std::make_shared<PairedSgemmPeak>(threads);
      callbacks.push_back(paired_peak);
    }
  }
  // --paired-float32: the mixed-precision speed-up measured in pairs. This VM's speed drifts
  // between processes (and within one, for seconds at a time), so the float32 twin of the model
  // (layers made under the float32 policy) trains one window, then this one, in turn.
  auto timer32 = std::make_shared<WindowTimer>();
  if (a.num("paired-float32", 0)) {
    if (dtype == "fp32") throw K::Error("--paired-float32 compares a bf16 or fp16 run with float32; pass --dtype");
    K::mixed_precision::set_global_policy("float32");
    Workload w32 = make_workload();
    K::mixed_precision::set_global_policy(policies.at(dtype));
    w32.model.fit(w32.data, {.epochs = 1, .steps_per_epoch = warmup_steps, .callbacks = {timer32}, .verbose = 0});
    timer32->seconds.clear();
    for (int i = 0; i < windows; ++i) {
      w32.model.fit(w32.data, {.epochs = 1, .steps_per_epoch = window_steps, .callbacks = {timer32}, .verbose = 0});
      model.fit(data, {.epochs = 1, .steps_per_epoch = window_steps, .callbacks = callbacks, .verbose = 0});
    }
  } else {
    model.fit(data, {.epochs = windows, .steps_per_epoch = window_steps, .callbacks = callbacks, .verbose = 0});
  }

  std::vector<double> sps;
  for (double s : timer->seconds) sps.push_back(static_cast<double>(window_steps * batch) / s);
  double flops_per_sample = 0;
  if (kind == "mlp") flops_per_sample = mlp_gemms::step_flops(1, mlp_dims);
  double med = median(sps);
  if (!strategy.is_chief()) return 0;
  // Each window's samples/s over the bound timed right after it; the median of those ratios.
  std::string paired_json;
  if (!timer32->seconds.empty()) {
    std::vector<double> sps32, speedups;
    for (std::size_t i = 0; i < timer32->seconds.size() && i < sps.size(); ++i) {
      sps32.push_back(static_cast<double>(window_steps * batch) / timer32->seconds[i]);
      speedups.push_back(sps[i] / sps32.back());
    }
    paired_json = ", \"paired_float32_samples_per_s\": " + json_list(sps32) +
                  ", \"paired_speedups\": " + json_list(speedups) +
                  ", \"paired_speedup\": " + json_num(speedups.empty() ? NAN : median(speedups));
  }
  if (paired) {
    std::vector<double> fractions;
    for (std::size_t i = 0; i < sps.size() && i < paired->bound_sps.size(); ++i)
      fractions.push_back(sps[i] / paired->bound_sps[i]);
    paired_json += ", \"paired_bound_samples_per_s\": " + json_list(paired->bound_sps) +
                   ", \"paired_fractions\": " + json_list(fractions) +
                   ", \"paired_fraction\": " + json_num(fractions.empty() ? NAN : median(fractions));
  }
  if (paired_peak) {
    std::vector<double> fractions;
    for (std::size_t i = 0; i < sps.size() && i < paired_peak->peak_gflops.size(); ++i)
      fractions.push_back(sps[i] * flops_per_sample / 1e9 / paired_peak->peak_gflops[i]);
    paired_json += ", \"paired_peak_gflops\": " + json_list(paired_peak->peak_gflops) +
                   ", \"paired_peak_fractions\": " + json_list(fractions) +
                   ", \"paired_peak_fraction\": " + json_num(fractions.empty() ? NAN : median(fractions));
  }
  // How the CPU backend computes in the policy's dtype (the CUDA backend: mixed_precision.hpp).
  const std::string path = a.str("device", "cpu") == "cpu"
                               ? K::mixed_precision::compute_path(*K::make_cpu_backend(1), compute)
                               : std::string("n/a");
  std::printf(
      "{\"framework\": \"kerascpp\", \"workload\": \"%s\", \"model\": \"%s\", \"batch\": %ld, \"width\": %ld, "
      "\"replicas\": %d, \"threads\": %d, \"samples_per_s\": %.6g, \"windows\": %s, \"window_steps\": %ld, "
      "\"warmup_s\": %.4g, \"time_to_first_step_s\": %.4g, \"peak_rss_mb\": %.1f, \"gflops\": %.6g, "
      "\"strategy\": \"%s\", \"device\": \"%s\", \"dtype\": \"%s\", \"compute_path\": \"%s\", "
      "\"params\": %lld, \"first_loss\": %s, \"last_loss\": %s%s}\n",
      workload.c_str(), kind.c_str(), static_cast<long>(batch), static_cast<long>(width), replicas, threads, med,
      json_list(sps).c_str(), static_cast<long>(window_steps), warmup_s, timer->first_step_s,
      pairing ? rss_before_pairing : peak_rss_mb(), med * flops_per_sample / 1e9, strategy.describe().c_str(),
      a.str("device", "cpu").c_str(), dtype.c_str(), path.c_str(), static_cast<long long>(model.count_params()),
      json_num(timer->first_loss).c_str(), json_num(timer->last_loss).c_str(), paired_json.c_str());
  return 0;
}

int predict(const Args& a) {
  int threads = static_cast<int>(a.num("threads", 2));
  int samples = static_cast<int>(a.num("samples", 1000)), warmup = static_cast<int>(a.num("warmup", 50));
  int dataset_samples = static_cast<int>(a.num("dataset-samples", 200));
  K::set_random_seed(1);
  auto arrays = K::datasets::fashion_mnist::load_arrays();
  // Test images as float (N, 28, 28, 1) in [0, 1]: the "loading" in the loop is slicing row i.
  std::int64_t n = arrays.x_test.dim(0);
  K::Tensor x_test({n, 28, 28, 1});
  const std::uint8_t* src = arrays.x_test.data<std::uint8_t>();
  float* dst = x_test.data<float>();
  for (std::int64_t i = 0; i < n * 784; ++i) dst[i] = static_cast<float>(src[i]) / 255.0f;

  K::Model model = build_model("cnn", 0);
  model.compile({.optimizer = K::optimizers::Adam(1e-3),
                 .loss = K::losses::SparseCategoricalCrossentropy(),
                 .distribute = make_strategy(a, 1, threads)});

  auto report = [&](const char* api, const std::vector<double>& lat, double first_s) {
    double mean = 0;
    for (double v : lat) mean += v / static_cast<double>(lat.size());
    std::printf(
        "{\"framework\": \"kerascpp\", \"workload\": \"predict1\", \"api\": \"%s\", \"threads\": %d, "
        "\"device\": \"%s\", "
        "\"p50_ms\": %.6g, \"p99_ms\": %.6g, \"mean_ms\": %.6g, \"samples\": %zu, "
        "\"time_to_first_step_s\": %.4g, \"peak_rss_mb\": %.1f}\n",
        api, threads, a.str("device", "cpu").c_str(), percentile(lat, 50), percentile(lat, 99), mean, lat.size(),
        first_s, peak_rss_mb());
    std::fflush(stdout);
  };

  // predict_on_batch: the direct call (Keras' model(x), PyTorch's module(x)).
  double first_s = -1;
  std::vector<double> lat;
  float sink = 0;
  for (int i = 0; i < warmup + samples; ++i) {
    auto t = Clock::now();
    K::Tensor y = model.predict_on_batch(x_test.slice(i % n, i % n + 1));
    sink += y.data<float>()[0];
    double dt = since(t);
    if (first_s < 0) first_s = since(g_start);
    if (i >= warmup) lat.push_back(dt * 1e3);
  }
  report("predict_on_batch", lat, first_s);

  // predict(): the full Keras entry point on a one-example dataset (callbacks, progress logic).
  lat.clear();
  for (int i = 0; i < warmup + dataset_samples; ++i) {
    auto t = Clock::now();
    K::Tensor y = model.predict(K::Dataset::from_tensor_slices(x_test.slice(i % n, i % n + 1)).batch(1));
    sink += y.data<float>()[0];
    if (i >= warmup) lat.push_back(since(t) * 1e3);
  }
  report("predict", lat, first_s);
  return sink == 12345.f;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || (std::strcmp(argv[1], "train") != 0 && std::strcmp(argv[1], "predict") != 0)) {
    std::fprintf(stderr, "usage: %s train|predict [--name value ...] (see bench/README.md)\n", argv[0]);
    return 2;
  }
  try {
    Args a(argc, argv, 2);
    return std::strcmp(argv[1], "train") == 0 ? train(a) : predict(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
