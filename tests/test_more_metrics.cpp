// The metrics of issue 50 against float64 references written here from Keras' formulas: the
// means of a per-example value (MeanMetricWrapper, Accuracy, top-k, the regression, hinge and
// probabilistic metrics, the correlations), RootMeanSquaredError, Sum, R2Score, F1/FBeta, the
// IoU family, the four confusion counts and the rate-at-rate metrics; their totals add over
// shards (what replicas and workers rely on), and fit/evaluate under MirroredStrategy(2) logs
// what one device logs. (Keras' own values: tests/python/test_row_losses.py.)
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing.hpp"

namespace K = kerascpp;
namespace M = kerascpp::metrics;

namespace {

constexpr double kEps = 1e-7;

std::vector<float> uniform(std::size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

std::vector<float> one_hot(std::int64_t n, std::int64_t classes, unsigned seed) {
  std::vector<float> v(static_cast<std::size_t>(n * classes), 0.f);
  std::mt19937 gen(seed);
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i * classes + gen() % classes)] = 1.f;
  return v;
}

// The metric's value over (pred, target) as one shard, and as two shards whose totals are added
// (the engine's sum over replicas and batches): both must agree.
double value(const M::Metric& m, const K::Tensor& pred, const K::Tensor& target) {
  auto be = K::make_cpu_backend(1);
  const std::vector<double> whole = m.shard_totals(*be, pred, target);
  REQUIRE(whole.size() == m.num_totals());
  const std::int64_t half = pred.dim(0) / 2;
  std::vector<double> a = m.shard_totals(*be, pred.slice(0, half), target.slice(0, half));
  const std::vector<double> b = m.shard_totals(*be, pred.slice(half, pred.dim(0)), target.slice(half, pred.dim(0)));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  const double r = m.result(whole);
  CHECK(m.result(a) == doctest::Approx(r).epsilon(1e-9));
  return r;
}

using Row = std::vector<double>;
// The mean over rows of [n, d] of f(pred row, target row).
double mean_rows(const std::vector<float>& p, const std::vector<float>& t, std::int64_t n, std::int64_t d,
                 const std::function<double(const Row&, const Row&)>& f) {
  double s = 0;
  for (std::int64_t i = 0; i < n; ++i)
    s += f(Row(p.begin() + i * d, p.begin() + (i + 1) * d), Row(t.begin() + i * d, t.begin() + (i + 1) * d));
  return s / static_cast<double>(n);
}

double mean_elements(const Row& a, const Row& b, const std::function<double(double, double)>& f) {
  double s = 0;
  for (std::size_t j = 0; j < a.size(); ++j) s += f(a[j], b[j]);
  return s / static_cast<double>(a.size());
}

double mean_of(const Row& v) { return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()); }

}  // namespace

TEST_CASE("more metrics: means of per-example values equal their float64 formulas") {
  const std::int64_t n = 6, d = 4;
  const auto p = uniform(n * d, 0.1f, 1.f, 1), t = uniform(n * d, 0.1f, 1.f, 2);
  const K::Tensor P = K::Tensor::from_vector({n, d}, p), T = K::Tensor::from_vector({n, d}, t);
  auto elementwise = [&](const M::Metric& m, const std::function<double(double, double)>& f) {
    CAPTURE(m.name());
    CHECK(value(m, P, T) == doctest::Approx(mean_rows(p, t, n, d, [&](const Row& a, const Row& b) {
                              return mean_elements(a, b, f);
                            })).epsilon(1e-6));
  };
  elementwise(M::MeanSquaredError(), [](double x, double y) { return (x - y) * (x - y); });
  elementwise(M::MeanAbsolutePercentageError(), [](double x, double y) { return 100 * std::fabs(y - x) / y; });
  elementwise(M::MeanSquaredLogarithmicError(),
              [](double x, double y) { return std::pow(std::log(x + 1) - std::log(y + 1), 2); });
  elementwise(M::LogCoshError(), [](double x, double y) { return std::log(std::cosh(x - y)); });
  elementwise(M::Poisson(), [](double x, double y) { return x - y * std::log(x + kEps); });
  CHECK(value(M::RootMeanSquaredError(), P, T) ==
        doctest::Approx(std::sqrt(mean_rows(p, t, n, d, [](const Row& a, const Row& b) {
          return mean_elements(a, b, [](double x, double y) { return (x - y) * (x - y); });
        }))).epsilon(1e-6));
  CHECK(value(M::CosineSimilarity(), P, T) ==
        doctest::Approx(mean_rows(p, t, n, d, [](const Row& a, const Row& b) {
          return std::inner_product(a.begin(), a.end(), b.begin(), 0.0) /
                 std::sqrt(std::inner_product(a.begin(), a.end(), a.begin(), 0.0) *
                           std::inner_product(b.begin(), b.end(), b.begin(), 0.0));
        })).epsilon(1e-6));
  CHECK(value(M::PearsonCorrelation(), P, T) == doctest::Approx(mean_rows(p, t, n, d, [](const Row& a, const Row& b) {
                                                  const double ma = mean_of(a), mb = mean_of(b);
                                                  double sab = 0, saa = 0, sbb = 0;
                                                  for (std::size_t j = 0; j < a.size(); ++j) {
                                                    sab += (a[j] - ma) * (b[j] - mb);
                                                    saa += (a[j] - ma) * (a[j] - ma);
                                                    sbb += (b[j] - mb) * (b[j] - mb);
                                                  }
                                                  return sab / std::sqrt(saa * sbb);
                                                })).epsilon(1e-6));
  // Keras' concordance: 2·cov/(var_t + var_p + (mean_t − mean_p)² + ε), with its covariance term
  // centring the target on the prediction's mean.
  CHECK(value(M::ConcordanceCorrelation(), P, T) ==
        doctest::Approx(mean_rows(p, t, n, d, [](const Row& a, const Row& b) {
          const double ma = mean_of(a), mb = mean_of(b);
          double va = 0, vb = 0, cov = 0;
          for (std::size_t j = 0; j < a.size(); ++j) {
            va += (a[j] - ma) * (a[j] - ma) / static_cast<double>(a.size());
            vb += (b[j] - mb) * (b[j] - mb) / static_cast<double>(a.size());
            cov += (b[j] - ma) * (a[j] - ma) / static_cast<double>(a.size());
          }
          return 2 * cov / (va + vb + (ma - mb) * (ma - mb) + kEps);
        })).epsilon(1e-6));
  // Accuracy counts exact equality of elements; Sum adds every prediction.
  std::vector<float> same = t;
  same[0] = p[0], same[5] = p[5], same[9] = p[9];
  CHECK(value(M::Accuracy(), P, K::Tensor::from_vector({n, d}, same)) == doctest::Approx(3.0 / (n * d)));
  CHECK(value(M::Sum(), P, T) == doctest::Approx(std::accumulate(p.begin(), p.end(), 0.0)).epsilon(1e-7));
  CHECK(value(M::Mean(), P, T) ==
        doctest::Approx(std::accumulate(p.begin(), p.end(), 0.0) / static_cast<double>(p.size())).epsilon(1e-7));
  // Wrappers of a loss and of the user's own per-example function (here: each example's largest prediction).
  CHECK(value(M::MeanMetricWrapper(K::losses::Huber(0.5), "huber"), P, T) ==
        doctest::Approx(mean_rows(p, t, n, d, [](const Row& a, const Row& b) {
          return mean_elements(a, b, [](double x, double y) {
            const double e = std::fabs(x - y);
            return e <= 0.5 ? 0.5 * e * e : 0.5 * e - 0.125;
          });
        })).epsilon(1e-6));
  const M::MeanMetricWrapper largest(
      [](K::Backend&, const K::Tensor& pred, const K::Tensor&, K::Tensor& values) {
        const std::int64_t cols = pred.dim(1);
        for (std::int64_t i = 0; i < pred.dim(0); ++i)
          values.data<float>()[i] =
              *std::max_element(pred.data<float>() + i * cols, pred.data<float>() + (i + 1) * cols);
      },
      "largest");
  CHECK(value(largest, P, T) == doctest::Approx(mean_rows(p, t, n, d, [](const Row& a, const Row&) {
                                  return *std::max_element(a.begin(), a.end());
                                })).epsilon(1e-7));
  CHECK_THROWS_AS(M::MeanMetricWrapper(M::MeanMetricWrapper::Fn(), "empty"), K::ValueError);
}

TEST_CASE("more metrics: top-k categorical, hinge and crossentropy metrics") {
  const std::int64_t n = 8, d = 5;
  std::vector<float> p = uniform(n * d, 0.f, 1.f, 3);
  p[3] = p[4];  // a tie
  const auto t = one_hot(n, d, 4);
  const K::Tensor P = K::Tensor::from_vector({n, d}, p), T = K::Tensor::from_vector({n, d}, t);
  for (int k : {1, 2, 5}) {
    CAPTURE(k);
    const double want = mean_rows(p, t, n, d, [&](const Row& a, const Row& b) {
      const std::size_t label = static_cast<std::size_t>(std::max_element(b.begin(), b.end()) - b.begin());
      Row sorted = a;
      std::sort(sorted.rbegin(), sorted.rend());
      return a[label] >= sorted[static_cast<std::size_t>(k - 1)] ? 1.0 : 0.0;
    });
    CHECK(value(M::TopKCategoricalAccuracy(k), P, T) == doctest::Approx(want));
  }
  CHECK(value(M::Hinge(), P, T) == doctest::Approx(mean_rows(p, t, n, d, [](const Row& a, const Row& b) {
                                     return mean_elements(
                                         a, b, [](double x, double y) { return std::max(1 - (2 * y - 1) * x, 0.0); });
                                   })).epsilon(1e-6));
  CHECK(value(M::CategoricalCrossentropy(), P, T) ==
        doctest::Approx(mean_rows(p, t, n, d, [](const Row& a, const Row& b) {
          const double s = std::accumulate(a.begin(), a.end(), 0.0);
          double l = 0;
          for (std::size_t j = 0; j < a.size(); ++j) l -= b[j] * std::log(std::max(a[j] / s, kEps));
          return l;
        })).epsilon(1e-5));
  CHECK_THROWS_AS(M::TopKCategoricalAccuracy(0), K::ValueError);
}

TEST_CASE("more metrics: R2Score, F1Score and FBetaScore equal their formulas") {
  const std::int64_t n = 10, c = 3;
  const auto y = uniform(n * c, -1.f, 2.f, 5), yhat = uniform(n * c, -1.f, 2.f, 6);
  std::vector<double> r2(c);
  for (std::int64_t j = 0; j < c; ++j) {
    double mean = 0, ss_tot = 0, ss_res = 0;
    for (std::int64_t i = 0; i < n; ++i) mean += y[i * c + j] / static_cast<double>(n);
    for (std::int64_t i = 0; i < n; ++i) {
      ss_tot += std::pow(y[i * c + j] - mean, 2);
      ss_res += std::pow(static_cast<double>(y[i * c + j]) - yhat[i * c + j], 2);
    }
    r2[j] = 1 - ss_res / ss_tot;
  }
  const K::Tensor Y = K::Tensor::from_vector({n, c}, y), Yh = K::Tensor::from_vector({n, c}, yhat);
  CHECK(value(M::R2Score({.num_outputs = 3}), Yh, Y) == doctest::Approx(mean_of(r2)).epsilon(1e-9));
  // Adjusted R² with 2 regressors over the n·c values, as Keras counts them.
  const double samples = static_cast<double>(n * c);
  CHECK(value(M::R2Score({.num_regressors = 2, .num_outputs = 3}), Yh, Y) ==
        doctest::Approx(1 - (1 - mean_of(r2)) * (samples - 1) / (samples - 3)).epsilon(1e-9));
  CHECK_THROWS_WITH_AS(value(M::R2Score(), Yh, Y), doctest::Contains("num_outputs"), K::ShapeError);

  const auto scores = uniform(n * c, 0.f, 1.f, 7);
  const auto labels = one_hot(n, c, 8);
  const K::Tensor S = K::Tensor::from_vector({n, c}, scores), L = K::Tensor::from_vector({n, c}, labels);
  for (double beta : {1.0, 0.5})
    for (const char* average : {"micro", "macro", "weighted"})
      for (bool argmax : {true, false}) {
        CAPTURE(beta);
        CAPTURE(average);
        CAPTURE(argmax);
        std::vector<double> tp(c), fp(c), fn(c);
        for (std::int64_t i = 0; i < n; ++i) {
          const float top = *std::max_element(scores.begin() + i * c, scores.begin() + (i + 1) * c);
          for (std::int64_t j = 0; j < c; ++j) {
            const bool pos = argmax ? scores[i * c + j] == top : scores[i * c + j] > 0.4f;
            const bool truth = labels[i * c + j] != 0;
            tp[j] += pos && truth, fp[j] += pos && !truth, fn[j] += !pos && truth;
          }
        }
        auto f = [&](double a, double b, double e) {
          const double pr = a / (a + b + kEps), re = a / (a + e + kEps);
          return (1 + beta * beta) * pr * re / (beta * beta * pr + re + kEps);
        };
        double want = 0;
        if (std::string(average) == "micro") {
          want = f(std::accumulate(tp.begin(), tp.end(), 0.0), std::accumulate(fp.begin(), fp.end(), 0.0),
                   std::accumulate(fn.begin(), fn.end(), 0.0));
        } else {
          double wsum = 0;
          for (std::int64_t j = 0; j < c; ++j) {
            const double w = std::string(average) == "weighted" ? tp[j] + fn[j] : 1.0;
            want += f(tp[j], fp[j], fn[j]) * w;
            wsum += w;
          }
          want /= std::string(average) == "weighted" ? wsum + kEps : wsum;
        }
        M::FBetaOptions o{.average = average, .beta = beta, .num_classes = 3};
        if (!argmax) o.threshold = 0.4;
        CHECK(value(M::FBetaScore(o), S, L) == doctest::Approx(want).epsilon(1e-9));
      }
  CHECK_THROWS_WITH_AS(M::F1Score({.average = "none"}), doctest::Contains("average"), K::ValueError);
  CHECK_THROWS_AS(M::FBetaScore({.beta = 0}), K::ValueError);
}

TEST_CASE("more metrics: the IoU family equals the IoU of a confusion matrix counted here") {
  const std::int64_t n = 12, c = 3;
  std::mt19937 gen(9);
  std::vector<float> truth(n), guess(n);
  for (auto& v : truth) v = static_cast<float>(gen() % c);
  for (auto& v : guess) v = static_cast<float>(gen() % c);
  truth[4] = 7;  // out of range: left out, as Keras masks it
  auto iou_of = [&](const std::vector<int>& ids, int ignore) {
    std::vector<std::vector<double>> cm(c, std::vector<double>(c));
    for (std::int64_t i = 0; i < n; ++i) {
      const int a = static_cast<int>(truth[i]), b = static_cast<int>(guess[i]);
      if (a >= c || b >= c || a == ignore) continue;
      cm[a][b] += 1;
    }
    double sum = 0, valid = 0;
    for (int k : ids) {
      double row = 0, col = 0;
      for (int j = 0; j < c; ++j) row += cm[k][j], col += cm[j][k];
      const double den = row + col - cm[k][k];
      if (den > 0) sum += cm[k][k] / (den + kEps), valid += 1;
    }
    return sum / (valid + kEps);
  };
  const K::Tensor T = K::Tensor::from_vector({n}, truth), G = K::Tensor::from_vector({n}, guess);
  CHECK(value(M::IoU(3, {0, 2}), G, T) == doctest::Approx(iou_of({0, 2}, -1)).epsilon(1e-9));
  CHECK(value(M::MeanIoU(3), G, T) == doctest::Approx(iou_of({0, 1, 2}, -1)).epsilon(1e-9));
  CHECK(value(M::MeanIoU(3, {.ignore_class = 1}), G, T) == doctest::Approx(iou_of({0, 1, 2}, 1)).epsilon(1e-9));
  // One-hot targets and score predictions give the same classes by argmax.
  truth[4] = 0;
  std::vector<float> hot(n * c, 0.f), scores(n * c, 0.f);
  for (std::int64_t i = 0; i < n; ++i) {
    hot[i * c + static_cast<std::int64_t>(truth[i])] = 1.f;
    for (std::int64_t j = 0; j < c; ++j) scores[i * c + j] = j == static_cast<std::int64_t>(guess[i]) ? 0.8f : 0.1f;
  }
  const K::Tensor H = K::Tensor::from_vector({n, c}, hot), S = K::Tensor::from_vector({n, c}, scores);
  CHECK(value(M::OneHotMeanIoU(3), S, H) == doctest::Approx(iou_of({0, 1, 2}, -1)).epsilon(1e-9));
  CHECK(value(M::OneHotIoU(3, {1}), S, H) == doctest::Approx(iou_of({1}, -1)).epsilon(1e-9));
  // BinaryIoU thresholds the predictions: pred >= 0.5 is class 1.
  const std::vector<float> probs = {0.9f, 0.2f, 0.5f, 0.4f, 0.7f, 0.1f}, bits = {1, 0, 0, 1, 1, 0};
  // (truth, guess): (1,1) (0,0) (0,1) (1,0) (1,1) (0,0): class 0: TP 2, FP 1, FN 1; class 1: TP 2, FP 1, FN 1.
  CHECK(value(M::BinaryIoU(), K::Tensor::from_vector({6}, probs), K::Tensor::from_vector({6}, bits)) ==
        doctest::Approx((2 / (4 + kEps) + 2 / (4 + kEps)) / (2 + kEps)).epsilon(1e-9));
  CHECK_THROWS_WITH_AS(M::IoU(3, {3}), doctest::Contains("out of range"), K::ValueError);
}

TEST_CASE("more metrics: confusion counts and the rate-at-rate metrics equal a brute-force count") {
  const std::int64_t n = 40;
  const auto p = uniform(n, 0.f, 1.f, 10);
  std::vector<float> t(n);
  std::mt19937 gen(11);
  for (auto& v : t) v = static_cast<float>(gen() % 2);
  const K::Tensor P = K::Tensor::from_vector({n}, p), T = K::Tensor::from_vector({n}, t);
  auto counts = [&](double th) {
    std::array<double, 4> c{};  // TP, FP, TN, FN
    for (std::int64_t i = 0; i < n; ++i) {
      const bool pos = p[i] > th, truth = t[i] != 0;
      c[pos ? (truth ? 0 : 1) : (truth ? 3 : 2)] += 1;
    }
    return c;
  };
  const auto c = counts(0.3);
  CHECK(value(M::TruePositives(0.3f), P, T) == c[0]);
  CHECK(value(M::FalsePositives(0.3f), P, T) == c[1]);
  CHECK(value(M::TrueNegatives(0.3f), P, T) == c[2]);
  CHECK(value(M::FalseNegatives(0.3f), P, T) == c[3]);
  auto div = [](double a, double b) { return b == 0 ? 0.0 : a / b; };
  auto best = [&](int T, double value, int dependent, int constrained) {
    // rates: 0 precision, 1 recall, 2 specificity
    double out = 0;
    for (int i = 0; i < T; ++i) {
      const auto k = counts(static_cast<float>(static_cast<double>(i) / (T - 1)));
      const double rates[3] = {div(k[0], k[0] + k[1]), div(k[0], k[0] + k[3]), div(k[2], k[2] + k[1])};
      if (rates[constrained] >= value) out = std::max(out, rates[dependent]);
    }
    return out;
  };
  CHECK(value(M::PrecisionAtRecall(0.8, 50), P, T) == doctest::Approx(best(50, 0.8, 0, 1)));
  CHECK(value(M::RecallAtPrecision(0.6, 50), P, T) == doctest::Approx(best(50, 0.6, 1, 0)));
  CHECK(value(M::SensitivityAtSpecificity(0.5), P, T) == doctest::Approx(best(200, 0.5, 1, 2)));
  CHECK(value(M::SpecificityAtSensitivity(0.7), P, T) == doctest::Approx(best(200, 0.7, 2, 1)));
  CHECK(best(50, 0.8, 0, 1) > 0);  // the constraint is reachable: the check above is not of zeros
  CHECK_THROWS_AS(M::PrecisionAtRecall(1.5), K::ValueError);
}

TEST_CASE("more metrics: by name in compile, and the same logs over 2 replicas as 1") {
  const std::int64_t n = 96, c = 3;
  auto blobs = K::testing::make_blobs(n, static_cast<int>(c), 4, 12);
  K::Tensor hot({n, c});
  hot.fill(0.f);
  for (std::int64_t i = 0; i < n; ++i) hot.data<float>()[i * c + blobs.y.data<std::int32_t>()[i]] = 1.f;
  std::vector<K::Logs> logged;
  const std::vector<const char*> names = {
      "top_k_categorical_accuracy", "kl_divergence", "sum",     "true_positives",    "pearson_correlation",
      "root_mean_squared_error",    "mape",          "logcosh", "categorical_hinge", "accuracy"};
  for (int replicas : {1, 2}) {
    K::set_random_seed(5);
    auto in = K::Input({4});
    K::Model model(in, K::layers::Dense(3, {.activation = "softmax"})(K::layers::Dense(6)(in)));
    std::vector<M::MetricRef> metrics(names.begin(), names.end());
    metrics.insert(metrics.end(), {M::R2Score({.num_outputs = 3}), M::F1Score({.num_classes = 3}), M::OneHotMeanIoU(3),
                                   M::SensitivityAtSpecificity(0.5), M::PrecisionAtRecall(0.5, 50),
                                   M::FBetaScore({.beta = 2.0, .num_classes = 3})});
    model.compile({.optimizer = "sgd",
                   .loss = "categorical_focal_crossentropy",
                   .metrics = metrics,
                   .distribute = K::distribute::MirroredStrategy<>(replicas)});
    logged.push_back(model.evaluate(K::Dataset::from_tensor_slices(blobs.x, hot).batch(32), {.verbose = 0}));
  }
  std::vector<std::string> keys(names.begin(), names.end());
  keys.insert(keys.end(), {"loss", "r2_score", "f1_score", "one_hot_mean_io_u", "sensitivity_at_specificity",
                           "precision_at_recall", "fbeta_score"});
  for (const std::string& key : keys) {
    CAPTURE(key);
    CHECK(logged[1][key] == doctest::Approx(logged[0][key]).epsilon(1e-6));
  }
  CHECK(logged[0]["one_hot_mean_io_u"] > 0);
  CHECK(logged[0]["true_positives"] > 0);
}

TEST_CASE("more metrics: every name docs/catalogue.md lists resolves in compile()") {
  const std::vector<const char*> names = {"auc",
                                          "binary_accuracy",
                                          "binary_crossentropy",
                                          "categorical_accuracy",
                                          "categorical_crossentropy",
                                          "categorical_hinge",
                                          "concordance_correlation",
                                          "cosine_similarity",
                                          "false_negatives",
                                          "false_positives",
                                          "hinge",
                                          "kl_divergence",
                                          "kld",
                                          "logcosh",
                                          "log_cosh_error",
                                          "mean",
                                          "mae",
                                          "mean_absolute_error",
                                          "mape",
                                          "mean_absolute_percentage_error",
                                          "mse",
                                          "mean_squared_error",
                                          "msle",
                                          "mean_squared_logarithmic_error",
                                          "pearson_correlation",
                                          "poisson",
                                          "precision",
                                          "r2_score",
                                          "recall",
                                          "root_mean_squared_error",
                                          "sparse_categorical_accuracy",
                                          "sparse_categorical_crossentropy",
                                          "sparse_top_k_categorical_accuracy",
                                          "squared_hinge",
                                          "sum",
                                          "top_k_categorical_accuracy",
                                          "true_negatives",
                                          "true_positives",
                                          "accuracy",
                                          "acc"};
  auto in = K::Input({2});
  K::Model model(in, K::layers::Dense(1)(in));
  model.compile({.optimizer = "sgd", .loss = "mse", .metrics = std::vector<M::MetricRef>(names.begin(), names.end())});
  CHECK(model.metrics_names().size() == names.size() + 1);  // "loss" first
  K::Model other(in, K::layers::Dense(1)(in));
  CHECK_THROWS_WITH_AS(other.compile({.optimizer = "sgd", .loss = "mse", .metrics = {"f1_score"}}),
                       doctest::Contains("unknown metric 'f1_score'"), K::ValueError);
}
