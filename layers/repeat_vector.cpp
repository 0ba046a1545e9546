#include "kerascpp/layers/repeat_vector.hpp"
#include "kerascpp/core/layer_config.hpp"

#include "axis_blocks.hpp"
#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

RepeatVectorLayer::RepeatVectorLayer(std::int64_t n, RepeatVectorOptions options)
    : Layer(std::move(options.name)), n_(n) {
  KERASCPP_CHECK_VALUE(n_ >= 1, "RepeatVector '{}': n (the number of copies) must be >= 1, got {}", name(), n_);
  set_input_spec({.ndim = 2,
                  .layout = "(batch, features)",
                  .rank_hint = "RepeatVector repeats a vector per example; Flatten first"});
}

std::vector<Shape> RepeatVectorLayer::compute_output_shapes(const std::vector<Shape>& in) { return {{n_, in[0][0]}}; }

// (B, D) viewed as (B, 1, D), its one step repeated n times: detail::repeat_axis, one concat.
std::vector<Tensor> RepeatVectorLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState&) {
  return {detail::repeat_axis(*ctx.backend, in[0].reshape({in[0].dim(0), 1, in[0].dim(1)}), 1, n_)};
}

std::vector<Tensor> RepeatVectorLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                                LayerState&) {
  if (n_ == 1) return {grads[0].reshape(in[0].shape())};
  return {detail::repeat_axis_backward(*ctx.backend, grads[0], 1, n_).reshape(in[0].shape())};
}

Json RepeatVectorLayer::get_config() const { return detail::Json({{"name", name()}, {"n", n_}}); }

LayerRef RepeatVector(std::int64_t n, RepeatVectorOptions options) {
  return std::make_shared<RepeatVectorLayer>(n, std::move(options));
}

KERASCPP_REGISTER_LAYER("RepeatVector", [](const LayerConfig& c) {
  return layers::RepeatVector(c.required<std::int64_t>("n"), {.name = c.name()});
});

}  // namespace kerascpp::layers
