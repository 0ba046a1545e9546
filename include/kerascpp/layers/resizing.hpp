// ZeroPadding1D/2D/3D, Cropping1D/2D/3D and UpSampling1D/2D/3D (nearest; bilinear for 2-D) over
// channels-last inputs, with Keras' names, arguments and defaults (channels_last only).
//   ZeroPadding1D({1, 2})  Cropping2D({{1, 0}, {2, 2}})  UpSampling3D({1, 2, 2})
#pragma once
#include <vector>

#include "kerascpp/core/layer.hpp"
#include "kerascpp/layers/window_args.hpp"

namespace kerascpp::layers {

/// Slices added (or removed) before and after along one axis: 1 (both sides) or {before, after}.
struct AxisPadding {
  /// @{
  /// Slices before (top, left, front) and after (bottom, right, back).
  std::int64_t before = 1, after = 1;
  /// @}
  /// `both` on each side (Keras' 1); implicit by design.
  AxisPadding(std::int64_t both) : before(both), after(both) {}  // NOLINT(google-explicit-constructor): Keras' 1
  /// `b` before and `a` after.
  AxisPadding(std::int64_t b, std::int64_t a) : before(b), after(a) {}
};

/// Rows added above and below, columns added left and right (ZeroPadding2D, Cropping2D).
struct Padding2D {
  /// @{
  /// Rows above and below, columns left and right.
  std::int64_t top = 1, bottom = 1, left = 1, right = 1;
  /// @}
  /// One row or column on every side (Keras' default padding=1).
  Padding2D() = default;
  /// `all` on every side.
  Padding2D(std::int64_t all) : top(all), bottom(all), left(all), right(all) {}  // NOLINT: Keras' padding=1
  /// `rows` above and below, `columns` left and right: Keras' padding=(rows, columns).
  Padding2D(std::int64_t rows, std::int64_t columns) : top(rows), bottom(rows), left(columns), right(columns) {}
  /// Each side on its own: Keras' padding=((top, bottom), (left, right)).
  Padding2D(std::int64_t t, std::int64_t b, std::int64_t l, std::int64_t r) : top(t), bottom(b), left(l), right(r) {}
};

/// Per-axis amounts of the 3-D layers: 1 (everywhere), {1, 2, 3} (each axis symmetric) or
/// {{1, 0}, {2, 2}, {0, 3}} (before and after each of depth, height, width), as Keras takes them.
struct Padding3D {
  /// @{
  /// Before and after along depth, height and width.
  AxisPadding depth = 1, height = 1, width = 1;
  /// @}
  /// `all` before and after every axis; implicit by design.
  Padding3D(std::int64_t all) : depth(all), height(all), width(all) {}  // NOLINT(google-explicit-constructor)
  /// Depth, height and width amounts on their own.
  Padding3D(AxisPadding d, AxisPadding h, AxisPadding w) : depth(d), height(h), width(w) {}
};

/// Options of the padding and cropping layers: only the layer's name.
struct ZeroPadding2DOptions {
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};
/// The settings of ZeroPadding1D/2D/3D.
using ZeroPaddingOptions = ZeroPadding2DOptions;
/// The settings of Cropping1D/2D/3D.
using CroppingOptions = ZeroPadding2DOptions;

/// ZeroPadding1D/2D/3D (pad = true) and Cropping1D/2D/3D (pad = false): zeros added around, or
/// slices removed from, each spatial axis of a (batch, spatial..., channels) input.
class ZeroPaddingLayer : public Layer {
 public:
  /// One (before, after) per spatial axis: 1, 2 or 3 of them.
  ZeroPaddingLayer(std::vector<AxisPadding> amounts, bool pad, std::string name);
  std::string class_name() const override;
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  std::vector<AxisPadding> amounts_;
  bool pad_;
};
using ZeroPadding2DLayer = ZeroPaddingLayer;  ///< its first name
/// The cropping layers' class (pad = false).
using CroppingLayer = ZeroPaddingLayer;

/// Options of UpSampling1D/2D/3D.
struct UpSampling2DOptions {
  /// "nearest" or "bilinear" (2-D only; Keras 3's ops.image.resize: half-pixel centres, edges
  /// clamped, no antialiasing)
  std::string interpolation = "nearest";
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};
/// The settings of UpSampling1D/2D/3D.
using UpSamplingOptions = UpSampling2DOptions;

/// UpSampling1D/2D/3D: each step, pixel or voxel repeated along each spatial axis (or, 2-D
/// bilinear, interpolated).
class UpSamplingLayer : public Layer {
 public:
  /// One factor per spatial axis: 1, 2 or 3 of them.
  UpSamplingLayer(std::vector<std::int64_t> size, UpSamplingOptions options);
  std::string class_name() const override { return "UpSampling" + std::to_string(size_.size()) + "D"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  std::vector<std::int64_t> size_;
  std::string interpolation_;
};
using UpSampling2DLayer = UpSamplingLayer;  ///< its first name

/// ZeroPadding1D(1) or ZeroPadding1D({1, 2}) (before, after) on (batch, steps, features).
LayerRef ZeroPadding1D(AxisPadding padding = 1, ZeroPaddingOptions options = {});
/// ZeroPadding2D(1), ZeroPadding2D({2, 3}) (rows, columns), ZeroPadding2D({1, 2, 0, 3}) (top, bottom, left, right).
LayerRef ZeroPadding2D(Padding2D padding = {}, ZeroPadding2DOptions options = {});
/// ZeroPadding3D(1), ZeroPadding3D({1, 2, 3}) or ZeroPadding3D({{1, 0}, {2, 2}, {0, 3}}).
LayerRef ZeroPadding3D(Padding3D padding = 1, ZeroPaddingOptions options = {});
/// Cropping1D(1) or Cropping1D({1, 2}): steps removed from the start and the end.
LayerRef Cropping1D(AxisPadding cropping = 1, CroppingOptions options = {});
/// Cropping2D({2, 3}) (rows, columns) or Cropping2D({1, 2, 0, 3}) (top, bottom, left, right); default none.
LayerRef Cropping2D(Padding2D cropping = 0, CroppingOptions options = {});
/// Cropping3D(1), Cropping3D({1, 2, 3}) or Cropping3D({{1, 0}, {2, 2}, {0, 3}}).
LayerRef Cropping3D(Padding3D cropping = 1, CroppingOptions options = {});
/// UpSampling1D(2): each step repeated twice.
LayerRef UpSampling1D(std::int64_t size = 2, UpSamplingOptions options = {});
/// UpSampling2D(2) or UpSampling2D({2, 3}): each pixel repeated rows x columns times;
/// UpSampling2D(2, {.interpolation = "bilinear"}) interpolates between pixels instead.
LayerRef UpSampling2D(Size2D size = 2, UpSampling2DOptions options = {});
/// UpSampling3D(2) or UpSampling3D({1, 2, 2}): each voxel repeated depth x rows x columns times.
LayerRef UpSampling3D(Size3D size = 2, UpSamplingOptions options = {});

}  // namespace kerascpp::layers
