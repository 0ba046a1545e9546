// The losses of TrainingKernels::row_loss and the overlap losses (Tversky, Dice): per-example
// values against a float64 reference written here from Keras' formulas, gradients against
// central differences of that reference, the edge cases (zero rows, zero targets, clipped
// probabilities), string names, argument checks and the .keras compile_config round trip.
// (Keras' own values: tests/python/test_row_losses.py.)
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing.hpp"
#include "temp_dir.hpp"

namespace K = kerascpp;

namespace {

using Row = std::vector<double>;
// One example's loss from its prediction and target rows (float64).
using Reference = std::function<double(const Row& p, const Row& t)>;
constexpr double kEps = 1e-7;

double mean_of(const Row& p, const Row& t, const std::function<double(double, double)>& f) {
  double s = 0;
  for (std::size_t j = 0; j < p.size(); ++j) s += f(p[j], t[j]);
  return s / static_cast<double>(p.size());
}

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

std::vector<float> softmax_rows(std::vector<float> v, std::int64_t classes) {
  for (std::size_t r = 0; r < v.size(); r += static_cast<std::size_t>(classes)) {
    double s = 0;
    for (std::int64_t j = 0; j < classes; ++j) s += std::exp(static_cast<double>(v[r + j]));
    for (std::int64_t j = 0; j < classes; ++j)
      v[r + j] = static_cast<float>(std::exp(static_cast<double>(v[r + j])) / s);
  }
  return v;
}

struct Computed {
  std::vector<float> loss, grad;
};

Computed run(const K::losses::Loss& loss, const K::Tensor& pred, const K::Tensor& target, bool with_grad = true) {
  auto be = K::make_cpu_backend(1);
  K::Tensor out({pred.dim(0)}), grad;
  if (with_grad) grad = K::Tensor(pred.shape());
  loss.compute(*be, pred, target, out, grad, 1.f);
  return {out.to_vector(), with_grad ? grad.to_vector() : std::vector<float>{}};
}

// Checks loss values against ref per example of [n, d] and, unless `values_only`, the gradient
// against central differences of ref (h = 1e-3 on float64 copies of the inputs).
void check_loss(const K::losses::Loss& loss, const std::vector<float>& p, const std::vector<float>& t, std::int64_t n,
                std::int64_t d, const Reference& ref, double tol = 1e-5, bool values_only = false) {
  CAPTURE(loss.name());
  const Computed c = run(loss, K::Tensor::from_vector({n, d}, p), K::Tensor::from_vector({n, d}, t), !values_only);
  for (std::int64_t i = 0; i < n; ++i) {
    Row pr(p.begin() + i * d, p.begin() + (i + 1) * d), tr(t.begin() + i * d, t.begin() + (i + 1) * d);
    CAPTURE(i);
    const double want = ref(pr, tr);
    CHECK(c.loss[static_cast<std::size_t>(i)] == doctest::Approx(want).epsilon(tol).scale(1.0));
    if (values_only) continue;
    for (std::int64_t j = 0; j < d; ++j) {
      CAPTURE(j);
      const double h = 1e-3;
      Row up = pr, down = pr;
      up[static_cast<std::size_t>(j)] += h;
      down[static_cast<std::size_t>(j)] -= h;
      const double numeric = (ref(up, tr) - ref(down, tr)) / (2 * h);
      CHECK(c.grad[static_cast<std::size_t>(i * d + j)] == doctest::Approx(numeric).epsilon(2e-3).scale(1.0));
    }
  }
}

}  // namespace

TEST_CASE("row losses: regression losses equal their float64 formulas, gradients their differences") {
  const std::int64_t n = 4, d = 3;
  const auto p = uniform(n * d, 0.2f, 2.f, 1), t = uniform(n * d, 0.1f, 2.f, 2);
  check_loss(K::losses::MeanAbsoluteError(), p, t, n, d, [](const Row& a, const Row& b) {
    return mean_of(a, b, [](double x, double y) { return std::fabs(x - y); });
  });
  check_loss(K::losses::MeanAbsolutePercentageError(), p, t, n, d, [](const Row& a, const Row& b) {
    return mean_of(a, b, [](double x, double y) { return 100 * std::fabs(y - x) / std::max(std::fabs(y), kEps); });
  });
  check_loss(K::losses::MeanSquaredLogarithmicError(), p, t, n, d, [](const Row& a, const Row& b) {
    return mean_of(a, b, [](double x, double y) {
      const double e = std::log(std::max(x, kEps) + 1) - std::log(std::max(y, kEps) + 1);
      return e * e;
    });
  });
  check_loss(K::losses::LogCosh(), p, t, n, d, [](const Row& a, const Row& b) {
    return mean_of(a, b, [](double x, double y) { return std::log(std::cosh(x - y)); });
  });
  check_loss(K::losses::Poisson(), p, t, n, d, [](const Row& a, const Row& b) {
    return mean_of(a, b, [](double x, double y) { return x - y * std::log(x + kEps); });
  });
  check_loss(K::losses::CosineSimilarity(), p, t, n, d, [](const Row& a, const Row& b) {
    const double ab = std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
    return -ab / std::sqrt(std::inner_product(a.begin(), a.end(), a.begin(), 0.0)) /
           std::sqrt(std::inner_product(b.begin(), b.end(), b.begin(), 0.0));
  });
}

TEST_CASE("row losses: probabilistic and hinge losses equal their float64 formulas") {
  const std::int64_t n = 4, d = 3;
  const auto probs = softmax_rows(uniform(n * d, -2.f, 2.f, 3), d);
  const auto target_probs = softmax_rows(uniform(n * d, -1.f, 1.f, 4), d);
  check_loss(K::losses::KLDivergence(), probs, target_probs, n, d, [](const Row& a, const Row& b) {
    double s = 0;
    for (std::size_t j = 0; j < a.size(); ++j) s += b[j] * std::log(b[j] / a[j]);
    return s;  // a sum over the last axis, not a mean
  });
  // 0/1 targets become −1/1 for the hinge losses; scores away from the hinge's kink at t·p = 1.
  const auto labels01 = one_hot(n, d, 5);
  const std::vector<float> scores = {0.3f, -0.4f, 1.6f, -1.5f, 0.2f, 0.7f, 2.1f, 0.4f, -0.2f, 0.5f, -0.6f, -1.3f};
  auto hinge = [](double x, double y) { return std::max(1 - (2 * y - 1) * x, 0.0); };
  check_loss(K::losses::Hinge(), scores, labels01, n, d,
             [&](const Row& a, const Row& b) { return mean_of(a, b, hinge); });
  check_loss(K::losses::SquaredHinge(), scores, labels01, n, d, [&](const Row& a, const Row& b) {
    return mean_of(a, b, [&](double x, double y) { return hinge(x, y) * hinge(x, y); });
  });
  // Targets already −1/1 (not all 0/1) are used as they are.
  std::vector<float> signs(labels01.size());
  std::transform(labels01.begin(), labels01.end(), signs.begin(), [](float y) { return 2 * y - 1; });
  check_loss(K::losses::Hinge(), scores, signs, n, d, [&](const Row& a, const Row& b) {
    return mean_of(a, b, [](double x, double y) { return std::max(1 - y * x, 0.0); });
  });
  check_loss(K::losses::CategoricalHinge(), scores, labels01, n, d, [](const Row& a, const Row& b) {
    double pos = 0, neg = -1e300;
    for (std::size_t j = 0; j < a.size(); ++j) {
      pos += b[j] * a[j];
      neg = std::max(neg, (1 - b[j]) * a[j]);
    }
    return std::max(neg - pos + 1, 0.0);
  });
}

TEST_CASE("row losses: focal and generalized crossentropies equal their float64 formulas") {
  const std::int64_t n = 4, d = 3;
  const auto logits = uniform(n * d, -2.f, 2.f, 6);
  const auto probs = softmax_rows(logits, d);
  const auto labels01 = one_hot(n, d, 7);
  auto sigmoid = [](double x) { return 1 / (1 + std::exp(-x)); };
  for (bool from_logits : {false, true})
    for (bool balancing : {false, true}) {
      CAPTURE(from_logits);
      CAPTURE(balancing);
      const K::losses::FocalOptions o{
          .apply_class_balancing = balancing, .alpha = 0.3, .gamma = 1.5, .from_logits = from_logits};
      check_loss(K::losses::BinaryFocalCrossentropy(o), from_logits ? logits : probs, labels01, n, d,
                 [&](const Row& a, const Row& b) {
                   return mean_of(a, b, [&](double x, double y) {
                     const double q = from_logits ? sigmoid(x) : x;
                     const double bce = -(y * std::log(q) + (1 - y) * std::log(1 - q));
                     const double pt = y * q + (1 - y) * (1 - q);
                     const double w = balancing ? y * 0.3 + (1 - y) * 0.7 : 1.0;
                     return w * std::pow(1 - pt, 1.5) * bce;
                   });
                 });
    }
  for (bool from_logits : {false, true}) {
    CAPTURE(from_logits);
    check_loss(K::losses::CategoricalFocalCrossentropy({.alpha = 0.4, .gamma = 2.0, .from_logits = from_logits}),
               from_logits ? logits : probs, labels01, n, d, [&](const Row& a, const Row& b) {
                 Row q = a;
                 double s = 0;
                 for (double& v : q) s += (v = from_logits ? std::exp(v) : v);
                 double loss = 0;
                 for (std::size_t j = 0; j < q.size(); ++j) {
                   const double o = q[j] / s;
                   loss -= 0.4 * b[j] * std::pow(1 - o, 2.0) * std::log(o);
                 }
                 return loss;
               });
  }
  // Label smoothing rewrites the targets as the crossentropies do: t(1 − s) + s/2.
  check_loss(K::losses::BinaryFocalCrossentropy({.gamma = 2.0, .label_smoothing = 0.2}), probs, labels01, n, d,
             [](const Row& a, const Row& b) {
               return mean_of(a, b, [](double x, double y) {
                 y = y * 0.8 + 0.1;
                 const double bce = -(y * std::log(x) + (1 - y) * std::log(1 - x));
                 return std::pow(1 - (y * x + (1 - y) * (1 - x)), 2.0) * bce;
               });
             });
  // Generalized crossentropy takes integer labels, one per row.
  K::Tensor labels({n}, K::DType::int32, K::Device{});
  for (std::int64_t i = 0; i < n; ++i) labels.data<std::int32_t>()[i] = static_cast<std::int32_t>((i * 2) % d);
  const Computed c =
      run(K::losses::CategoricalGeneralizedCrossEntropy(0.7), K::Tensor::from_vector({n, d}, probs), labels);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t y = (i * 2) % d;
    const double py = probs[static_cast<std::size_t>(i * d + y)];
    CHECK(c.loss[static_cast<std::size_t>(i)] == doctest::Approx((1 - std::pow(py, 0.7)) / 0.7).epsilon(1e-6));
    for (std::int64_t j = 0; j < d; ++j)
      CHECK(c.grad[static_cast<std::size_t>(i * d + j)] ==
            doctest::Approx(j == y ? -std::pow(py, -0.3) : 0.0).epsilon(1e-5));
  }
  labels.data<std::int32_t>()[2] = static_cast<std::int32_t>(d);
  CHECK_THROWS_AS(run(K::losses::CategoricalGeneralizedCrossEntropy(), K::Tensor::from_vector({n, d}, probs), labels),
                  K::ValueError);
}

TEST_CASE("row losses: Tversky and Dice are one value per shard, with the gradient of N times it") {
  const std::int64_t n = 3, d = 4;
  const auto p = uniform(n * d, 0.05f, 0.95f, 8), t = one_hot(n, d, 9);
  auto overlap = [&](double alpha, double beta, bool dice) {
    return [=](const std::vector<double>& a, const std::vector<double>& b) {
      double inter = 0, st = 0, sp = 0;
      for (std::size_t j = 0; j < a.size(); ++j) inter += a[j] * b[j], st += b[j], sp += a[j];
      if (dice) return 1 - 2 * inter / (st + sp + kEps);
      return 1 - inter / (inter + alpha * (st - inter) + beta * (sp - inter) + kEps);
    };
  };
  struct Case {
    std::shared_ptr<K::losses::Loss> loss;
    std::function<double(const std::vector<double>&, const std::vector<double>&)> ref;
  };
  std::vector<Case> cases = {{std::make_shared<K::losses::Tversky>(0.3, 0.7), overlap(0.3, 0.7, false)},
                             {std::make_shared<K::losses::Dice>(), overlap(0, 0, true)}};
  for (const Case& c : cases) {
    CAPTURE(c.loss->name());
    const Computed got = run(*c.loss, K::Tensor::from_vector({n, d}, p), K::Tensor::from_vector({n, d}, t));
    const std::vector<double> pd(p.begin(), p.end()), td(t.begin(), t.end());
    const double want = c.ref(pd, td);
    for (float v : got.loss) CHECK(v == doctest::Approx(want).epsilon(1e-6));
    for (std::size_t k = 0; k < pd.size(); ++k) {
      auto up = pd, down = pd;
      up[k] += 1e-4;
      down[k] -= 1e-4;
      // The engine's objective is Σ_n loss_n · grad_scale = N·L here (grad_scale 1).
      const double numeric = static_cast<double>(n) * (c.ref(up, td) - c.ref(down, td)) / 2e-4;
      CHECK(got.grad[k] == doctest::Approx(numeric).epsilon(1e-3));
    }
  }
}

TEST_CASE("row losses: Circle equals its float64 formula over the batch's pairs, gradient its differences") {
  const std::int64_t n = 6, e = 3;
  std::vector<float> p = uniform(n * e, -1.f, 1.f, 12);
  for (std::int64_t i = 0; i < n; ++i) {  // L2-normalized embeddings, as Keras expects
    double s = 0;
    for (std::int64_t c = 0; c < e; ++c) s += p[i * e + c] * p[i * e + c];
    for (std::int64_t c = 0; c < e; ++c) p[i * e + c] = static_cast<float>(p[i * e + c] / std::sqrt(s));
  }
  const std::vector<float> ids = {0, 1, 0, 2, 1, 0};  // class 2 has no positive pair: left out of the mean
  const double gamma = 8.0, m = 0.25;
  // The batch's Σ_i L_i / (rows with L_i > 0), from the formula of Keras' circle().
  auto total = [&](const std::vector<double>& q) {
    double sum = 0, valid = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      double pos = 0, neg = 0;
      bool any_pos = false, any_neg = false;
      for (std::int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (std::int64_t c = 0; c < e; ++c) s += q[i * e + c] * q[j * e + c];
        const double d = std::max(1 - s, 0.0);
        if (ids[i] == ids[j] && i != j) pos += std::exp(-gamma * std::max(m + d, 0.0) * (m - d)), any_pos = true;
        if (ids[i] != ids[j]) neg += std::exp(gamma * std::max(1 + m - d, 0.0) * (1 - m - d)), any_neg = true;
      }
      if (!any_pos || !any_neg) continue;
      sum += std::log1p(std::exp(std::log(pos) + std::log(neg)));
      valid += 1;
    }
    return sum / (valid + kEps);
  };
  const std::vector<double> pd(p.begin(), p.end());
  K::losses::Circle circle(gamma, m);
  K::Tensor labels = K::Tensor::from_vector({n}, std::vector<std::int32_t>{0, 1, 0, 2, 1, 0});
  const Computed c = run(circle, K::Tensor::from_vector({n, e}, p), labels);
  const double mean = std::accumulate(c.loss.begin(), c.loss.end(), 0.0) / static_cast<double>(n);
  CHECK(mean == doctest::Approx(total(pd)).epsilon(1e-5));
  CHECK(c.loss[3] == 0.f);  // the example without a positive pair
  for (std::size_t k = 0; k < pd.size(); ++k) {
    auto up = pd, down = pd;
    up[k] += 1e-5;
    down[k] -= 1e-5;
    // The engine's objective is Σ_n loss_n · grad_scale = N · the batch mean (grad_scale 1).
    CHECK(c.grad[k] == doctest::Approx(static_cast<double>(n) * (total(up) - total(down)) / 2e-5).epsilon(1e-3));
  }
  CHECK_THROWS_AS(K::losses::Circle(0.0), K::ValueError);
  CHECK(K::losses::LossRef("circle")->name() == "circle");
}

TEST_CASE("row losses: CTC equals the sum over every alignment, gradient its differences") {
  const std::int64_t n = 3, T = 4, C = 3, L = 3;
  const auto logits = uniform(n * T * C, -1.5f, 1.5f, 13);
  // Labels padded with 0 (the blank): [1, 2], [2, 2] (a repeat needs a blank between), [] (all blank).
  const std::vector<std::int32_t> labels = {1, 2, 0, 2, 2, 0, 0, 0, 0};
  // −log Σ over the C^T paths whose collapse (merge repeats, drop blanks) is the label sequence.
  auto nll = [&](const std::vector<double>& z, std::int64_t b) {
    std::vector<std::int64_t> want;
    for (std::int64_t i = 0; i < L; ++i)
      if (labels[static_cast<std::size_t>(b * L + i)] != 0) want.push_back(labels[static_cast<std::size_t>(b * L + i)]);
    double total = 0;
    for (std::int64_t path = 0; path < 81; ++path) {  // 3^4 paths
      std::vector<std::int64_t> seq, collapsed;
      double prob = 1;
      for (std::int64_t t = 0, code = path; t < T; ++t, code /= C) {
        const std::int64_t k = code % C;
        double sum = 0;
        for (std::int64_t j = 0; j < C; ++j) sum += std::exp(z[static_cast<std::size_t>((b * T + t) * C + j)]);
        prob *= std::exp(z[static_cast<std::size_t>((b * T + t) * C + k)]) / sum;
        seq.push_back(k);
      }
      for (std::size_t t = 0; t < seq.size(); ++t)
        if (seq[t] != 0 && (t == 0 || seq[t] != seq[t - 1])) collapsed.push_back(seq[t]);
      if (collapsed == want) total += prob;
    }
    return -std::log(total);
  };
  const Computed c =
      run(K::losses::CTC(), K::Tensor::from_vector({n, T, C}, logits), K::Tensor::from_vector({n, L}, labels));
  const std::vector<double> zd(logits.begin(), logits.end());
  for (std::int64_t b = 0; b < n; ++b) {
    CAPTURE(b);
    CHECK(c.loss[static_cast<std::size_t>(b)] == doctest::Approx(nll(zd, b)).epsilon(1e-5));
    for (std::int64_t k = b * T * C; k < (b + 1) * T * C; ++k) {
      auto up = zd, down = zd;
      up[static_cast<std::size_t>(k)] += 1e-4;
      down[static_cast<std::size_t>(k)] -= 1e-4;
      CHECK(c.grad[static_cast<std::size_t>(k)] == doctest::Approx((nll(up, b) - nll(down, b)) / 2e-4).epsilon(1e-3));
    }
  }
  CHECK(K::losses::LossRef("ctc")->name() == "ctc");
  CHECK_THROWS_AS(
      run(K::losses::CTC(), K::Tensor::from_vector({n, T * C}, logits), K::Tensor::from_vector({n, L}, labels)),
      K::ShapeError);
}

TEST_CASE("row losses: edge cases (zero rows and targets, clipped probabilities, 3-D and 1-D predictions)") {
  // A zero row has cosine 0 (Keras' normalize leaves it zero), not NaN.
  const Computed cos = run(K::losses::CosineSimilarity(), K::Tensor::from_vector({2, 2}, {0.f, 0.f, 1.f, 1.f}),
                           K::Tensor::from_vector({2, 2}, {1.f, 0.f, 0.f, 0.f}));
  CHECK(cos.loss == std::vector<float>{0.f, 0.f});
  // Zero targets: MAPE divides by ε, KL clips the target to ε.
  const Computed mape = run(K::losses::MeanAbsolutePercentageError(), K::Tensor::from_vector({1, 1}, {1e-6f}),
                            K::Tensor::from_vector({1, 1}, {0.f}), false);
  CHECK(mape.loss[0] == doctest::Approx(100.0 * 1e-6 / kEps).epsilon(1e-5));
  const Computed kld = run(K::losses::KLDivergence(), K::Tensor::from_vector({1, 2}, {0.5f, 0.5f}),
                           K::Tensor::from_vector({1, 2}, {0.f, 1.f}), false);
  CHECK(kld.loss[0] == doctest::Approx(kEps * std::log(kEps / 0.5) + std::log(1 / 0.5)).epsilon(1e-6));
  // A probability of exactly 0 is clipped to ε (finite loss, zero gradient where it was clipped).
  const Computed focal = run(K::losses::CategoricalFocalCrossentropy({.gamma = 0.0}),
                             K::Tensor::from_vector({1, 2}, {0.f, 1.f}), K::Tensor::from_vector({1, 2}, {1.f, 0.f}));
  CHECK(focal.loss[0] == doctest::Approx(-0.25 * std::log(kEps)).epsilon(1e-5));
  CHECK(std::isfinite(focal.grad[0]));
  // [N, A, D]: each example's loss is the mean over its A rows; [N]: one value per example.
  const auto p = uniform(2 * 3 * 2, 0.1f, 1.f, 10), t = uniform(2 * 3 * 2, 0.1f, 1.f, 11);
  const Computed cube =
      run(K::losses::KLDivergence(), K::Tensor::from_vector({2, 3, 2}, p), K::Tensor::from_vector({2, 3, 2}, t), false);
  for (int i = 0; i < 2; ++i) {
    double s = 0;
    for (int k = 0; k < 6; ++k) s += t[i * 6 + k] * std::log(static_cast<double>(t[i * 6 + k]) / p[i * 6 + k]);
    CHECK(cube.loss[static_cast<std::size_t>(i)] == doctest::Approx(s / 3).epsilon(1e-6));
  }
  const Computed flat = run(K::losses::LogCosh(), K::Tensor::from_vector({3}, {0.5f, -1.f, 2.f}),
                            K::Tensor::from_vector({3}, {0.f, 0.f, 1.f}));
  CHECK(flat.loss[1] == doctest::Approx(std::log(std::cosh(-1.0))).epsilon(1e-6));
  CHECK(flat.grad[1] == doctest::Approx(std::tanh(-1.0)).epsilon(1e-6));
}

TEST_CASE("row losses: Keras names, argument checks and the .keras compile_config") {
  for (const char* name : {"mae",
                           "mape",
                           "msle",
                           "kld",
                           "logcosh",
                           "log_cosh",
                           "poisson",
                           "hinge",
                           "squared_hinge",
                           "categorical_hinge",
                           "cosine_similarity",
                           "binary_focal_crossentropy",
                           "categorical_focal_crossentropy",
                           "categorical_generalized_cross_entropy",
                           "tversky",
                           "dice",
                           "kl_divergence",
                           "mean_absolute_percentage_error",
                           "mean_squared_logarithmic_error",
                           "circle"}) {
    CAPTURE(name);
    K::losses::LossRef ref(name);
    REQUIRE(ref);
    CHECK(!ref->config_json().empty());
  }
  CHECK(K::losses::LossRef("msle")->name() == "mean_squared_logarithmic_error");
  CHECK_THROWS_WITH_AS(K::losses::LossRef("kl_div"), doctest::Contains("unknown loss 'kl_div'"), K::ValueError);
  CHECK_THROWS_WITH_AS(K::losses::CategoricalGeneralizedCrossEntropy(1.0), doctest::Contains("(0, 1)"), K::ValueError);
  CHECK_THROWS_WITH_AS(K::losses::CosineSimilarity(0), doctest::Contains("axis 0"), K::ValueError);
  CHECK_THROWS_AS(K::losses::BinaryFocalCrossentropy({.label_smoothing = 1.5}), K::ValueError);
  CHECK_THROWS_AS(K::losses::CategoricalFocalCrossentropy({.apply_class_balancing = true}), K::ValueError);
  // A loss without a gradient does not exist; a metric-only formula refuses one.
  auto be = K::make_cpu_backend(1);
  K::Tensor loss({1}), grad({1, 2});
  CHECK_THROWS_WITH_AS(be->row_loss(K::RowLoss::pearson_correlation, {}, K::Tensor::from_vector({1, 2}, {1.f, 2.f}),
                                    K::Tensor::from_vector({1, 2}, {1.f, 2.f}), loss, grad, 1.f),
                       doctest::Contains("without a gradient"), K::ValueError);
  CHECK_THROWS_AS(
      K::losses::MeanAbsoluteError().compute(*be, K::Tensor::from_vector({1, 2}, {1.f, 2.f}),
                                             K::Tensor::from_vector({1, 3}, {1.f, 2.f, 3.f}), loss, grad, 1.f),
      K::ShapeError);

  // Saved in compile_config with Keras' class and arguments, and rebuilt by load_model: the loaded
  // model's loss is the same number (the defaults, alpha 0.25 and gamma 2, would give another).
  kerascpp_test::TempDir dir;
  auto in = K::Input({3});
  K::Model model(in, K::layers::Dense(3, {.activation = "softmax"})(in));
  const K::losses::FocalOptions focal{.alpha = 0.4, .gamma = 1.5};
  model.compile({.optimizer = "adam", .loss = K::losses::CategoricalFocalCrossentropy(focal)});
  const K::Tensor x = K::Tensor::from_vector({2, 3}, {0.1f, -0.4f, 0.9f, 0.3f, -0.7f, 0.2f});
  const K::Tensor y = K::Tensor::from_vector({2, 3}, {0.f, 1.f, 0.f, 1.f, 0.f, 0.f});
  const std::string path = dir.file("focal.keras");
  model.save(path);
  K::Model loaded = K::load_model(path);
  REQUIRE(loaded.compiled());
  const double want = model.test_on_batch(x, y)["loss"];
  CHECK(loaded.test_on_batch(x, y)["loss"] == doctest::Approx(want).epsilon(1e-7));
  auto in2 = K::Input({3});
  K::Model defaults(in2, K::layers::Dense(3, {.activation = "softmax"})(in2));
  defaults.set_weights(model.get_weights());
  defaults.compile({.optimizer = "adam", .loss = "categorical_focal_crossentropy"});
  CHECK(std::fabs(defaults.test_on_batch(x, y)["loss"] - want) > 1e-4);
}
