// Precision, Recall and AUC: the Backend's confusion counts against counting every threshold by
// hand (random data with ties, values exactly at thresholds, unsorted thresholds, class_id), the
// metrics' values against Keras' formulas written out here in double, the value logged by
// evaluate() against the same formulas on the whole dataset's predictions (counts summed over
// batches, not per-batch values averaged), 2 replicas = 1, and bad arguments.
// Keras itself: tests/python/test_confusion_metrics.py.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing.hpp"
#include "temp_dir.hpp"

namespace K = kerascpp;
namespace KT = kerascpp::testing;

namespace {

struct Counts {
  std::vector<double> tp, fp, tn, fn;
};

// Every element against every threshold, in double: positive when target != 0, predicted
// positive when pred > threshold.
Counts count_by_hand(const std::vector<float>& pred, const std::vector<float>& target,
                     const std::vector<double>& thresholds, std::size_t stride = 1, std::size_t offset = 0) {
  Counts c;
  for (double t : thresholds) {
    double tp = 0, fp = 0, tn = 0, fn = 0;
    for (std::size_t i = offset; i < pred.size(); i += stride) {
      const bool positive = target[i] != 0.f, predicted = static_cast<double>(pred[i]) > t;
      tp += positive && predicted;
      fp += !positive && predicted;
      tn += !positive && !predicted;
      fn += positive && !predicted;
    }
    c.tp.push_back(tp);
    c.fp.push_back(fp);
    c.tn.push_back(tn);
    c.fn.push_back(fn);
  }
  return c;
}

std::vector<double> flat(const Counts& c) {
  std::vector<double> out;
  for (const auto* v : {&c.tp, &c.fp, &c.tn, &c.fn}) out.insert(out.end(), v->begin(), v->end());
  return out;
}

// Keras' AUC thresholds: −ε, i/(T−1) for 0 < i < T−1, 1+ε.
std::vector<double> keras_thresholds(int t) {
  std::vector<double> th{-1e-7};
  for (int i = 1; i < t - 1; ++i) th.push_back(i / double(t - 1));
  th.push_back(1 + 1e-7);
  return th;
}

double no_nan(double a, double b) { return b == 0 ? 0 : a / b; }

// keras/src/metrics/confusion_metrics.py AUC.result() and interpolate_pr_auc(), in double.
double keras_auc(const Counts& c, const std::string& curve, const std::string& method) {
  const std::size_t n = c.tp.size();
  double area = 0;
  if (curve == "PR" && method == "interpolation") {
    for (std::size_t i = 0; i + 1 < n; ++i) {
      double dtp = c.tp[i] - c.tp[i + 1];
      double p0 = c.tp[i] + c.fp[i], p1 = c.tp[i + 1] + c.fp[i + 1];
      double slope = no_nan(dtp, std::max(p0 - p1, 0.0));
      double intercept = c.tp[i + 1] - slope * p1;
      double ratio = (p0 > 0 && p1 > 0) ? no_nan(p0, std::max(p1, 0.0)) : 1.0;
      area += no_nan(slope * (dtp + intercept * std::log(ratio)), std::max(c.tp[i + 1] + c.fn[i + 1], 0.0));
    }
    return area;
  }
  std::vector<double> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) {
    double recall = no_nan(c.tp[i], c.tp[i] + c.fn[i]);
    if (curve == "ROC") {
      x[i] = no_nan(c.fp[i], c.fp[i] + c.tn[i]);
      y[i] = recall;
    } else {
      x[i] = recall;
      y[i] = no_nan(c.tp[i], c.tp[i] + c.fp[i]);
    }
  }
  for (std::size_t i = 0; i + 1 < n; ++i) {
    double h = method == "interpolation" ? (y[i] + y[i + 1]) / 2
               : method == "minoring"    ? std::min(y[i], y[i + 1])
                                         : std::max(y[i], y[i + 1]);
    area += (x[i] - x[i + 1]) * h;
  }
  return area;
}

// Predictions on a coarse grid (many ties) that includes 0, 1, 0.5 (Precision's threshold:
// not above it) and values that are never exactly an AUC threshold of T = 200 or 7 (so
// Keras' float32 bucketing and the double comparison agree). Also one value above 1 and one
// below 0, which AUC clips.
struct Data {
  std::vector<float> pred, target;
};
Data scored_data(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  const std::vector<float> grid{0.f, 1.f, 0.5f, 0.123f, 0.2503f, 0.377f, 0.61f, 0.7777f, 0.91f, 0.999f, 0.0421f};
  Data d;
  for (std::size_t i = 0; i < n; ++i) {
    float p = grid[gen() % grid.size()];
    d.pred.push_back(p);
    // Positives likelier at high scores, so the AUC is neither 0.5 nor 1.
    d.target.push_back((gen() % 100) < 20 + 60 * p ? 1.f : 0.f);
  }
  d.pred[3] = 1.5f;
  d.target[3] = 1.f;
  d.pred[5] = -0.25f;
  return d;
}

}  // namespace

TEST_CASE("confusion counts: every threshold counted by hand, ties and values at a threshold included") {
  auto be = K::make_cpu_backend(2);
  Data d = scored_data(301, 5);
  const std::int64_t n = static_cast<std::int64_t>(d.pred.size());
  K::Tensor pred = K::Tensor::from_vector({n}, d.pred), target = K::Tensor::from_vector({n, 1}, d.target);
  SUBCASE("explicit thresholds, unsorted and repeated") {
    std::vector<float> th{0.5f, 0.f, 0.91f, 0.5f, 1.f, 0.3f};
    std::vector<double> thd(th.begin(), th.end());
    CHECK(be->confusion_counts(pred, target, th, 1, 0) == flat(count_by_hand(d.pred, d.target, thd)));
  }
  SUBCASE("a column of [N/3, 3] (class_id)") {
    d.pred.pop_back();  // 300 = 100 rows of 3
    d.target.pop_back();
    K::Tensor p3 = K::Tensor::from_vector({n / 3, 3}, d.pred), t3 = K::Tensor::from_vector({n / 3, 3}, d.target);
    for (std::size_t c = 0; c < 3; ++c)
      CHECK(be->confusion_counts(p3, t3, {0.5f}, 3, static_cast<std::int64_t>(c)) ==
            flat(count_by_hand(d.pred, d.target, {0.5}, 3, c)));
  }
  SUBCASE("Keras' evenly spaced AUC thresholds") {
    std::vector<float> clipped = d.pred;  // Keras clips to [0, 1] first
    for (float& p : clipped) p = std::clamp(p, 0.f, 1.f);
    for (int t : {2, 7, 200}) {
      CAPTURE(t);
      CHECK(be->even_confusion_counts(pred, target, t) == flat(count_by_hand(clipped, d.target, keras_thresholds(t))));
    }
  }
  SUBCASE("bad calls") {
    CHECK_THROWS_AS(be->confusion_counts(pred, target, {}, 1, 0), K::ValueError);
    CHECK_THROWS_AS(be->confusion_counts(pred, target, {std::nanf("")}, 1, 0), K::ValueError);
    CHECK_THROWS_AS(be->confusion_counts(pred, target, {0.5f}, 2, 0), K::ShapeError);  // 301 is odd
    CHECK_THROWS_AS(be->confusion_counts(pred, K::Tensor::from_vector({2}, {0.f, 1.f}), {0.5f}, 1, 0), K::ShapeError);
    CHECK_THROWS_AS(be->even_confusion_counts(pred, target, 1), K::ValueError);
  }
}

TEST_CASE("Precision, Recall and AUC: values from the summed counts follow Keras' formulas") {
  auto be = K::make_cpu_backend(1);
  Data d = scored_data(400, 11);
  const std::int64_t n = static_cast<std::int64_t>(d.pred.size());
  K::Tensor pred = K::Tensor::from_vector({n, 1}, d.pred), target = K::Tensor::from_vector({n, 1}, d.target);
  auto value = [&](const K::metrics::Metric& m) { return m.result(m.shard_totals(*be, pred, target)); };

  for (float th : {0.5f, 0.f, 0.377f, 1.f}) {
    CAPTURE(th);
    Counts c = count_by_hand(d.pred, d.target, {th});
    CHECK(value(K::metrics::Precision({.thresholds = th})) == doctest::Approx(no_nan(c.tp[0], c.tp[0] + c.fp[0])));
    CHECK(value(K::metrics::Recall({.thresholds = th})) == doctest::Approx(no_nan(c.tp[0], c.tp[0] + c.fn[0])));
  }
  // At threshold 1 only the 1.5 (a positive) is predicted positive: Precision does not clip.
  CHECK(value(K::metrics::Precision({.thresholds = 1.f})) == 1.0);

  for (int t : {200, 7}) {
    for (const char* curve : {"ROC", "PR"})
      for (const char* method : {"interpolation", "minoring", "majoring"}) {
        CAPTURE(t);
        CAPTURE(curve);
        CAPTURE(method);
        // AUC clips predictions to [0, 1] before bucketing, so the reference counts clipped values.
        Data clipped = d;
        for (float& p : clipped.pred) p = std::clamp(p, 0.f, 1.f);
        double want = keras_auc(count_by_hand(clipped.pred, d.target, keras_thresholds(t)), curve, method);
        double got = value(K::metrics::AUC({.num_thresholds = t, .curve = curve, .summation_method = method}));
        CHECK(got == doctest::Approx(want).epsilon(1e-12));
        CHECK(got > (std::string(curve) == "ROC" ? 0.6 : 0.3));  // informative: not a comparison of zeros
      }
  }
  // from_logits: a sigmoid first. Logits log(q/(1−q)) of q = p clipped to [0.001, 0.999] come
  // back as q up to rounding, and no q is near a threshold: the same buckets, the same AUC.
  std::vector<float> logits;
  for (float p : d.pred) {
    const double q = std::clamp(static_cast<double>(p), 0.001, 0.999);
    logits.push_back(static_cast<float>(std::log(q / (1 - q))));
  }
  K::metrics::AUC from_logits({.from_logits = true});
  double got = from_logits.result(from_logits.shard_totals(*be, K::Tensor::from_vector({n, 1}, logits), target));
  CHECK(got > 0.5);
  CHECK(got == value(K::metrics::AUC()));
  // A metric made of counts refuses shard_sums (the engine never calls it).
  CHECK_THROWS_AS(K::metrics::AUC().shard_sums(*be, pred, target), K::StateError);
}

TEST_CASE("Precision, Recall and AUC: evaluate() logs the whole dataset's value; 2 replicas give 1's") {
  const std::int64_t n = 149;
  auto data = KT::make_blobs(n, 2, 3, 4);
  // Binary float targets from the blob ids.
  K::Tensor y01({n, 1});
  for (std::int64_t i = 0; i < n; ++i) y01.data<float>()[i] = static_cast<float>(data.y.data<std::int32_t>()[i]);
  // 4 batches of 37, then one of 1 row: under 2 replicas one shard of it is empty.
  auto ds = [&] { return K::Dataset::from_tensor_slices(data.x, y01).batch(37); };
  std::vector<K::Logs> logged;
  std::vector<float> preds;
  for (int replicas : {1, 2}) {
    K::set_random_seed(3);
    auto in = K::Input({3});
    K::Model model(in, K::layers::Dense(1, {.activation = "sigmoid"})(K::layers::Dense(4)(in)));
    model.compile({.optimizer = "sgd",
                   .loss = "binary_crossentropy",
                   .metrics = {"precision", "recall", "auc", K::metrics::AUC({.curve = "PR"}, "pr_auc"),
                               K::metrics::Precision({.thresholds = 0.3f}, "p03")},
                   .distribute = K::distribute::MirroredStrategy<>(replicas)});
    logged.push_back(model.evaluate(ds(), {.verbose = 0}));
    if (replicas == 1) preds = model.predict(ds(), {.verbose = 0}).to_vector();
  }
  std::vector<float> target = y01.to_vector();
  Counts half = count_by_hand(preds, target, {0.5}), low = count_by_hand(preds, target, {0.3});
  CHECK(logged[0]["precision"] == doctest::Approx(no_nan(half.tp[0], half.tp[0] + half.fp[0])));
  CHECK(logged[0]["recall"] == doctest::Approx(no_nan(half.tp[0], half.tp[0] + half.fn[0])));
  CHECK(logged[0]["p03"] == doctest::Approx(no_nan(low.tp[0], low.tp[0] + low.fp[0])));
  Counts all = count_by_hand(preds, target, keras_thresholds(200));
  CHECK(logged[0]["auc"] == doctest::Approx(keras_auc(all, "ROC", "interpolation")).epsilon(1e-9));
  CHECK(logged[0]["pr_auc"] == doctest::Approx(keras_auc(all, "PR", "interpolation")).epsilon(1e-9));
  CHECK(logged[0]["auc"] > 0.0);
  CHECK(logged[0]["recall"] > 0.0);
  for (const char* key : {"precision", "recall", "auc", "pr_auc", "p03"}) {
    CAPTURE(key);
    CHECK(logged[0][key] == logged[1][key]);  // exact: integer counts, the same result() on them
  }
}

TEST_CASE("Precision, Recall and AUC: bad arguments throw ValueError naming the metric and the fix") {
  namespace M = K::metrics;
  CHECK_THROWS_WITH_AS(M::Precision({.thresholds = 1.5f}), doctest::Contains("Precision: thresholds must be in [0, 1]"),
                       K::ValueError);
  CHECK_THROWS_WITH_AS(M::Recall({.thresholds = -0.1f}), doctest::Contains("Recall: thresholds must be in [0, 1]"),
                       K::ValueError);
  CHECK_THROWS_AS(M::Recall({.thresholds = std::nanf("")}), K::ValueError);
  CHECK_THROWS_WITH_AS(M::Precision({.class_id = -2}), doctest::Contains("Precision: class_id"), K::ValueError);
  CHECK_THROWS_WITH_AS(M::AUC({.num_thresholds = 1}), doctest::Contains("AUC: num_thresholds must be an integer > 1"),
                       K::ValueError);
  CHECK_THROWS_WITH_AS(M::AUC({.curve = "PRC"}), doctest::Contains("AUC: curve must be \"ROC\" or \"PR\""),
                       K::ValueError);
  CHECK_THROWS_WITH_AS(M::AUC({.summation_method = "trapezoid"}), doctest::Contains("AUC: summation_method"),
                       K::ValueError);
  CHECK_NOTHROW(M::AUC({.curve = "pr", .summation_method = "Minoring"}));  // Keras accepts any case
  auto be = K::make_cpu_backend(1);
  K::Tensor p = K::Tensor::from_vector({2, 2}, {0.1f, 0.9f, 0.8f, 0.2f});
  M::Precision third({.class_id = 2}, "p2");
  CHECK_THROWS_WITH_AS(third.shard_totals(*be, p, p), doctest::Contains("class_id 2"), K::ValueError);
  M::Recall second({.class_id = 1});
  CHECK(second.result(second.shard_totals(*be, p, K::Tensor::from_vector({2, 2}, {0.f, 1.f, 1.f, 1.f}))) == 0.5);
}

TEST_CASE("AUC, Precision and Nadam across a BackupAndRestore resume mid-epoch: the same logs and weights") {
  // The backup stores the epoch's running totals (AUC's 4·200 counts among them) and Nadam's
  // u_product; a run interrupted after batch 1 of epoch 1 and resumed must end as one that was not.
  kerascpp_test::TempDir tmp;
  auto data = KT::make_blobs(64, 2, 3, 8);
  K::Tensor y01({64, 1});
  for (std::int64_t i = 0; i < 64; ++i) y01.data<float>()[i] = static_cast<float>(data.y.data<std::int32_t>()[i]);
  auto ds = K::Dataset::from_tensor_slices(data.x, y01).batch(16);
  auto make = [](std::uint64_t seed) {
    K::set_random_seed(seed);
    auto in = K::Input({3});
    K::Model m(in, K::layers::Dense(1, {.activation = "sigmoid"})(K::layers::Dense(4)(in)));
    m.compile({.optimizer = K::optimizers::Nadam(0.01),
               .loss = "binary_crossentropy",
               .metrics = {"auc", "precision"},
               .distribute = K::distribute::MirroredStrategy<>(2)});
    return m;
  };
  K::Model whole = make(5);
  K::callbacks::History want = whole.fit(ds, {.epochs = 3, .verbose = 0});

  class StopAt : public K::callbacks::Callback {
   public:
    void on_train_batch_end(std::int64_t b, const K::Logs&) override {
      if (epoch_ == 1 && b == 1) model().stop_training = true;
    }
    void on_epoch_begin(int e, const K::Logs&) override { epoch_ = e; }

   private:
    int epoch_ = 0;
  };
  const std::string dir = tmp.file("backup");
  K::Model first = make(5);
  first.fit(ds,
            {.epochs = 3,
             .callbacks = {K::callbacks::BackupAndRestore(dir, {.save_freq = 1, .delete_checkpoint = false}), StopAt()},
             .verbose = 0});
  K::Model second = make(77);  // other initial weights: everything comes from the backup
  auto restore = std::make_shared<K::callbacks::BackupAndRestore>(dir);
  K::callbacks::History got = second.fit(ds, {.epochs = 3, .callbacks = {restore}, .verbose = 0});
  CHECK(restore->restored());
  CHECK(second.optimizer().iterations() == whole.optimizer().iterations());
  CHECK(got.history.at("auc").back() == want.history.at("auc").back());
  CHECK(got.history.at("precision").back() == want.history.at("precision").back());
  CHECK(want.history.at("auc").back() > 0.5);
  auto a = whole.get_weights(), b = second.get_weights();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].to_vector() == b[i].to_vector());
}
