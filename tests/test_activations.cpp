// Every activation of keras.activations: forward against float64 formulas written here from
// Keras' definitions (keras/src/activations/activations.py and the numpy backend), backward
// against central differences of those formulas, both at edge points (0, +-1, +-3, 6, the
// thresholds) and around them; names, aliases and the error for an unknown name.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing/gradient_check.hpp"

namespace K = kerascpp;
namespace KA = kerascpp::activations;

namespace {

using Fn = std::function<double(double)>;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softplus(double x) { return std::log1p(std::exp(-std::abs(x))) + std::max(x, 0.0); }
double clip(double x, double lo, double hi) { return std::min(std::max(x, lo), hi); }

// keras.activations.relu as its docstring states it.
Fn relu_ref(double slope, double max_value, double threshold) {
  return [=](double x) {
    double y = threshold != 0.0 ? (x > threshold ? x : 0.0) : std::max(x, 0.0);
    if (std::isfinite(max_value)) y = clip(y, 0.0, max_value);
    return y - slope * std::max(threshold - x, 0.0);
  };
}

struct Case {
  const char* label;
  K::ActivationFn act;
  Fn ref;
};

std::vector<Case> elementwise_cases() {
  const double kSeluA = 1.6732632423543772848170429916717, kSeluS = 1.0507009873554804934193349852946;
  const double pi = 3.14159265358979323846;
  return {
      {"linear", K::ActivationKind::linear, [](double x) { return x; }},
      {"relu", K::ActivationKind::relu, relu_ref(0, INFINITY, 0)},
      {"relu(slope, max, threshold)", KA::relu(0.1f, 2.5f, 0.5f), relu_ref(0.1, 2.5, 0.5)},
      {"relu(max_value)", KA::relu(0.f, 1.5f), relu_ref(0, 1.5, 0)},
      {"relu(slope)", KA::relu(0.25f), relu_ref(0.25, INFINITY, 0)},
      {"leaky_relu", K::ActivationKind::leaky_relu, [](double x) { return x >= 0 ? x : 0.2 * x; }},
      {"leaky_relu(0.5)", KA::leaky_relu(0.5f), [](double x) { return x >= 0 ? x : 0.5 * x; }},
      {"relu6", K::ActivationKind::relu6, [](double x) { return clip(x, 0, 6); }},
      {"elu", K::ActivationKind::elu, [](double x) { return x >= 0 ? x : std::expm1(x); }},
      {"elu(0.5)", KA::elu(0.5f), [](double x) { return x >= 0 ? x : 0.5 * std::expm1(x); }},
      {"selu", K::ActivationKind::selu, [=](double x) { return kSeluS * (x >= 0 ? x : kSeluA * std::expm1(x)); }},
      {"celu(2)", KA::celu(2.f), [](double x) { return std::max(x, 0.0) + 2.0 * std::expm1(std::min(x, 0.0) / 2.0); }},
      {"exponential", K::ActivationKind::exponential, [](double x) { return std::exp(x); }},
      {"gelu", K::ActivationKind::gelu, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
      {"gelu(approximate)", KA::gelu(true),
       [=](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / pi) * (x + 0.044715 * x * x * x))); }},
      {"hard_sigmoid", K::ActivationKind::hard_sigmoid, [](double x) { return clip(x / 6 + 0.5, 0, 1); }},
      {"hard_silu", K::ActivationKind::hard_silu, [](double x) { return x * clip(x / 6 + 0.5, 0, 1); }},
      {"hard_tanh", K::ActivationKind::hard_tanh, [](double x) { return clip(x, -1, 1); }},
      {"hard_shrink", K::ActivationKind::hard_shrink, [](double x) { return std::abs(x) > 0.5 ? x : 0.0; }},
      {"soft_shrink(1)", KA::soft_shrink(1.f), [](double x) { return x > 1 ? x - 1 : (x < -1 ? x + 1 : 0.0); }},
      {"tanh_shrink", K::ActivationKind::tanh_shrink, [](double x) { return x - std::tanh(x); }},
      {"threshold(0.5, -2)", KA::threshold(0.5f, -2.f), [](double x) { return x > 0.5 ? x : -2.0; }},
      {"sigmoid", K::ActivationKind::sigmoid, sigmoid},
      {"tanh", K::ActivationKind::tanh, [](double x) { return std::tanh(x); }},
      {"log_sigmoid", K::ActivationKind::log_sigmoid, [](double x) { return -softplus(-x); }},
      {"mish", K::ActivationKind::mish, [](double x) { return x * std::tanh(softplus(x)); }},
      {"silu", K::ActivationKind::silu, [](double x) { return x * sigmoid(x); }},
      {"softplus", K::ActivationKind::softplus, softplus},
      {"softsign", K::ActivationKind::softsign, [](double x) { return x / (1 + std::abs(x)); }},
      {"sparse_plus", K::ActivationKind::sparse_plus,
       [](double x) { return x <= -1 ? 0.0 : (x < 1 ? 0.25 * (x + 1) * (x + 1) : x); }},
      {"sparse_sigmoid", K::ActivationKind::sparse_sigmoid,
       [](double x) { return x <= -1 ? 0.0 : (x >= 1 ? 1.0 : 0.5 * (x + 1)); }},
      {"squareplus", K::ActivationKind::squareplus, [](double x) { return 0.5 * (x + std::sqrt(x * x + 4)); }},
      {"squareplus(0.5)", KA::squareplus(0.5f), [](double x) { return 0.5 * (x + std::sqrt(x * x + 0.5)); }},
  };
}

// The kinks and bounds of the activations above: forward is checked exactly there, gradients
// just beside them (a central difference across a kink measures neither side).
const std::vector<double> kEdges = {-3, -1, -0.5, 0, 0.5, 1, 1.5, 2.5, 3, 6};

std::vector<float> forward_points() {
  std::vector<float> p;
  for (double e : kEdges) p.push_back(static_cast<float>(e));
  for (double x : {-7.5, -4.2, -2.2, -0.7, -0.1, 0.3, 0.8, 2.2, 4.4, 8.1}) p.push_back(static_cast<float>(x));
  return p;
}

std::vector<float> gradient_points() {
  std::vector<float> p;
  for (double e : kEdges)
    for (double d : {-0.03, 0.03}) p.push_back(static_cast<float>(e + d));
  for (double x : {-4.2, -2.2, -0.7, 0.8, 2.2, 4.4}) p.push_back(static_cast<float>(x));
  return p;
}

// dL/dx of L = sum(w * f(x)) for elementwise f, by central differences of the float64 formula.
double central_difference(const Fn& f, double x) {
  const double h = 1e-6;
  return (f(x + h) - f(x - h)) / (2 * h);
}

void check_close(double got, double want, double rtol, double atol, const std::string& what) {
  INFO(what << ": got " << got << ", want " << want);
  CHECK(std::abs(got - want) <= atol + rtol * std::abs(want));
}

}  // namespace

TEST_CASE("activations: each elementwise activation's forward matches its float64 formula") {
  auto be = K::make_cpu_backend(1);
  const std::vector<float> xs = forward_points();
  const auto n = static_cast<std::int64_t>(xs.size());
  for (const Case& c : elementwise_cases()) {
    K::Tensor y;
    be->activation_forward(c.act, K::Tensor::from_vector({n}, xs), y);
    for (std::int64_t i = 0; i < n; ++i)
      check_close(y.data<float>()[i], c.ref(xs[static_cast<std::size_t>(i)]), 2e-6, 2e-6,
                  std::string(c.label) + " at " + std::to_string(xs[static_cast<std::size_t>(i)]));
  }
}

TEST_CASE("activations: each elementwise activation's backward matches finite differences") {
  auto be = K::make_cpu_backend(1);
  const std::vector<float> xs = gradient_points();
  const auto n = static_cast<std::int64_t>(xs.size());
  std::vector<float> w(xs.size());
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.5f + 0.1f * static_cast<float>(i % 7);  // dL/dy
  for (const Case& c : elementwise_cases()) {
    const K::Tensor x = K::Tensor::from_vector({n}, xs);
    K::Tensor y, dx;
    be->activation_forward(c.act, x, y);
    // Both tensors passed: the backend takes the one the activation needs.
    be->activation_backward(c.act, x, y, K::Tensor::from_vector({n}, w), dx);
    for (std::int64_t i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      check_close(dx.data<float>()[i], w[k] * central_difference(c.ref, xs[k]), 1e-4, 1e-5,
                  std::string(c.label) + " gradient at " + std::to_string(xs[k]));
    }
  }
}

TEST_CASE("activations: NaN in gives NaN out for the clipping activations") {
  auto be = K::make_cpu_backend(1);
  for (K::ActivationFn act : {K::ActivationFn(K::ActivationKind::relu6), K::ActivationFn(K::ActivationKind::hard_tanh),
                              KA::relu(0.1f, 2.f, 0.5f), K::ActivationFn(K::ActivationKind::hard_sigmoid),
                              K::ActivationFn(K::ActivationKind::sparse_sigmoid), KA::threshold(0.f, 1.f)}) {
    K::Tensor y;
    be->activation_forward(act, K::Tensor::from_vector({2}, {NAN, 1.f}), y);
    INFO(K::activation_name(act));
    CHECK(std::isnan(y.data<float>()[0]));
  }
}

namespace {

// Reference along axis 1 of an [outer, classes, inner] array, in float64.
using AxisFn = std::function<std::vector<double>(const std::vector<double>&)>;  // one fibre

std::vector<double> softmax_ref(const std::vector<double>& z) {
  const double m = *std::max_element(z.begin(), z.end());
  std::vector<double> e(z.size());
  double s = 0;
  for (std::size_t i = 0; i < z.size(); ++i) s += (e[i] = std::exp(z[i] - m));
  for (double& v : e) v /= s;
  return e;
}

std::vector<double> log_softmax_ref(const std::vector<double>& z) {
  std::vector<double> p = softmax_ref(z);
  for (double& v : p) v = std::log(v);
  return p;
}

// Keras 3.15's sparsemax (keras/src/backend/numpy/nn.py), literally: its threshold sums the
// cumulative sums over the support.
std::vector<double> sparsemax_ref(const std::vector<double>& z) {
  std::vector<double> sorted = z;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  double cumsum = 0, support_cumsums = 0;
  int k = 0;
  for (std::size_t j = 0; j < sorted.size(); ++j) {
    cumsum += sorted[j];
    if (sorted[j] - (cumsum - 1) / static_cast<double>(j + 1) > 0) {
      ++k;
      support_cumsums += cumsum;
    }
  }
  const double tau = (support_cumsums - 1) / k;
  std::vector<double> y(z.size());
  for (std::size_t i = 0; i < z.size(); ++i) y[i] = std::max(z[i] - tau, 0.0);
  return y;
}

std::vector<double> glu_ref(const std::vector<double>& z) {
  const std::size_t half = z.size() / 2;
  std::vector<double> y(half);
  for (std::size_t i = 0; i < half; ++i) y[i] = z[i] * sigmoid(z[i + half]);
  return y;
}

// f applied to every fibre along axis 1 of x [outer, classes, inner].
std::vector<double> along_axis(const AxisFn& f, const std::vector<double>& x, int outer, int classes, int inner,
                               int out_classes) {
  std::vector<double> y(static_cast<std::size_t>(outer * out_classes * inner));
  for (int o = 0; o < outer; ++o)
    for (int i = 0; i < inner; ++i) {
      std::vector<double> z(static_cast<std::size_t>(classes));
      for (int c = 0; c < classes; ++c)
        z[static_cast<std::size_t>(c)] = x[static_cast<std::size_t>((o * classes + c) * inner + i)];
      const std::vector<double> r = f(z);
      for (int c = 0; c < out_classes; ++c)
        y[static_cast<std::size_t>((o * out_classes + c) * inner + i)] = r[static_cast<std::size_t>(c)];
    }
  return y;
}

}  // namespace

TEST_CASE("activations: softmax, log_softmax, glu and sparsemax along an axis, forward and backward") {
  auto be = K::make_cpu_backend(1);
  const int outer = 2, classes = 4, inner = 3;
  // Distinct values (sparsemax's sort has no ties), spread so that sparsemax's support varies.
  std::vector<float> xs(static_cast<std::size_t>(outer * classes * inner));
  for (std::size_t i = 0; i < xs.size(); ++i)
    xs[i] = static_cast<float>(std::sin(1.7 * static_cast<double>(i) + 0.3) * 1.3);
  const std::vector<double> xd(xs.begin(), xs.end());
  struct AxisCase {
    const char* label;
    K::ActivationFn act;
    AxisFn ref;
    int out_classes;
  };
  for (const AxisCase& c : {AxisCase{"softmax", KA::softmax(1), softmax_ref, classes},
                            AxisCase{"log_softmax", KA::log_softmax(1), log_softmax_ref, classes},
                            AxisCase{"sparsemax", KA::sparsemax(1), sparsemax_ref, classes},
                            AxisCase{"glu", KA::glu(1), glu_ref, classes / 2}}) {
    INFO(c.label);
    const K::Tensor x = K::Tensor::from_vector({outer, classes, inner}, xs);
    K::Tensor y;
    be->activation_forward(c.act, x, y);
    REQUIRE(y.shape() == K::Shape{outer, c.out_classes, inner});
    const std::vector<double> want = along_axis(c.ref, xd, outer, classes, inner, c.out_classes);
    for (std::size_t i = 0; i < want.size(); ++i) check_close(y.data<float>()[i], want[i], 1e-5, 1e-6, "forward");
    // dL/dx of L = sum(w * f(x)) by central differences of the float64 reference.
    std::vector<float> w(want.size());
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.3f + 0.2f * static_cast<float>(i % 5);
    K::Tensor dx;
    be->activation_backward(c.act, x, y, K::Tensor::from_vector(y.shape(), w), dx);
    REQUIRE(dx.shape() == x.shape());
    for (std::size_t k = 0; k < xd.size(); ++k) {
      auto loss = [&](double delta) {
        std::vector<double> xp = xd;
        xp[k] += delta;
        const std::vector<double> yp = along_axis(c.ref, xp, outer, classes, inner, c.out_classes);
        return std::inner_product(yp.begin(), yp.end(), w.begin(), 0.0);
      };
      const double h = 1e-6;
      check_close(dx.data<float>()[k], (loss(h) - loss(-h)) / (2 * h), 1e-4, 1e-5, "gradient " + std::to_string(k));
    }
  }
}

TEST_CASE("activations: names, aliases, Keras' defaults, and unknown names") {
  for (const std::string& name : K::activation_names()) {
    if (name == "threshold") continue;  // no defaults: below
    const K::ActivationFn a = K::activation_from_name(name, "Dense");
    const std::string canonical = name == "swish" ? "silu" : name == "hard_swish" ? "hard_silu" : name;
    CHECK(K::activation_name(a) == canonical);
    CHECK(K::activation_config_name(a, "dense") == canonical);
  }
  CHECK(K::activation_names().size() == 32);  // Keras 3.15's 30 functions and the two aliases
  CHECK(K::activation_from_name("", "Dense") == K::ActivationKind::linear);
  CHECK(K::activation_from_name("leaky_relu", "Dense") == KA::leaky_relu(0.2f));
  CHECK(K::activation_from_name("gelu", "Dense") == KA::gelu(false));
  CHECK_THROWS_AS(K::activation_from_name("threshold", "Dense"), K::ValueError);
  try {
    K::activation_from_name("gelu_fast", "Dense 'dense_3'");
    FAIL("no error for an unknown activation");
  } catch (const K::ValueError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("dense_3") != std::string::npos);
    CHECK(msg.find("gelu_fast") != std::string::npos);
    for (const char* valid : {"relu", "gelu", "hard_swish", "sparsemax", "log_softmax", "squareplus"})
      CHECK(msg.find(valid) != std::string::npos);
  }
  // Arguments other than the defaults cannot be saved by name.
  CHECK_THROWS_AS(K::activation_config_name(KA::leaky_relu(0.1f), "act"), K::ValueError);
}

TEST_CASE("activations: Dense and Conv2D train through activations whose gradient needs their input") {
  // gelu, silu and mish are not recovered from the output: the layers keep the pre-activation.
  for (const char* name : {"gelu", "silu", "mish", "sparse_plus"}) {
    INFO(name);
    const K::Tensor x =
        K::Tensor::from_vector({3, 4}, {0.1f, -0.4f, 0.9f, -1.2f, 0.5f, 0.3f, -0.8f, 1.1f, -0.2f, 0.7f, -0.6f, 0.4f});
    auto dense = K::layers::Dense(3, {.activation = name});
    const auto r = K::testing::check_layer_gradients(dense, {x}, {.training = true});
    CHECK_MESSAGE(r.passed(), r.summary());
  }
  auto conv = K::layers::Conv2D(2, {2, 2}, {.activation = "swish"});
  std::vector<float> img(2 * 3 * 3 * 2);
  for (std::size_t i = 0; i < img.size(); ++i) img[i] = static_cast<float>(std::cos(0.9 * static_cast<double>(i)));
  const auto r =
      K::testing::check_layer_gradients(conv, {K::Tensor::from_vector({2, 3, 3, 2}, img)}, {.training = true});
  CHECK_MESSAGE(r.passed(), r.summary());
  CHECK_THROWS_AS(K::layers::Dense(4, {.activation = "glu"}), K::ValueError);  // it would halve the units
}
