// Pooling over NHWC inputs: MaxPooling2D, AveragePooling2D (strides default to the pool size,
// like Keras) and GlobalAveragePooling2D.
#pragma once
#include <array>

#include "kerascpp/layer.hpp"

namespace kerascpp::layers {

struct Pooling2DOptions {
  std::array<std::int64_t, 2> strides{0, 0};  // 0 = pool size
  std::string padding = "valid";
  std::string name{};
};

class Pooling2DLayer : public Layer {
 public:
  Pooling2DLayer(PoolKind kind, std::int64_t pool_size, Pooling2DOptions options);
  std::string class_name() const override { return kind_ == PoolKind::max ? "MaxPooling2D" : "AveragePooling2D"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  std::string config_json() const override;

 private:
  PoolKind kind_;
  std::int64_t pool_;
  Pooling2DOptions options_;
  Pool2DGeometry geometry_;
};

class GlobalAveragePooling2DLayer : public Layer {
 public:
  explicit GlobalAveragePooling2DLayer(std::string name) : Layer(std::move(name)) {}
  std::string class_name() const override { return "GlobalAveragePooling2D"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;

 private:
  Pool2DGeometry geometry_;
};

LayerRef MaxPooling2D(std::int64_t pool_size = 2, Pooling2DOptions options = {});
LayerRef AveragePooling2D(std::int64_t pool_size = 2, Pooling2DOptions options = {});
LayerRef GlobalAveragePooling2D(std::string name = "");

}  // namespace kerascpp::layers
