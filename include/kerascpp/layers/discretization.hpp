// Discretization: Keras' preprocessing layer that buckets float values by bin boundaries (given,
// or computed by adapt() as Keras' approximate quantiles) into bin ids or their encodings.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kerascpp/core/layer.hpp"
#include "kerascpp/data/dataset.hpp"

namespace kerascpp::layers {

/// Discretization's settings, with Keras' defaults. Give bin_boundaries, or num_bins and call adapt().
struct DiscretizationOptions {
  /// Increasing boundaries b: value x goes to bin i where b[i-1] <= x < b[i] (len(b) + 1 bins).
  std::optional<std::vector<float>> bin_boundaries{};
  /// The number of bins adapt() computes boundaries for.
  std::optional<std::int64_t> num_bins{};
  /// adapt()'s quantile error: the summaries keep about 1 / epsilon points.
  double epsilon = 0.01;
  /// "int" (bin ids in the input's shape; float32 holding whole numbers, where Keras gives int32:
  /// kerascpp's layer outputs are float32), "one_hot", "multi_hot" or "count" (float32).
  std::string output_mode = "int";
  /// The layer's name; "" gives it an automatic one ("discretization", ...).
  std::string name{};
};

/// Keras' Discretization layer (sparse=False).
class DiscretizationLayer : public Layer {
 public:
  /// ValueError for both or neither of bin_boundaries and num_bins, num_bins < 0, boundaries
  /// that decrease, or an unknown output_mode.
  explicit DiscretizationLayer(DiscretizationOptions options);
  std::string class_name() const override { return "Discretization"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

  /// Keras' adapt: every element of `data` (a batch, or one example) is summarized and merged
  /// into the running summary as Keras' update_state does, then num_bins - 1 boundaries are
  /// read off it (Keras' finalize_state). ValueError for a layer made with bin_boundaries or an
  /// empty dataset.
  void adapt(const Dataset& data);
  /// Sets adapted boundaries on a num_bins layer (what Keras' from_config does with a config
  /// that has both). ValueError for decreasing boundaries.
  void set_bin_boundaries(std::vector<float> boundaries);
  /// The boundaries in use (empty before adapt() for a num_bins layer).
  const std::vector<float>& bin_boundaries() const { return boundaries_; }

 private:
  std::int64_t depth() const { return static_cast<std::int64_t>(boundaries_.size()) + 1; }

  DiscretizationOptions options_;
  std::vector<float> boundaries_;
  bool adapted_ = false;
};

/// Keras' Discretization(bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int").
std::shared_ptr<DiscretizationLayer> Discretization(DiscretizationOptions options);

}  // namespace kerascpp::layers
