// GroupNormalization over the last (channel) axis, Keras defaults (groups 32, epsilon 1e-3,
// center and scale on): the channels are split into `groups` groups, and each example's group
// (all its spatial positions and the group's channels) is normalised by its own mean and
// variance, then y = x̂·gamma + beta per channel. groups = -1 is instance normalization (one
// group per channel). No batch statistics: training and inference compute the same thing.
//   GroupNormalization({.groups = 4})
#pragma once
#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// GroupNormalization's settings, with Keras' names and defaults.
struct GroupNormalizationOptions {
  /// Groups the channels are split into (they must divide the channel count); -1: one per channel.
  std::int64_t groups = 32;
  /// Added to the variance before its square root.
  float epsilon = 1e-3f;
  bool center = true;  ///< learn beta (shift)
  bool scale = true;   ///< learn gamma (scale)
  /// How beta starts: an initializer name or initializers::Constant(v).
  initializers::Initializer beta_initializer = "zeros";
  /// How gamma starts.
  initializers::Initializer gamma_initializer = "ones";
  regularizers::Regularizer beta_regularizer{};   ///< e.g. regularizers::L2(1e-4)
  regularizers::Regularizer gamma_regularizer{};  ///< penalty on gamma added to the loss
  constraints::Constraint beta_constraint{};      ///< e.g. constraints::MaxNorm(3)
  constraints::Constraint gamma_constraint{};     ///< projection of gamma after each update
  /// The layer's name; "" gives it an automatic one from its class ("group_normalization", ...).
  std::string name{};
};

/// Keras' GroupNormalization over the last axis (make it with GroupNormalization()).
class GroupNormalizationLayer : public Layer {
 public:
  /// A layer with these settings; gamma and beta are made in build().
  explicit GroupNormalizationLayer(GroupNormalizationOptions options);
  std::string class_name() const override { return "GroupNormalization"; }
  bool supports_masking() const override { return true; }  // the mask passes through, as in Keras
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  // x [B, S, G, Cg] (S: the spatial positions) as the rows [B·G, S·Cg] that layer_norm_* normalise,
  // and back; a copy only where the axes really move (S > 1 and G > 1).
  Tensor to_group_rows(ReplicaContext& ctx, const Tensor& x) const;
  Tensor from_group_rows(ReplicaContext& ctx, const Tensor& rows, const Shape& shape) const;
  GroupNormalizationOptions options_;
  std::int64_t channels_ = 0;
  Variable *gamma_ = nullptr, *beta_ = nullptr;  // null when scale / center is off
};

/// Keras' GroupNormalization(): each example's channel groups normalised by their own statistics.
LayerRef GroupNormalization(GroupNormalizationOptions options = {});

}  // namespace kerascpp::layers
