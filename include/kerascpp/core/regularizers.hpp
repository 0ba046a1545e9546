// Keras' weight regularizers (keras.regularizers): L1, L2 and L1L2. A regularized variable adds
// its penalty l1·Σ|w| + l2·Σw² to the loss the model trains on, as Keras' model.losses do: the
// loss fit() and evaluate() report includes it, and the gradient 2·l2·w + l1·sign(w) joins the
// variable's gradient once per step (after the all-reduce, so any replica count trains alike).
//   Dense(10, {.kernel_regularizer = regularizers::L2(1e-4)})
//   Conv2D(16, 3, {.kernel_regularizer = "l2"})        // Keras' shortcut: L2(0.01)
#pragma once
#include <string>

/// Keras' weight regularizers (keras.regularizers).
namespace kerascpp::regularizers {

/// A weight penalty (L1, L2, L1L2) or none, as layer options such as kernel_regularizer take it.
class Regularizer {
 public:
  Regularizer() = default;  ///< none
  /// @{
  /// Keras' string shortcuts: "l1" = L1(0.01), "l2" = L2(0.01), "l1_l2" = L1L2(0.01, 0.01);
  /// "" = none. Anything else is a ValueError naming the choices.
  Regularizer(const char* name);         // NOLINT: implicit by design, like Keras' strings
  Regularizer(const std::string& name);  // NOLINT
  /// @}
  /// class_name is Keras' ("L1", "L2", "L1L2"); factors must be finite and >= 0.
  Regularizer(std::string class_name, float l1, float l2);

  /// False for none.
  bool defined() const { return !class_name_.empty(); }
  /// defined().
  explicit operator bool() const { return defined(); }
  /// "L1", "L2" or "L1L2"; empty for none.
  const std::string& class_name() const { return class_name_; }
  /// The factor of Σ|w|.
  float l1() const { return l1_; }
  /// The factor of Σw².
  float l2() const { return l2_; }
  /// Keras' serialized form: {"module": "keras.regularizers", "class_name": "L2", "config": {"l2": ...}, ...}.
  std::string config_json() const;

 private:
  std::string class_name_;
  float l1_ = 0.f, l2_ = 0.f;
};

/// Keras' L1: penalty l1·Σ|w|.
inline Regularizer L1(float l1 = 0.01f) { return {"L1", l1, 0.f}; }
/// Keras' L2: penalty l2·Σw².
inline Regularizer L2(float l2 = 0.01f) { return {"L2", 0.f, l2}; }
/// Keras' L1L2: penalty l1·Σ|w| + l2·Σw² (both 0 by default, as in Keras).
inline Regularizer L1L2(float l1 = 0.f, float l2 = 0.f) { return {"L1L2", l1, l2}; }

}  // namespace kerascpp::regularizers
