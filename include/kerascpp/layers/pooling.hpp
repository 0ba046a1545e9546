// Pooling over channels-last inputs, with Keras' names and defaults (strides default to the pool
// size): MaxPooling1D/2D/3D, AveragePooling1D/2D/3D and GlobalMax/GlobalAveragePooling1D/2D/3D,
// and Keras' aliases (MaxPool2D, AvgPool1D, GlobalAvgPool2D, ...).
//   MaxPooling2D(2)  MaxPooling2D({3, 2}, {.strides = 1, .padding = Padding::same})  AvgPool1D(3)
#pragma once
#include <optional>
#include <vector>

#include "kerascpp/core/layer.hpp"
#include "kerascpp/layers/window_args.hpp"

namespace kerascpp::layers {

/// Options of MaxPooling2D and AveragePooling2D.
struct Pooling2DOptions {
  OptionalSize2D strides{};  ///< 2 or {2, 1}; unset: the pool size (Keras' strides=None)
  /// Padding::valid (none) or Padding::same (ceil(input / stride) outputs).
  Padding padding = Padding::valid;
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Options of MaxPooling1D and AveragePooling1D.
struct Pooling1DOptions {
  std::optional<std::int64_t> strides{};  ///< unset: the pool size (Keras' strides=None)
  /// Padding::valid (none) or Padding::same (ceil(input / stride) outputs).
  Padding padding = Padding::valid;
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Options of MaxPooling3D and AveragePooling3D.
struct Pooling3DOptions {
  OptionalSize3D strides{};  ///< 2 or {1, 2, 2}; unset: the pool size (Keras' strides=None)
  /// Padding::valid (none) or Padding::same (ceil(input / stride) outputs).
  Padding padding = Padding::valid;
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Options of the global poolings.
struct GlobalPoolingOptions {
  bool keepdims = false;  ///< keep the pooled axes with size 1, as Keras' keepdims=True
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};
/// GlobalAveragePooling2D's settings (its earlier name).
using GlobalAveragePooling2DOptions = GlobalPoolingOptions;
/// GlobalMaxPooling2D's settings (its earlier name).
using GlobalMaxPooling2DOptions = GlobalPoolingOptions;

/// Keras' MaxPooling2D and AveragePooling2D (make them with MaxPooling2D() and AveragePooling2D()).
class Pooling2DLayer : public Layer {
 public:
  /// Max or average over windows of `pool_size`.
  Pooling2DLayer(PoolKind kind, Size2D pool_size, Pooling2DOptions options);
  /// "MaxPooling2D" or "AveragePooling2D".
  std::string class_name() const override { return kind_ == PoolKind::max ? "MaxPooling2D" : "AveragePooling2D"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;
  /// 16-bit activations pass through in the output's dtype.
  LowPrecisionIO low_precision_io() const override { return LowPrecisionIO::same_as_output; }
  /// True for max pooling (see Layer::ends_in_relu).
  bool absorbs_input_relu_backward() const override { return kind_ == PoolKind::max; }
  /// True for max pooling (see Layer::ends_in_relu).
  bool absorbs_input_relu_forward() const override { return kind_ == PoolKind::max; }

 private:
  Pool2DGeometry geometry_for(std::int64_t height, std::int64_t width) const;
  PoolKind kind_;
  Size2D pool_size_;
  Size2D strides_;
  Padding padding_;
};

/// MaxPooling1D/3D and AveragePooling1D/3D, on the Backend's 2-D pooling: a sequence is an image
/// of height 1, and a 3-D pooling is a 2-D pooling of each depth slice followed by one along the
/// depth axis (max and mean over a box are both separable, padding excluded).
class PoolingNDLayer : public Layer {
 public:
  /// pool_size and strides: one per spatial axis (1 or 3).
  PoolingNDLayer(PoolKind kind, std::vector<std::int64_t> pool_size, std::vector<std::int64_t> strides, Padding padding,
                 std::string name);
  std::string class_name() const override;
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;
  LowPrecisionIO low_precision_io() const override { return LowPrecisionIO::same_as_output; }

 private:
  // The 2-D pooling along spatial axes (a, a+1) (a 1-D pooling: the axis pair (none, a)).
  Pool2DGeometry stage_geometry(std::size_t first_axis, std::size_t second_axis, std::int64_t first_size,
                                std::int64_t second_size) const;
  PoolKind kind_;
  std::vector<std::int64_t> pool_size_, strides_;
  Padding padding_;
};

/// The mean (average) or the maximum (max) of each channel over every spatial axis:
/// (N, spatial..., C) -> (N, C), or (N, 1..., C) with keepdims. GlobalAveragePooling1D averages
/// only the unmasked steps of a masked input, as Keras does (0 for a wholly masked sequence).
class GlobalPoolingLayer : public Layer {
 public:
  /// Average or max over the `spatial_rank` (1, 2 or 3) spatial axes.
  GlobalPoolingLayer(PoolKind kind, int spatial_rank, GlobalPoolingOptions options);
  std::string class_name() const override;
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  bool masked_mean(const LayerState& st) const;
  PoolKind kind_;
  int spatial_rank_;
  bool keepdims_;
};
using GlobalPooling2DLayer = GlobalPoolingLayer;  ///< earlier names
/// The global poolings' class under another earlier name.
using GlobalAveragePooling2DLayer = GlobalPoolingLayer;

// pool_size: 2 (2x2) or {height, width}.
/// Keras' MaxPooling2D(pool_size): the maximum of each window, per channel.
LayerRef MaxPooling2D(Size2D pool_size = 2, Pooling2DOptions options = {});
/// Keras' AveragePooling2D(pool_size): the mean of each window, per channel.
LayerRef AveragePooling2D(Size2D pool_size = 2, Pooling2DOptions options = {});
/// MaxPooling1D(2) over (batch, steps, features).
LayerRef MaxPooling1D(std::int64_t pool_size = 2, Pooling1DOptions options = {});
/// AveragePooling1D(3) over (batch, steps, features), padding excluded from the means.
LayerRef AveragePooling1D(std::int64_t pool_size, Pooling1DOptions options = {});
/// MaxPooling3D(2) or MaxPooling3D({1, 2, 2}) over (batch, depth, height, width, channels).
LayerRef MaxPooling3D(Size3D pool_size = 2, Pooling3DOptions options = {});
/// AveragePooling3D(2) over (batch, depth, height, width, channels), padding excluded from the means.
LayerRef AveragePooling3D(Size3D pool_size, Pooling3DOptions options = {});
/// GlobalAveragePooling2D(): (batch, height, width, channels) -> (batch, channels), the mean.
LayerRef GlobalAveragePooling2D(GlobalPoolingOptions options = {});
/// GlobalMaxPooling2D(): (batch, height, width, channels) -> (batch, channels), the maximum.
LayerRef GlobalMaxPooling2D(GlobalPoolingOptions options = {});
/// GlobalAveragePooling1D(): (batch, steps, features) -> (batch, features), the mean over unmasked steps.
LayerRef GlobalAveragePooling1D(GlobalPoolingOptions options = {});
/// GlobalMaxPooling1D(): (batch, steps, features) -> (batch, features).
LayerRef GlobalMaxPooling1D(GlobalPoolingOptions options = {});
/// GlobalAveragePooling3D(): (batch, depth, height, width, channels) -> (batch, channels).
LayerRef GlobalAveragePooling3D(GlobalPoolingOptions options = {});
/// GlobalMaxPooling3D(): (batch, depth, height, width, channels) -> (batch, channels).
LayerRef GlobalMaxPooling3D(GlobalPoolingOptions options = {});

// Keras' aliases: the same layers under their short names (a .keras file names the long one).
/// Alias of MaxPooling1D.
inline LayerRef MaxPool1D(std::int64_t pool_size = 2, Pooling1DOptions options = {}) {
  return MaxPooling1D(pool_size, std::move(options));
}
/// Alias of MaxPooling2D.
inline LayerRef MaxPool2D(Size2D pool_size = 2, Pooling2DOptions options = {}) {
  return MaxPooling2D(pool_size, std::move(options));
}
/// Alias of MaxPooling3D.
inline LayerRef MaxPool3D(Size3D pool_size = 2, Pooling3DOptions options = {}) {
  return MaxPooling3D(pool_size, std::move(options));
}
/// Alias of AveragePooling1D.
inline LayerRef AvgPool1D(std::int64_t pool_size, Pooling1DOptions options = {}) {
  return AveragePooling1D(pool_size, std::move(options));
}
/// Alias of AveragePooling2D.
inline LayerRef AvgPool2D(Size2D pool_size = 2, Pooling2DOptions options = {}) {
  return AveragePooling2D(pool_size, std::move(options));
}
/// Alias of AveragePooling3D.
inline LayerRef AvgPool3D(Size3D pool_size, Pooling3DOptions options = {}) {
  return AveragePooling3D(pool_size, std::move(options));
}
/// Alias of GlobalAveragePooling1D.
inline LayerRef GlobalAvgPool1D(GlobalPoolingOptions options = {}) {
  return GlobalAveragePooling1D(std::move(options));
}
/// Alias of GlobalAveragePooling2D.
inline LayerRef GlobalAvgPool2D(GlobalPoolingOptions options = {}) {
  return GlobalAveragePooling2D(std::move(options));
}
/// Alias of GlobalAveragePooling3D.
inline LayerRef GlobalAvgPool3D(GlobalPoolingOptions options = {}) {
  return GlobalAveragePooling3D(std::move(options));
}
/// Alias of GlobalMaxPooling1D.
inline LayerRef GlobalMaxPool1D(GlobalPoolingOptions options = {}) { return GlobalMaxPooling1D(std::move(options)); }
/// Alias of GlobalMaxPooling2D.
inline LayerRef GlobalMaxPool2D(GlobalPoolingOptions options = {}) { return GlobalMaxPooling2D(std::move(options)); }
/// Alias of GlobalMaxPooling3D.
inline LayerRef GlobalMaxPool3D(GlobalPoolingOptions options = {}) { return GlobalMaxPooling3D(std::move(options)); }

}  // namespace kerascpp::layers
