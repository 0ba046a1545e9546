// BatchNormalization over the last (channel) axis, Keras defaults (momentum 0.99, epsilon 1e-3).
// Training normalises with batch statistics; `synchronized` all-reduces them across replicas.
#pragma once
#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// BatchNormalization's settings, with Keras' names and defaults.
struct BatchNormalizationOptions {
  /// Weight of the old moving statistics in each update.
  float momentum = 0.99f;
  /// Added to the variance before its square root.
  float epsilon = 1e-3f;
  /// All-reduce the batch statistics across replicas (synchronized batch normalization).
  bool synchronized = false;
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Keras' BatchNormalization over the last axis (make it with BatchNormalization()).
class BatchNormalizationLayer : public Layer {
 public:
  /// A layer with these settings; gamma, beta and the moving statistics are made in build().
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

/// Keras' BatchNormalization(): normalises each channel with batch statistics in training, moving ones in inference.
LayerRef BatchNormalization(BatchNormalizationOptions options = {});

}  // namespace kerascpp::layers
