// Activations: every function of keras.activations as a small value (kind + arguments), taken by
// the Backend ops and by the layers' `activation=`. By name, as Keras saves them:
//
//   ActivationFn a = activation_from_name("gelu", "Dense");   // Keras' defaults (approximate=False)
//   ActivationFn b = activations::leaky_relu(0.1f);            // with arguments, from C++
//
// A kind converts implicitly to its Keras defaults, so `act == ActivationKind::relu` asks "is this
// plain relu" (no slope, no cap, no threshold).
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace kerascpp {

/// The activations of keras.activations; ActivationFn adds their arguments.
enum class ActivationKind : std::uint8_t {
  linear,
  relu,
  sigmoid,
  tanh,
  softmax,
  celu,
  elu,
  exponential,
  gelu,
  glu,
  hard_shrink,
  hard_sigmoid,
  hard_silu,
  hard_tanh,
  leaky_relu,
  log_sigmoid,
  log_softmax,
  mish,
  relu6,
  selu,
  silu,
  soft_shrink,
  softplus,
  softsign,
  sparse_plus,
  sparse_sigmoid,
  sparsemax,
  squareplus,
  tanh_shrink,
  threshold,
};

/// An activation and its arguments. What alpha/beta/gamma mean depends on the kind (Keras' names):
///   relu: alpha = negative_slope, beta = max_value (+inf: None), gamma = threshold
///   leaky_relu: alpha = negative_slope          elu, celu: alpha = alpha
///   gelu: alpha = approximate (1) or not (0)    hard_shrink, soft_shrink: alpha = threshold
///   squareplus: alpha = b                       threshold: alpha = threshold, beta = default_value
/// softmax, log_softmax, glu and sparsemax work along `axis` (negative counts from the end).
struct ActivationFn {
  /// Which activation.
  ActivationKind kind = ActivationKind::linear;
  /// @{
  /// The kind's arguments (see above).
  float alpha = 0.f, beta = 0.f, gamma = 0.f;
  /// @}
  /// The axis of softmax, log_softmax, glu and sparsemax (negative: from the end).
  int axis = -1;

  /// The identity (linear).
  ActivationFn() = default;
  /// `k` with Keras' default arguments; implicit by design.
  ActivationFn(ActivationKind k);  // NOLINT(google-explicit-constructor): Keras' defaults for k

  /// Same kind and arguments.
  bool operator==(const ActivationFn& o) const {
    return kind == o.kind && alpha == o.alpha && beta == o.beta && gamma == o.gamma && axis == o.axis;
  }
  /// Another kind or other arguments.
  bool operator!=(const ActivationFn& o) const { return !(*this == o); }

  /// True when dL/dx follows from the output y alone (sigmoid' = y(1 - y), ...): a layer that
  /// fuses the activation then keeps only y. Otherwise the backward needs the input x.
  bool gradient_from_output() const;
  /// softmax, log_softmax, glu, sparsemax: each output depends on a whole fibre along `axis`.
  bool along_axis() const;
  /// glu halves its axis; every other activation keeps the shape.
  bool changes_shape() const { return kind == ActivationKind::glu; }
};

/// "gelu", "swish" (= silu), "hard_swish" (= hard_silu), ... or "" (= linear), with Keras'
/// defaults. `where` names the layer for errors; an unknown name is a ValueError listing them all.
ActivationFn activation_from_name(const std::string& name, const std::string& where);
/// Keras' canonical name ("silu" for swish), as get_config writes it.
const char* activation_name(ActivationKind act);
/// The canonical name of `act`'s kind (its arguments are not part of it).
inline const char* activation_name(const ActivationFn& act) { return activation_name(act.kind); }
/// The name as a layer config saves it. Keras saves an activation by name only, so arguments other
/// than the defaults cannot be written: a ValueError naming `where` and the layer that keeps them.
std::string activation_config_name(const ActivationFn& act, const std::string& where);
/// Every name activation_from_name takes, aliases included.
const std::vector<std::string>& activation_names();

// Constructors with arguments, named and defaulted as in keras.activations.
namespace activations {
ActivationFn relu(float negative_slope = 0.f, float max_value = std::numeric_limits<float>::infinity(),
                  float threshold = 0.f);
ActivationFn leaky_relu(float negative_slope = 0.2f);
ActivationFn elu(float alpha = 1.f);
ActivationFn celu(float alpha = 1.f);
ActivationFn gelu(bool approximate = false);
ActivationFn hard_shrink(float threshold = 0.5f);
ActivationFn soft_shrink(float threshold = 0.5f);
ActivationFn squareplus(float b = 4.f);
ActivationFn threshold(float threshold, float default_value);
ActivationFn softmax(int axis = -1);
ActivationFn log_softmax(int axis = -1);
ActivationFn glu(int axis = -1);
ActivationFn sparsemax(int axis = -1);
}  // namespace activations

}  // namespace kerascpp
