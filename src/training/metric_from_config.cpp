// Keras' metric objects in a compile_config ({"module": "keras.metrics", "class_name": ...,
// "config": {...}}, how Keras saves a metric made with arguments), rebuilt as kerascpp metrics:
// each class's config keys and Keras defaults mapped to kerascpp's options. An argument kerascpp
// does not have (a list of thresholds, top_k, multi_label, an axis other than -1, ...) is refused
// with a ValueError rather than dropped, since training on would log a different quantity.
#include <fmt/format.h>

#include "check.hpp"
#include "kerascpp/error.hpp"
#include "training/compile_config.hpp"
#include "training/metrics.hpp"

namespace kerascpp::detail {

namespace {

using Json = nlohmann::ordered_json;
using MetricPtr = std::shared_ptr<const metrics::Metric>;

// Reads one Keras metric config, refusing values kerascpp has no option for.
struct MetricConfig {
  const std::string& cls;
  const Json& c;

  double num(const char* key, double fallback) const {
    return c.contains(key) && c[key].is_number() ? c[key].get<double>() : fallback;
  }
  int integer(const char* key, int fallback) const {
    return c.contains(key) && c[key].is_number_integer() ? c[key].get<int>() : fallback;
  }
  bool flag(const char* key, bool fallback) const {
    return c.contains(key) && c[key].is_boolean() ? c[key].get<bool>() : fallback;
  }
  // Keras' None as -1 (class_id, ignore_class).
  int id_or_none(const char* key) const { return integer(key, -1); }
  std::vector<int> ids(const char* key, std::vector<int> fallback) const {
    return c.contains(key) && c[key].is_array() ? c[key].get<std::vector<int>>() : fallback;
  }
  void require(bool ok, const char* key, const char* what) const {
    KERASCPP_CHECK_VALUE(ok, "metric {} sets {} {}; kerascpp's {} has {} only", cls, key,
                         c.contains(key) ? c[key].dump() : std::string("(absent)"), cls, what);
  }
  void require_null(const char* key) const { require(!c.contains(key) || c[key].is_null(), key, "None"); }
  void require_last_axis() const { require(!c.contains("axis") || c["axis"] == Json(-1), "axis", "-1"); }
  // Keras' `thresholds`: one number (a list gives a vector-valued result, which logs cannot hold).
  float threshold(const char* key, double fallback) const {
    require(!c.contains(key) || c[key].is_null() || c[key].is_number(), key, "a single threshold");
    return static_cast<float>(num(key, fallback));
  }
};

MetricPtr mean_metric_from(const MetricConfig& m, const std::string& name) {
  using namespace metrics;
  const std::string& cls = m.cls;
  if (cls == "MeanSquaredError") return std::make_shared<MeanSquaredError>(name);
  if (cls == "MeanAbsoluteError") return std::make_shared<MeanAbsoluteError>(name);
  if (cls == "RootMeanSquaredError") return std::make_shared<RootMeanSquaredError>(name);
  if (cls == "MeanAbsolutePercentageError") return std::make_shared<MeanAbsolutePercentageError>(name);
  if (cls == "MeanSquaredLogarithmicError") return std::make_shared<MeanSquaredLogarithmicError>(name);
  if (cls == "LogCoshError") return std::make_shared<LogCoshError>(name);
  if (cls == "Poisson") return std::make_shared<Poisson>(name);
  if (cls == "KLDivergence") return std::make_shared<KLDivergence>(name);
  if (cls == "Hinge") return std::make_shared<Hinge>(name);
  if (cls == "SquaredHinge") return std::make_shared<SquaredHinge>(name);
  if (cls == "CategoricalHinge") return std::make_shared<CategoricalHinge>(name);
  if (cls == "Accuracy") return std::make_shared<Accuracy>(name);
  if (cls == "CategoricalAccuracy") return std::make_shared<CategoricalAccuracy>(name);
  if (cls == "SparseCategoricalAccuracy") return std::make_shared<SparseCategoricalAccuracy>(name);
  if (cls == "Sum") return std::make_shared<Sum>(name);
  if (cls == "Mean") return std::make_shared<Mean>(name);
  if (cls == "BinaryAccuracy") {
    m.require(m.num("threshold", 0.5) == 0.5, "threshold", "0.5");
    return std::make_shared<BinaryAccuracy>(name);
  }
  if (cls == "TopKCategoricalAccuracy") return std::make_shared<TopKCategoricalAccuracy>(m.integer("k", 5), name);
  if (cls == "SparseTopKCategoricalAccuracy") {
    m.require(!m.flag("from_sorted_ids", false), "from_sorted_ids", "False");
    return std::make_shared<SparseTopKCategoricalAccuracy>(m.integer("k", 5), name);
  }
  if (cls == "CosineSimilarity" || cls == "PearsonCorrelation" || cls == "ConcordanceCorrelation") {
    m.require_last_axis();
    if (cls == "CosineSimilarity") return std::make_shared<CosineSimilarity>(name);
    if (cls == "PearsonCorrelation") return std::make_shared<PearsonCorrelation>(name);
    return std::make_shared<ConcordanceCorrelation>(name);
  }
  const losses::CrossentropyOptions x{.from_logits = m.flag("from_logits", false),
                                      .label_smoothing = m.num("label_smoothing", 0.0)};
  if (cls == "BinaryCrossentropy") return std::make_shared<BinaryCrossentropy>(x, name);
  if (cls == "CategoricalCrossentropy") {
    m.require_last_axis();
    return std::make_shared<CategoricalCrossentropy>(x, name);
  }
  if (cls == "SparseCategoricalCrossentropy") {
    m.require_last_axis();
    m.require_null("ignore_class");
    return std::make_shared<SparseCategoricalCrossentropy>(x.from_logits, name);
  }
  return nullptr;
}

MetricPtr confusion_metric_from(const MetricConfig& m, const std::string& name) {
  using namespace metrics;
  const std::string& cls = m.cls;
  if (cls == "Precision" || cls == "Recall") {
    m.require_null("top_k");
    const PrecisionRecallOptions o{.thresholds = m.threshold("thresholds", 0.5), .class_id = m.id_or_none("class_id")};
    if (cls == "Precision") return std::make_shared<Precision>(o, name);
    return std::make_shared<Recall>(o, name);
  }
  if (cls == "TruePositives") return std::make_shared<TruePositives>(m.threshold("thresholds", 0.5), name);
  if (cls == "FalsePositives") return std::make_shared<FalsePositives>(m.threshold("thresholds", 0.5), name);
  if (cls == "TrueNegatives") return std::make_shared<TrueNegatives>(m.threshold("thresholds", 0.5), name);
  if (cls == "FalseNegatives") return std::make_shared<FalseNegatives>(m.threshold("thresholds", 0.5), name);
  if (cls == "AUC") {
    m.require(!m.flag("multi_label", false), "multi_label", "False");
    m.require_null("label_weights");
    m.require_null("thresholds");
    return std::make_shared<AUC>(AUCOptions{.num_thresholds = m.integer("num_thresholds", 200),
                                            .curve = m.c.value("curve", std::string("ROC")),
                                            .summation_method = m.c.value("summation_method", "interpolation"),
                                            .from_logits = m.flag("from_logits", false)},
                                 name);
  }
  const int n = m.integer("num_thresholds", 200), class_id = m.id_or_none("class_id");
  if (cls == "PrecisionAtRecall") return std::make_shared<PrecisionAtRecall>(m.num("recall", 0), n, class_id, name);
  if (cls == "RecallAtPrecision") return std::make_shared<RecallAtPrecision>(m.num("precision", 0), n, class_id, name);
  if (cls == "SensitivityAtSpecificity")
    return std::make_shared<SensitivityAtSpecificity>(m.num("specificity", 0), n, class_id, name);
  if (cls == "SpecificityAtSensitivity")
    return std::make_shared<SpecificityAtSensitivity>(m.num("sensitivity", 0), n, class_id, name);
  return nullptr;
}

MetricPtr iou_metric_from(const MetricConfig& m, const std::string& name) {
  using namespace metrics;
  const std::string& cls = m.cls;
  if (cls == "BinaryIoU")
    return std::make_shared<BinaryIoU>(m.ids("target_class_ids", {0, 1}), static_cast<float>(m.num("threshold", 0.5)),
                                       name);
  if (cls != "IoU" && cls != "MeanIoU" && cls != "OneHotIoU" && cls != "OneHotMeanIoU") return nullptr;
  m.require_last_axis();
  KERASCPP_CHECK_VALUE(m.c.contains("num_classes") && m.c["num_classes"].is_number_integer(),
                       "metric {} has no num_classes in its config", cls);
  const int classes = m.c["num_classes"].get<int>();
  const int ignore = m.id_or_none("ignore_class");
  if (cls == "OneHotIoU" || cls == "OneHotMeanIoU") {
    m.require(!m.flag("sparse_y_pred", false), "sparse_y_pred", "False (scores)");
    if (cls == "OneHotIoU") return std::make_shared<OneHotIoU>(classes, m.ids("target_class_ids", {}), ignore, name);
    return std::make_shared<OneHotMeanIoU>(classes, ignore, name);
  }
  const IoUOptions o{.ignore_class = ignore,
                     .sparse_y_true = m.flag("sparse_y_true", true),
                     .sparse_y_pred = m.flag("sparse_y_pred", true)};
  if (cls == "IoU") return std::make_shared<IoU>(classes, m.ids("target_class_ids", {}), o, name);
  return std::make_shared<MeanIoU>(classes, o, name);
}

// The metrics whose totals are sized by the model's output width: made at compile().
MetricPtr output_sized_metric_from(const MetricConfig& m, const std::string& name) {
  using namespace metrics;
  if (m.cls == "R2Score") {
    R2ScoreOptions o{.class_aggregation = m.c.value("class_aggregation", std::string("uniform_average")),
                     .num_regressors = m.integer("num_regressors", 0)};
    return std::make_shared<OutputSizedMetric>(name, [o, name](int width) mutable {
      o.num_outputs = width;
      return std::make_shared<R2Score>(o, name);
    });
  }
  if (m.cls != "F1Score" && m.cls != "FBetaScore") return nullptr;
  m.require(m.c.contains("average") && m.c["average"].is_string(), "average",
            "\"micro\", \"macro\" or \"weighted\" (None gives one value per class, which logs cannot hold)");
  FBetaOptions o;
  o.average = m.c["average"].get<std::string>();
  o.beta = m.num("beta", 1.0);
  if (m.c.contains("threshold") && m.c["threshold"].is_number()) o.threshold = m.c["threshold"].get<double>();
  const bool f1 = m.cls == "F1Score";
  return std::make_shared<OutputSizedMetric>(name, [o, name, f1](int width) mutable -> MetricPtr {
    o.num_classes = width;
    if (f1) return std::make_shared<F1Score>(o, name);
    return std::make_shared<FBetaScore>(o, name);
  });
}

// Keras' MeanMetricWrapper saves its function by name: the built-in losses kerascpp has.
MetricPtr wrapper_metric_from(const MetricConfig& m, const std::string& name) {
  if (m.cls != "MeanMetricWrapper") return nullptr;
  const Json fn = m.c.value("fn", Json());
  const bool named = fn.is_object() && fn.value("class_name", "") == "function" && fn.contains("config") &&
                     fn["config"].is_string() && fn.value("module", "") != "__main__";
  m.require(named, "fn", "a built-in loss function by name");
  return std::make_shared<metrics::MeanMetricWrapper>(losses::LossRef(fn["config"].get<std::string>().c_str()), name);
}

}  // namespace

std::shared_ptr<const metrics::Metric> metric_from_object(const nlohmann::ordered_json& j) {
  const std::string cls = j.value("class_name", "");
  const Json c = j.value("config", Json::object());
  KERASCPP_CHECK_VALUE(j.value("module", "keras.metrics") == "keras.metrics" && c.is_object(),
                       "metric {} is not one of keras.metrics", j.dump().substr(0, 120));
  const MetricConfig m{cls, c};
  const std::string name = c.value("name", to_snake_case(cls));
  for (auto from :
       {mean_metric_from, confusion_metric_from, iou_metric_from, output_sized_metric_from, wrapper_metric_from})
    if (MetricPtr metric = from(m, name)) return metric;
  throw ValueError(fmt::format("metric {} is not one kerascpp can rebuild", j.dump().substr(0, 120)));
}

}  // namespace kerascpp::detail
