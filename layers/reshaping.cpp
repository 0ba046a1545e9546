#include "kerascpp/layers/reshaping.hpp"
#include "kerascpp/core/layer_config.hpp"

#include <algorithm>

#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

ReshapeLayer::ReshapeLayer(Shape target, bool flatten, std::string name)
    : Layer(std::move(name)), target_(std::move(target)), flatten_(flatten) {
  set_input_spec({});  // one float32 input of any rank (Keras' Flatten: min_ndim=1, the batch axis)
  if (flatten_) return;
  // Checked here, not at the first call, so the error points at the line that built the layer.
  const auto unknowns = std::count(target_.begin(), target_.end(), std::int64_t{-1});
  const bool sizes_ok = std::all_of(target_.begin(), target_.end(), [](std::int64_t d) { return d > 0 || d == -1; });
  std::string dims;
  for (std::size_t i = 0; i < target_.size(); ++i) dims += (i ? ", " : "") + std::to_string(target_[i]);
  KERASCPP_CHECK_VALUE(
      !target_.empty() && sizes_ok && unknowns <= 1,
      "Reshape '{}': target_shape ({}) must list the per-example sizes (no batch axis), each positive, with "
      "at most one -1 to infer; e.g. Reshape({{28, 28, 1}}) or Reshape({{-1}})",
      Layer::name(), dims);
}

// The output shape for one example of shape `per_example` (a shared layer may see several).
Shape ReshapeLayer::resolve(const Shape& per_example) const {
  std::int64_t n = shape_numel(per_example);
  if (flatten_) return {n};
  Shape out = target_;
  int infer = -1;
  std::int64_t known = 1;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1 && infer < 0) infer = static_cast<int>(i);
    else if (out[i] <= 0)
      throw ValueError(
          fmt::format("{}: target shape {} may hold positive sizes and one -1", where(), shape_str(target_)));
    else known *= out[i];
  }
  if (infer >= 0 && known > 0 && n % known == 0) out[static_cast<std::size_t>(infer)] = n / known;
  KERASCPP_CHECK_SHAPE(shape_numel(out) == n, "{}: cannot reshape input {} ({} values per example) to target shape {}",
                       where(), shape_str(detail::with_batch(-1, per_example)), n, shape_str(target_));
  return out;
}

std::vector<Shape> ReshapeLayer::compute_output_shapes(const std::vector<Shape>& in) { return {resolve(in[0])}; }

std::vector<Tensor> ReshapeLayer::forward(ReplicaContext&, const std::vector<Tensor>& in, LayerState&) {
  Shape per_example(in[0].shape().begin() + 1, in[0].shape().end());
  return {in[0].reshape(detail::with_batch(in[0].dim(0), resolve(per_example)))};
}

std::vector<Tensor> ReshapeLayer::backward(ReplicaContext&, const std::vector<Tensor>& in, const std::vector<Tensor>&,
                                           const std::vector<Tensor>& grads, LayerState&) {
  return {grads[0].reshape(in[0].shape())};
}

Json ReshapeLayer::get_config() const {
  detail::Json config{{"name", name()}};
  if (!flatten_) config["target_shape"] = target_;
  return config;
}

LayerRef Flatten(FlattenOptions options) {
  return std::make_shared<ReshapeLayer>(Shape{}, true, std::move(options.name));
}
LayerRef Reshape(Shape target_shape, ReshapeOptions options) {
  return std::make_shared<ReshapeLayer>(std::move(target_shape), false, std::move(options.name));
}

KERASCPP_REGISTER_LAYER("Flatten", [](const LayerConfig& c) {
  c.expect_channels_last();
  return layers::Flatten({.name = c.name()});
});
KERASCPP_REGISTER_LAYER("Reshape", [](const LayerConfig& c) {
  return layers::Reshape(c.required<std::vector<std::int64_t>>("target_shape"), {.name = c.name()});
});

}  // namespace kerascpp::layers
