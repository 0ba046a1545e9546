// BatchNormalization over the last (channel) axis, Keras defaults (momentum 0.99, epsilon 1e-3).
// Training normalises with batch statistics; `synchronized` all-reduces them across replicas.
#pragma once
#include "kerascpp/layer.hpp"

namespace kerascpp::layers {

struct BatchNormalizationOptions {
  float momentum = 0.99f;
  float epsilon = 1e-3f;
  bool synchronized = false;
  std::string name{};
};

class BatchNormalizationLayer : public Layer {
 public:
  explicit BatchNormalizationLayer(BatchNormalizationOptions options);
  std::string class_name() const override { return "BatchNormalization"; }
  bool supports_masking() const override { return true; }  // the mask passes through, as in Keras
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  void forward_empty(ReplicaContext& ctx) override;
  void backward_empty(ReplicaContext& ctx) override;
  Json get_config() const override;

 private:
  void update_moving_statistics(ReplicaContext& ctx, const Tensor& mean, const Tensor& var);
  BatchNormalizationOptions options_;
  std::int64_t channels_ = 0;
  Variable *gamma_ = nullptr, *beta_ = nullptr, *moving_mean_ = nullptr, *moving_variance_ = nullptr;
};

LayerRef BatchNormalization(BatchNormalizationOptions options = {});

}  // namespace kerascpp::layers
