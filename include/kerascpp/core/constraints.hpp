// Keras' weight constraints (keras.constraints): applied to a variable after every optimizer
// update, on every mirrored copy alike.
//   Dense(64, {.kernel_constraint = constraints::MaxNorm(3.0f)})
#pragma once
#include <string>
#include <vector>

/// Keras' weight constraints (keras.constraints).
namespace kerascpp::constraints {

/// A projection applied to a variable after each optimizer update (MaxNorm), or none.
class Constraint {
 public:
  Constraint() = default;  ///< none
  /// Keras' MaxNorm(max_value, axis): every slice along `axis` is rescaled so that its L2 norm is
  /// at most max_value, w·clip(‖w‖, 0, max_value)/(1e-7 + ‖w‖). The axes must be the leading
  /// axes 0..k-1 (Keras' default axis=0; [0, 1, 2] for a Conv2D kernel): the norms are then taken
  /// over contiguous rows, one per trailing element.
  static Constraint max_norm(float max_value, std::vector<int> axis);

  /// False for none.
  bool defined() const { return !class_name_.empty(); }
  /// defined().
  explicit operator bool() const { return defined(); }
  /// Keras' class name ("MaxNorm"); empty for none.
  const std::string& class_name() const { return class_name_; }
  /// MaxNorm's bound on each slice's L2 norm.
  float max_value() const { return max_value_; }
  /// The axes MaxNorm's norms are taken over.
  const std::vector<int>& axis() const { return axis_; }
  /// Keras' serialized form: {"module": "keras.constraints", "class_name": "MaxNorm", ...}.
  std::string config_json() const;

 private:
  std::string class_name_;
  float max_value_ = 0.f;
  std::vector<int> axis_;
};

/// Keras' keras.constraints.MaxNorm (see Constraint::max_norm).
inline Constraint MaxNorm(float max_value = 2.f, std::vector<int> axis = {0}) {
  return Constraint::max_norm(max_value, std::move(axis));
}

}  // namespace kerascpp::constraints
