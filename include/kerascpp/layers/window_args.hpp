// Typed arguments of the windowed layers (Conv2D, MaxPooling2D, AveragePooling2D): a (height,
// width) pair given as one integer or a brace pair, as Keras takes `3` or `(3, 5)`, and the
// padding mode as an enum rather than a string compared on every call.
//   Conv2D(32, 3)                                                     // 3x3, strides 1, valid
//   Conv2D(32, {3, 5}, {.strides = {2, 2}, .padding = Padding::same})
//   MaxPooling2D(2, {.strides = 1, .padding = Padding::same})
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace kerascpp {

/// A (height, width) pair, given as `3` or `{3, 5}` (see above).
struct Size2D {
  /// Rows.
  std::int64_t height = 0;
  /// Columns.
  std::int64_t width = 0;
  /// One integer means the same size on both axes: Size2D(3) is 3x3. Implicit by design, so
  /// that `3` and `{3, 5}` both read as a size where one is expected.
  Size2D(std::int64_t both) : height(both), width(both) {}  // NOLINT(google-explicit-constructor)
  /// `h` rows by `w` columns.
  Size2D(std::int64_t h, std::int64_t w) : height(h), width(w) {}
  /// Both sizes > 0.
  bool positive() const { return height > 0 && width > 0; }
  /// Same height and width.
  bool operator==(const Size2D& o) const { return height == o.height && width == o.width; }
  /// Different height or width.
  bool operator!=(const Size2D& o) const { return !(*this == o); }
};

/// A (depth, height, width) size of the 3-D layers: 2 (2x2x2) or {1, 2, 2}, as Keras takes them.
struct Size3D {
  /// Planes.
  std::int64_t depth = 0;
  /// Rows.
  std::int64_t height = 0;
  /// Columns.
  std::int64_t width = 0;
  /// One integer means the same size on all three axes; implicit by design, as Size2D's.
  Size3D(std::int64_t all) : depth(all), height(all), width(all) {}  // NOLINT(google-explicit-constructor)
  /// `d` planes by `h` rows by `w` columns.
  Size3D(std::int64_t d, std::int64_t h, std::int64_t w) : depth(d), height(h), width(w) {}
  /// All three sizes > 0.
  bool positive() const { return depth > 0 && height > 0 && width > 0; }
};

/// A Size2D that may be left unset, as Keras' `strides=None` (pooling strides then equal the pool
/// size). Takes `2` and `{2, 1}` like Size2D; std::optional<Size2D> would not take `{2, 1}`.
class OptionalSize2D {
 public:
  /// Unset.
  OptionalSize2D() = default;
  /// @{
  /// Set to a size, taken as Size2D takes it.
  OptionalSize2D(std::int64_t both) : value_(Size2D(both)) {}  // NOLINT(google-explicit-constructor)
  OptionalSize2D(std::int64_t h, std::int64_t w) : value_(Size2D(h, w)) {}
  OptionalSize2D(Size2D size) : value_(size) {}  // NOLINT(google-explicit-constructor)
  /// @}
  /// Whether a size was given.
  bool has_value() const { return value_.has_value(); }
  /// The size, or `fallback` when unset.
  Size2D value_or(Size2D fallback) const { return value_.value_or(fallback); }

 private:
  std::optional<Size2D> value_;
};

/// A Size3D that may be left unset, as Keras' `strides=None` (the 3-D poolings' strides then
/// equal the pool size). Takes `2` and `{2, 1, 1}` like Size3D.
class OptionalSize3D {
 public:
  /// Unset.
  OptionalSize3D() = default;
  /// @{
  /// Set to a size, taken as Size3D takes it.
  OptionalSize3D(std::int64_t all) : value_(Size3D(all)) {}  // NOLINT(google-explicit-constructor)
  OptionalSize3D(std::int64_t d, std::int64_t h, std::int64_t w) : value_(Size3D(d, h, w)) {}
  OptionalSize3D(Size3D size) : value_(size) {}  // NOLINT(google-explicit-constructor)
  /// @}
  /// Whether a size was given.
  bool has_value() const { return value_.has_value(); }
  /// The size, or `fallback` when unset.
  Size3D value_or(Size3D fallback) const { return value_.value_or(fallback); }

 private:
  std::optional<Size3D> value_;
};

/// Keras' padding modes: "valid" (no padding, the window stays inside the input) and "same"
/// (zero padding so that the output has ceil(input / stride) positions; the extra pixel goes to
/// the bottom/right, as in TensorFlow). "causal" (Conv1D only): kernel_size - 1 zeros before the
/// sequence and none after, so output step t sees no input after step t.
enum class Padding : std::uint8_t { valid, same, causal };

/// "valid" / "same" / "causal", the spelling in Keras configs.
const char* padding_name(Padding padding);
/// The padding named `name` ("valid", "same" or "causal", e.g. from a command-line flag); throws
/// ValueError naming `where` and the unknown name otherwise.
Padding padding_from_name(const std::string& name, const std::string& where = "padding");

}  // namespace kerascpp
