// Conv2D over NHWC inputs with an HWIO kernel (Keras layout); "valid" or "same" padding.
#pragma once
#include <array>
#include <optional>

#include "kerascpp/layer.hpp"

namespace kerascpp::layers {

struct Conv2DOptions {
  std::array<std::int64_t, 2> strides{1, 1};
  std::string padding = "valid";  // "valid" | "same"
  std::string activation = "linear";
  bool use_bias = true;
  std::string kernel_initializer = "glorot_uniform";
  std::string bias_initializer = "zeros";
  std::optional<std::uint64_t> seed{};
  std::string name{};
  std::array<std::int64_t, 2> kernel_size_hw{0, 0};  // overrides the square kernel_size when set
};

class Conv2DLayer : public Layer {
 public:
  Conv2DLayer(std::int64_t filters, std::int64_t kernel_size, Conv2DOptions options);
  std::string class_name() const override { return "Conv2D"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  std::string config_json() const override;

 private:
  Conv2DGeometry geometry_for(std::int64_t height, std::int64_t width) const;
  std::int64_t filters_;
  std::int64_t kh_, kw_;
  Conv2DOptions options_;
  kerascpp::Activation activation_;
  Variable* kernel_ = nullptr;
  Variable* bias_ = nullptr;
};

LayerRef Conv2D(std::int64_t filters, std::int64_t kernel_size, Conv2DOptions options = {});

}  // namespace kerascpp::layers
