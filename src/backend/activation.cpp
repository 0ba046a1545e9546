// keras.activations by name: the table of names, Keras' default arguments, and what a backward
// needs (the output or the input).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "check.hpp"
#include "kerascpp/backend/activations.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp {

namespace {

using K = ActivationKind;

// Canonical names in enum order, then the aliases Keras exports.
const std::pair<const char*, K> kNames[] = {
    {"linear", K::linear},
    {"relu", K::relu},
    {"sigmoid", K::sigmoid},
    {"tanh", K::tanh},
    {"softmax", K::softmax},
    {"celu", K::celu},
    {"elu", K::elu},
    {"exponential", K::exponential},
    {"gelu", K::gelu},
    {"glu", K::glu},
    {"hard_shrink", K::hard_shrink},
    {"hard_sigmoid", K::hard_sigmoid},
    {"hard_silu", K::hard_silu},
    {"hard_tanh", K::hard_tanh},
    {"leaky_relu", K::leaky_relu},
    {"log_sigmoid", K::log_sigmoid},
    {"log_softmax", K::log_softmax},
    {"mish", K::mish},
    {"relu6", K::relu6},
    {"selu", K::selu},
    {"silu", K::silu},
    {"soft_shrink", K::soft_shrink},
    {"softplus", K::softplus},
    {"softsign", K::softsign},
    {"sparse_plus", K::sparse_plus},
    {"sparse_sigmoid", K::sparse_sigmoid},
    {"sparsemax", K::sparsemax},
    {"squareplus", K::squareplus},
    {"tanh_shrink", K::tanh_shrink},
    {"threshold", K::threshold},
    {"swish", K::silu},
    {"hard_swish", K::hard_silu},
};

ActivationFn with(K kind, float alpha, float beta = 0.f, float gamma = 0.f) {
  ActivationFn f;
  f.kind = kind;
  f.alpha = alpha;
  f.beta = beta;
  f.gamma = gamma;
  return f;
}

ActivationFn along(K kind, int axis) {
  ActivationFn f(kind);
  f.axis = axis;
  return f;
}

}  // namespace

ActivationFn::ActivationFn(ActivationKind k) : kind(k) {
  switch (k) {
    case K::relu:
      beta = std::numeric_limits<float>::infinity();  // max_value=None
      break;
    case K::leaky_relu:
      alpha = 0.2f;
      break;
    case K::elu:
    case K::celu:
      alpha = 1.f;
      break;
    case K::hard_shrink:
    case K::soft_shrink:
      alpha = 0.5f;
      break;
    case K::squareplus:
      alpha = 4.f;
      break;
    default:
      break;
  }
}

bool ActivationFn::gradient_from_output() const {
  switch (kind) {
    case K::linear:
    case K::sigmoid:
    case K::tanh:
    case K::softmax:
    case K::log_softmax:
    case K::exponential:
    case K::relu6:
    case K::hard_tanh:
    case K::hard_sigmoid:
    case K::sparse_sigmoid:
    case K::softplus:
    case K::log_sigmoid:
    case K::softsign:
    case K::selu:
      return true;
    case K::relu:
      return *this == ActivationFn(K::relu);  // a slope or threshold makes y ambiguous
    case K::elu:
    case K::celu:
      return alpha > 0.f;  // y > 0 exactly where x > 0
    default:
      return false;
  }
}

bool ActivationFn::along_axis() const {
  return kind == K::softmax || kind == K::log_softmax || kind == K::glu || kind == K::sparsemax;
}

const std::vector<std::string>& activation_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& [name, kind] : kNames) v.emplace_back(name);
    return v;
  }();
  return names;
}

ActivationFn activation_from_name(const std::string& name, const std::string& where) {
  if (name.empty()) return K::linear;
  KERASCPP_CHECK_VALUE(name != "threshold",
                       "{}: the activation \"threshold\" has no defaults for its threshold and "
                       "default_value (as in Keras); pass kerascpp::activations::threshold(t, v)",
                       where);
  for (const auto& [n, kind] : kNames)
    if (name == n) return kind;
  throw ValueError(fmt::format("{}: unknown activation \"{}\"; use one of {} (or \"\" for linear)", where, name,
                               fmt::join(activation_names(), ", ")));
}

const char* activation_name(ActivationKind act) {
  const auto i = static_cast<std::size_t>(act);
  return i < std::size(kNames) ? kNames[i].first : "linear";
}

std::string activation_config_name(const ActivationFn& act, const std::string& where) {
  if (act.kind != K::threshold && act == ActivationFn(act.kind)) return activation_name(act.kind);
  throw ValueError(
      fmt::format("{}: Keras saves an activation by name only, so {} with arguments other than its "
                  "defaults cannot be written to a config; use the layer that keeps them (ReLU, "
                  "LeakyReLU, ELU, Softmax) or the default arguments",
                  where, activation_name(act.kind)));
}

namespace activations {
ActivationFn relu(float negative_slope, float max_value, float threshold) {
  return with(K::relu, negative_slope, max_value, threshold);
}
ActivationFn leaky_relu(float negative_slope) { return with(K::leaky_relu, negative_slope); }
ActivationFn elu(float alpha) { return with(K::elu, alpha); }
ActivationFn celu(float alpha) {
  KERASCPP_CHECK_VALUE(alpha != 0.f, "activations::celu: alpha must be non-zero (it divides x)");
  return with(K::celu, alpha);
}
ActivationFn gelu(bool approximate) { return with(K::gelu, approximate ? 1.f : 0.f); }
ActivationFn hard_shrink(float threshold) { return with(K::hard_shrink, threshold); }
ActivationFn soft_shrink(float threshold) { return with(K::soft_shrink, threshold); }
ActivationFn squareplus(float b) {
  KERASCPP_CHECK_VALUE(b >= 0.f, "activations::squareplus: b must be >= 0, got {}", b);
  return with(K::squareplus, b);
}
ActivationFn threshold(float threshold, float default_value) { return with(K::threshold, threshold, default_value); }
ActivationFn softmax(int axis) { return along(K::softmax, axis); }
ActivationFn log_softmax(int axis) { return along(K::log_softmax, axis); }
ActivationFn glu(int axis) { return along(K::glu, axis); }
ActivationFn sparsemax(int axis) { return along(K::sparsemax, axis); }
}  // namespace activations

}  // namespace kerascpp
