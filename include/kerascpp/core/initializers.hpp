// Keras weight initializers: by name (glorot_uniform, glorot_normal, he_normal, he_uniform,
// lecun_uniform, orthogonal, zeros,
// ones) or as an object (Constant(value)). Fans follow Keras: Dense (in, out); Conv2D kernel
// (kh, kw, in, out).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "kerascpp/tensor/tensor.hpp"

/// Keras' weight initializers (keras.initializers).
namespace kerascpp::initializers {

/// Fills `t` (float32) following the named initializer; `where` names the layer for errors.
void initialize(Tensor& t, const std::string& name, std::uint64_t seed, const std::string& where);

/// An initializer as layer options take it: a name ("he_normal", implicitly from a string, so
/// `.kernel_initializer = "he_normal"` keeps working) or Constant(value).
class Initializer {
 public:
  /// @{
  /// The named initializer; unknown names throw ValueError when it is used.
  Initializer(std::string name) : name_(std::move(name)) {}  // NOLINT: implicit by design
  Initializer(const char* name) : name_(name) {}             // NOLINT
  /// @}
  /// Keras' Constant(value): every element is `value`.
  static Initializer constant(float value) {
    Initializer init("constant");
    init.value_ = value;
    return init;
  }

  /// The same initializer, then elements [begin, end) of the flat tensor set to 1: LSTM's
  /// unit_forget_bias (Keras starts the forget gate's bias at 1).
  Initializer with_ones_in(std::int64_t begin, std::int64_t end) const {
    Initializer init = *this;
    init.ones_begin_ = begin;
    init.ones_end_ = end;
    return init;
  }

  const std::string& name() const { return name_; }  ///< "constant" for Constant(value)
  /// Constant's value; empty for a named initializer.
  std::optional<float> value() const { return value_; }
  /// Fills `t` (float32) from `seed`; `where` names the layer for errors.
  void operator()(Tensor& t, std::uint64_t seed, const std::string& where) const;
  /// True for the named initializer `name` (never for a Constant).
  bool operator==(const std::string& name) const { return !value_ && name_ == name; }
  /// Not operator==.
  bool operator!=(const std::string& name) const { return !(*this == name); }

 private:
  std::string name_;
  std::optional<float> value_;
  std::int64_t ones_begin_ = 0, ones_end_ = 0;  // with_ones_in's range; empty by default
};

/// @{
/// Keras' keras.initializers.Constant(value) (and its alias `constant`).
inline Initializer Constant(float value) { return Initializer::constant(value); }
inline Initializer constant(float value) { return Initializer::constant(value); }
/// @}

}  // namespace kerascpp::initializers
