// CategoryEncoding: Keras' preprocessing layer that turns integer ids in [0, num_tokens) into a
// dense one-hot, multi-hot or count encoding (sparse=False). Part of the model (saved in .keras).
#pragma once
#include <cstdint>
#include <string>

#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// Keras' CategoryEncoding layer. Inputs: ids of any integer dtype (or floats holding integers),
/// (batch,) or (batch, k). Output float32: one_hot (batch, num_tokens) for (batch,) or (batch, 1)
/// inputs, (batch, k, num_tokens) otherwise; multi_hot and count (batch, num_tokens) from
/// (batch, k). An id outside [0, num_tokens) is a ValueError naming the layer.
class CategoryEncodingLayer : public Layer {
 public:
  /// output_mode: "one_hot", "multi_hot" (Keras' default; "binary" is its old name) or "count".
  CategoryEncodingLayer(std::int64_t num_tokens, std::string output_mode, std::string name);
  std::string class_name() const override { return "CategoryEncoding"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  std::int64_t num_tokens_;
  std::string output_mode_;
};

/// Keras' CategoryEncoding(num_tokens, output_mode="multi_hot", sparse=False).
LayerRef CategoryEncoding(std::int64_t num_tokens, std::string output_mode = "multi_hot", std::string name = "");

}  // namespace kerascpp::layers
