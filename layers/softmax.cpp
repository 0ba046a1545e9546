#include "kerascpp/layers/softmax.hpp"

#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

SoftmaxLayer::SoftmaxLayer(SoftmaxOptions options) : Layer(options.name), options_(std::move(options)) {
  set_input_spec({.min_ndim = 1, .layout = "(batch, ...)"});
}

std::vector<Shape> SoftmaxLayer::compute_output_shapes(const std::vector<Shape>& in) {
  // `in` has no batch axis; the layer's axis counts it, as in Keras.
  const int rank = static_cast<int>(in[0].size()) + 1;
  KERASCPP_CHECK(options_.axis >= -rank && options_.axis < rank, ValueError,
                 "Softmax '{}': axis {} is out of range for an input of rank {} (batch axis included); use an axis "
                 "in -{}..{}",
                 name(), options_.axis, rank, rank, rank - 1);
  return {in[0]};
}

std::vector<Tensor> SoftmaxLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState&) {
  Tensor y(in[0].shape());
  ctx.backend->softmax_axis_forward(in[0], options_.axis, y);
  return {y};
}

std::vector<Tensor> SoftmaxLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>&,
                                           const std::vector<Tensor>& out, const std::vector<Tensor>& grads,
                                           LayerState&) {
  Tensor dx(grads[0].shape());
  ctx.backend->softmax_axis_backward(out[0], grads[0], options_.axis, dx);
  return {dx};
}

std::string SoftmaxLayer::config_json() const { return detail::dump({{"name", name()}, {"axis", options_.axis}}); }

LayerRef Softmax(SoftmaxOptions options) { return std::make_shared<SoftmaxLayer>(std::move(options)); }

}  // namespace kerascpp::layers
