// DepthwiseConv2D over NHWC inputs: each input channel is convolved with its own
// depth_multiplier filters; kernel "depthwise_kernel" (kh, kw, channels, depth_multiplier) and
// a (channels * depth_multiplier) bias, as in Keras.
//   DepthwiseConv2D(3)  DepthwiseConv2D({3, 5}, {.strides = 2, .padding = Padding::same, .depth_multiplier = 2})
#pragma once
#include <optional>

#include "kerascpp/layer.hpp"
#include "kerascpp/layers/window_args.hpp"

namespace kerascpp::layers {

struct DepthwiseConv2DOptions {
  Size2D strides = 1;
  Padding padding = Padding::valid;
  std::int64_t depth_multiplier = 1;
  std::string activation = "linear";
  bool use_bias = true;
  initializers::Initializer depthwise_initializer = "glorot_uniform";
  initializers::Initializer bias_initializer = "zeros";
  regularizers::Regularizer depthwise_regularizer{};  // e.g. regularizers::L2(1e-4)
  regularizers::Regularizer bias_regularizer{};
  constraints::Constraint depthwise_constraint{};  // e.g. constraints::MaxNorm(3)
  constraints::Constraint bias_constraint{};
  std::optional<std::uint64_t> seed{};
  std::string name{};
};

class DepthwiseConv2DLayer : public Layer {
 public:
  DepthwiseConv2DLayer(Size2D kernel_size, DepthwiseConv2DOptions options);
  std::string class_name() const override { return "DepthwiseConv2D"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  Conv2DGeometry geometry_for(std::int64_t height, std::int64_t width) const;
  Size2D kernel_size_;
  DepthwiseConv2DOptions options_;
  ActivationFn activation_;
  Variable* kernel_ = nullptr;
  Variable* bias_ = nullptr;
};

// kernel_size: 3 (3x3) or {height, width}.
LayerRef DepthwiseConv2D(Size2D kernel_size, DepthwiseConv2DOptions options = {});

}  // namespace kerascpp::layers
