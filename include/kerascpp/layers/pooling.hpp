// Pooling over NHWC inputs: MaxPooling2D, AveragePooling2D (strides default to the pool size,
// like Keras), GlobalAveragePooling2D and GlobalMaxPooling2D.
//   MaxPooling2D(2)  MaxPooling2D({3, 2}, {.strides = 1, .padding = Padding::same})
#pragma once
#include "kerascpp/layer.hpp"
#include "kerascpp/layers/window_args.hpp"

namespace kerascpp::layers {

struct Pooling2DOptions {
  OptionalSize2D strides{};  // 2 or {2, 1}; unset: the pool size (Keras' strides=None)
  Padding padding = Padding::valid;
  std::string name{};
};

struct GlobalAveragePooling2DOptions {
  std::string name{};
};
using GlobalMaxPooling2DOptions = GlobalAveragePooling2DOptions;

class Pooling2DLayer : public Layer {
 public:
  Pooling2DLayer(PoolKind kind, Size2D pool_size, Pooling2DOptions options);
  std::string class_name() const override { return kind_ == PoolKind::max ? "MaxPooling2D" : "AveragePooling2D"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;
  LowPrecisionIO low_precision_io() const override { return LowPrecisionIO::same_as_output; }
  bool absorbs_input_relu_backward() const override { return kind_ == PoolKind::max; }
  bool absorbs_input_relu_forward() const override { return kind_ == PoolKind::max; }

 private:
  Pool2DGeometry geometry_for(std::int64_t height, std::int64_t width) const;
  PoolKind kind_;
  Size2D pool_size_;
  Size2D strides_;
  Padding padding_;
};

// The mean (average) or the maximum (max) of each channel over the whole image: (N, H, W, C) -> (N, C).
class GlobalPooling2DLayer : public Layer {
 public:
  GlobalPooling2DLayer(PoolKind kind, GlobalAveragePooling2DOptions options);
  std::string class_name() const override {
    return kind_ == PoolKind::max ? "GlobalMaxPooling2D" : "GlobalAveragePooling2D";
  }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;

 private:
  PoolKind kind_;
};
using GlobalAveragePooling2DLayer = GlobalPooling2DLayer;  // its first name

// pool_size: 2 (2x2) or {height, width}.
LayerRef MaxPooling2D(Size2D pool_size = 2, Pooling2DOptions options = {});
LayerRef AveragePooling2D(Size2D pool_size = 2, Pooling2DOptions options = {});
LayerRef GlobalAveragePooling2D(GlobalAveragePooling2DOptions options = {});
LayerRef GlobalMaxPooling2D(GlobalMaxPooling2DOptions options = {});

}  // namespace kerascpp::layers
