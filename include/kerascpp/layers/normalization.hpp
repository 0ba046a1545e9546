// Normalization: Keras' preprocessing layer (x - mean) / max(sqrt(variance), 1e-7) per feature of
// the last axis, with the statistics given or computed from a dataset by adapt(); part of the model
// (saved in .keras, applied in predict).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "kerascpp/core/layer.hpp"
#include "kerascpp/data/dataset.hpp"

namespace kerascpp::layers {

/// Normalization's settings, with Keras' defaults (axis=-1, mean=None, variance=None, invert=False).
struct NormalizationOptions {
  /// The feature axis: only -1 (the last one, Keras' default) is supported.
  int axis = -1;
  /// @{
  /// Fixed statistics: one value for every feature, or one per feature. Given, the layer has no
  /// weights and adapt() is refused; not given, it holds Keras' mean, variance and count weights.
  std::optional<std::vector<float>> mean{};
  std::optional<std::vector<float>> variance{};
  /// @}
  /// The layer's name; "" gives it an automatic one from its class ("normalization", ...).
  std::string name{};
};

/// Keras' Normalization layer (the last axis; invert=False).
class NormalizationLayer : public Layer {
 public:
  /// A layer with these settings; its weights (when it has any) are made in build().
  explicit NormalizationLayer(NormalizationOptions options);
  std::string class_name() const override { return "Normalization"; }
  bool supports_masking() const override { return true; }
  void build(const std::vector<Shape>& in) override;
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override { return {in[0]}; }
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

  /// Keras' adapt: the mean and (population) variance of every feature over all the rows of the
  /// first component of every element of `data` (batched or not), as Keras combines its batches,
  /// here in float64. Builds the layer when it is not built yet. ValueError for fixed statistics,
  /// an empty dataset, or elements whose last axis differs from the layer's.
  void adapt(const Dataset& data);

 private:
  // The statistics as [channels] tensors on `device`.
  Tensor mean_on(ReplicaContext& ctx) const;
  Tensor variance_on(ReplicaContext& ctx) const;
  void set_statistics(const std::vector<double>& mean, const std::vector<double>& variance, std::int64_t count);

  NormalizationOptions options_;
  std::int64_t channels_ = -1;
  Variable* mean_ = nullptr;      // adapted: Keras' "mean", "variance" and "count" weights
  Variable* variance_ = nullptr;  //
  Variable* count_ = nullptr;     // float32 here (Keras: int); read from Keras' integer files
};

/// Keras' Normalization(axis=-1, mean=None, variance=None): adapt() it, or give the statistics.
std::shared_ptr<NormalizationLayer> Normalization(NormalizationOptions options = {});

}  // namespace kerascpp::layers
