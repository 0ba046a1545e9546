// Prints Precision, Recall and AUC (several configurations, one "key value" line each) for
// predictions and targets read from stdin (N*D predictions, then N*D targets), for
// tests/python/test_confusion_metrics.py to compare with Keras.
//   confusion_metric_values N D < values
#include <kerascpp/kerascpp.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace K = kerascpp;
namespace M = kerascpp::metrics;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s N D < values\n", argv[0]);
    return 2;
  }
  const std::int64_t n = std::atoll(argv[1]), d = std::atoll(argv[2]);
  std::vector<float> pred(static_cast<std::size_t>(n * d)), target(pred.size());
  for (auto* v : {&pred, &target})
    for (float& x : *v)
      if (!(std::cin >> x)) return 2;
  const std::vector<std::pair<std::string, std::shared_ptr<M::Metric>>> metrics{
      {"precision", std::make_shared<M::Precision>()},
      {"recall", std::make_shared<M::Recall>()},
      {"precision_t0.3", std::make_shared<M::Precision>(M::PrecisionRecallOptions{.thresholds = 0.3f})},
      {"recall_t0.7", std::make_shared<M::Recall>(M::PrecisionRecallOptions{.thresholds = 0.7f})},
      {"precision_c1", std::make_shared<M::Precision>(M::PrecisionRecallOptions{.class_id = 1})},
      {"recall_c1", std::make_shared<M::Recall>(M::PrecisionRecallOptions{.class_id = 1})},
      {"auc_ROC_interpolation", std::make_shared<M::AUC>()},
      {"auc_PR_interpolation", std::make_shared<M::AUC>(M::AUCOptions{.curve = "PR"})},
      {"auc_ROC_minoring", std::make_shared<M::AUC>(M::AUCOptions{.summation_method = "minoring"})},
      {"auc_ROC_majoring", std::make_shared<M::AUC>(M::AUCOptions{.summation_method = "majoring"})},
      {"auc_PR_minoring", std::make_shared<M::AUC>(M::AUCOptions{.curve = "PR", .summation_method = "minoring"})},
      {"auc_PR_majoring", std::make_shared<M::AUC>(M::AUCOptions{.curve = "PR", .summation_method = "majoring"})},
      {"auc_t7_ROC", std::make_shared<M::AUC>(M::AUCOptions{.num_thresholds = 7})},
      {"auc_t7_PR", std::make_shared<M::AUC>(M::AUCOptions{.num_thresholds = 7, .curve = "PR"})},
      {"auc_logits", std::make_shared<M::AUC>(M::AUCOptions{.from_logits = true})},
  };
  auto backend = K::make_cpu_backend(1);
  const K::Tensor p = K::Tensor::from_vector({n, d}, pred), t = K::Tensor::from_vector({n, d}, target);
  for (const auto& [key, metric] : metrics)
    std::printf("%s %.17g\n", key.c_str(), metric->result(metric->shard_totals(*backend, p, t)));
  return 0;
}
