// Conv2DTranspose (a "deconvolution") over NHWC inputs: the transpose of a Conv2D, so an input
// of (h, w) grows to (h·stride, w·stride) with "same" padding or (h-1)·stride + max(kernel,
// stride) with "valid", as Keras computes it without output_padding. Kernel (kh, kw, filters,
// in_channels), as in Keras.
//   Conv2DTranspose(16, 3, {.strides = 2, .padding = Padding::same})
#pragma once
#include <optional>

#include "kerascpp/layer.hpp"
#include "kerascpp/layers/window_args.hpp"

namespace kerascpp::layers {

struct Conv2DTransposeOptions {
  Size2D strides = 1;
  Padding padding = Padding::valid;
  std::string activation = "linear";
  bool use_bias = true;
  initializers::Initializer kernel_initializer = "glorot_uniform";
  initializers::Initializer bias_initializer = "zeros";
  regularizers::Regularizer kernel_regularizer{};  // e.g. regularizers::L2(1e-4)
  regularizers::Regularizer bias_regularizer{};
  constraints::Constraint kernel_constraint{};  // e.g. constraints::MaxNorm(3)
  constraints::Constraint bias_constraint{};
  std::optional<std::uint64_t> seed{};
  std::string name{};
};

class Conv2DTransposeLayer : public Layer {
 public:
  Conv2DTransposeLayer(std::int64_t filters, Size2D kernel_size, Conv2DTransposeOptions options);
  std::string class_name() const override { return "Conv2DTranspose"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  // The Conv2D whose backward-data pass this layer's forward is: it maps the output
  // (out_h, out_w, filters) back to the input (h, w, in_channels).
  Conv2DGeometry geometry_for(std::int64_t height, std::int64_t width) const;
  std::int64_t filters_;
  Size2D kernel_size_;
  Conv2DTransposeOptions options_;
  ActivationFn activation_;
  Variable* kernel_ = nullptr;
  Variable* bias_ = nullptr;
};

// kernel_size: 3 (3x3) or {height, width}.
LayerRef Conv2DTranspose(std::int64_t filters, Size2D kernel_size, Conv2DTransposeOptions options = {});
/// Keras' alias of Conv2DTranspose (a .keras file names Conv2DTranspose).
inline LayerRef Convolution2DTranspose(std::int64_t filters, Size2D kernel_size, Conv2DTransposeOptions options = {}) {
  return Conv2DTranspose(filters, kernel_size, std::move(options));
}

}  // namespace kerascpp::layers
