// Prints a loss's per-example values, or a metric's value, for predictions and targets read from
// stdin (N*D predictions, then N*D targets, or N targets with `labels`), for
// tests/python/test_row_losses.py to compare with Keras.
//   row_loss_values loss NAME N D [key=value ...] < values
//   row_loss_values metric NAME N D [key=value ...] < values
// Keys (Keras' argument names): alpha, beta, gamma, q, k, from_logits, apply_class_balancing,
// label_smoothing, value (the rate of the *_at_* metrics), num_thresholds, threshold, labels; for
// CTC, steps=T (pred read as [N, T, D/T]) and label_length=L (N·L integer targets, [N, L]).
#include <kerascpp/kerascpp.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace K = kerascpp;
namespace L = kerascpp::losses;
namespace M = kerascpp::metrics;

namespace {

L::LossRef make_loss(const std::string& name, const std::map<std::string, double>& o) {
  auto get = [&](const char* key, double fallback) { return o.count(key) ? o.at(key) : fallback; };
  const L::FocalOptions focal{.apply_class_balancing = get("apply_class_balancing", 0) != 0,
                              .alpha = get("alpha", 0.25),
                              .gamma = get("gamma", 2.0),
                              .from_logits = get("from_logits", 0) != 0,
                              .label_smoothing = get("label_smoothing", 0)};
  if (name == "binary_focal_crossentropy") return L::BinaryFocalCrossentropy(focal);
  if (name == "categorical_focal_crossentropy") return L::CategoricalFocalCrossentropy(focal);
  if (name == "categorical_generalized_cross_entropy") return L::CategoricalGeneralizedCrossEntropy(get("q", 0.5));
  if (name == "tversky") return L::Tversky(get("alpha", 0.5), get("beta", 0.5));
  if (name == "circle") return L::Circle(get("gamma", 80.0), get("margin", 0.4));
  return L::LossRef(name);
}

std::shared_ptr<const M::Metric> make_metric(const std::string& name, std::int64_t d,
                                             const std::map<std::string, double>& o) {
  auto get = [&](const char* key, double fallback) { return o.count(key) ? o.at(key) : fallback; };
  const int classes = static_cast<int>(d);
  const int thresholds = static_cast<int>(get("num_thresholds", 200));
  if (name == "accuracy") return std::make_shared<M::Accuracy>();
  if (name == "top_k_categorical_accuracy")
    return std::make_shared<M::TopKCategoricalAccuracy>(static_cast<int>(get("k", 5)));
  if (name == "r2_score") return std::make_shared<M::R2Score>(M::R2ScoreOptions{.num_outputs = classes});
  if (name == "f1_score" || name == "fbeta_score") {
    M::FBetaOptions f{
        .average = get("micro", 0) != 0 ? "micro" : "macro", .beta = get("beta", 1.0), .num_classes = classes};
    if (o.count("threshold")) f.threshold = o.at("threshold");
    return std::make_shared<M::FBetaScore>(f);
  }
  if (name == "one_hot_mean_io_u") return std::make_shared<M::OneHotMeanIoU>(classes);
  if (name == "binary_io_u") return std::make_shared<M::BinaryIoU>(std::vector<int>{0, 1}, get("threshold", 0.5));
  if (name == "precision_at_recall") return std::make_shared<M::PrecisionAtRecall>(get("value", 0.5), thresholds);
  if (name == "recall_at_precision") return std::make_shared<M::RecallAtPrecision>(get("value", 0.5), thresholds);
  if (name == "sensitivity_at_specificity")
    return std::make_shared<M::SensitivityAtSpecificity>(get("value", 0.5), thresholds);
  if (name == "specificity_at_sensitivity")
    return std::make_shared<M::SpecificityAtSensitivity>(get("value", 0.5), thresholds);
  if (name == "pearson_correlation") return std::make_shared<M::PearsonCorrelation>();
  if (name == "concordance_correlation") return std::make_shared<M::ConcordanceCorrelation>();
  if (name == "root_mean_squared_error") return std::make_shared<M::RootMeanSquaredError>();
  if (name == "true_positives") return std::make_shared<M::TruePositives>(get("threshold", 0.5));
  if (name == "cosine_similarity") return std::make_shared<M::CosineSimilarity>();
  if (name == "logcosh") return std::make_shared<M::LogCoshError>();
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5 || (std::string(argv[1]) != "loss" && std::string(argv[1]) != "metric")) {
    std::fprintf(stderr, "usage: %s loss|metric NAME N D [key=value ...] < values\n", argv[0]);
    return 2;
  }
  const std::string what = argv[1], name = argv[2];
  const std::int64_t n = std::atoll(argv[3]), d = std::atoll(argv[4]);
  std::map<std::string, double> options;
  for (int i = 5; i < argc; ++i) {
    const std::string kv = argv[i];
    const auto eq = kv.find('=');
    if (eq == std::string::npos) return 2;
    options[kv.substr(0, eq)] = std::atof(kv.c_str() + eq + 1);
  }
  const bool labels = options.count("labels") && options.at("labels") != 0;
  const std::int64_t label_length =
      options.count("label_length") ? static_cast<std::int64_t>(options.at("label_length")) : 0;
  std::vector<float> pred(static_cast<std::size_t>(n * d)),
      target(static_cast<std::size_t>(label_length ? n * label_length
                                      : labels     ? n
                                                   : n * d));
  for (auto* v : {&pred, &target})
    for (float& x : *v)
      if (!(std::cin >> x)) return 2;
  K::Tensor p = K::Tensor::from_vector({n, d}, pred);
  if (options.count("steps")) {
    const auto steps = static_cast<std::int64_t>(options.at("steps"));
    p = p.reshape({n, steps, d / steps});
  }
  K::Tensor t;
  if (label_length) {
    t = K::Tensor({n, label_length}, K::DType::int32, K::Device{});
    for (std::size_t i = 0; i < target.size(); ++i) t.data<std::int32_t>()[i] = static_cast<std::int32_t>(target[i]);
  } else if (labels) {
    t = K::Tensor({n}, K::DType::int32, K::Device{});
    for (std::int64_t i = 0; i < n; ++i) t.data<std::int32_t>()[i] = static_cast<std::int32_t>(target[i]);
  } else {
    t = K::Tensor::from_vector({n, d}, target);
  }
  auto backend = K::make_cpu_backend(1);
  try {
    if (what == "loss") {
      K::Tensor out({n}), no_grad;
      make_loss(name, options)->compute(*backend, p, t, out, no_grad, 1.f);
      for (float v : out.to_vector()) std::printf("%.9g\n", v);
      return 0;
    }
    auto metric = make_metric(name, d, options);
    if (!metric) {
      std::fprintf(stderr, "unknown metric %s\n", name.c_str());
      return 2;
    }
    std::printf("%.17g\n", metric->result(metric->shard_totals(*backend, p, t)));
  } catch (const K::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
