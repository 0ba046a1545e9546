#include "kerascpp/layers/activation.hpp"
#include "kerascpp/core/layer_config.hpp"

#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

ActivationLayer::ActivationLayer(const ActivationFn& activation, ActivationOptions options)
    : Layer(std::move(options.name)), activation_(activation) {
  set_input_spec({});  // one float32 input of any shape
}

std::vector<Shape> ActivationLayer::compute_output_shapes(const std::vector<Shape>& in) {
  if (!activation_.changes_shape() && !activation_.along_axis()) return {in[0]};
  // The axis-wise ones need it (batch axis included); glu halves it.
  const int rank = static_cast<int>(in[0].size()) + 1;
  const int axis = activation_.axis < 0 ? activation_.axis + rank : activation_.axis;
  KERASCPP_CHECK_SHAPE(axis >= 1 && axis < rank,
                       "{}: {} along axis {} needs an input with that non-batch axis; got shape {}", where(),
                       activation_name(activation_), activation_.axis, shape_str(in[0]));
  Shape out = in[0];
  if (activation_.changes_shape()) {
    std::int64_t& d = out[static_cast<std::size_t>(axis - 1)];
    KERASCPP_CHECK_SHAPE(d < 0 || d % 2 == 0,
                         "{}: glu splits axis {} into two halves, so its size must be even; got shape {}", where(),
                         activation_.axis, shape_str(in[0]));
    if (d >= 0) d /= 2;
  }
  return {out};
}

std::vector<Tensor> ActivationLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState&) {
  if (activation_ == ActivationKind::linear) return {in[0]};
  Tensor y;  // the backend gives it its shape (glu halves an axis)
  ctx.backend->activation_forward(activation_, in[0], y);
  return {y};
}

std::vector<Tensor> ActivationLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                              const std::vector<Tensor>& out, const std::vector<Tensor>& grads,
                                              LayerState&) {
  if (activation_ == ActivationKind::linear) return {grads[0]};
  Tensor dx;
  ctx.backend->activation_backward(activation_, in[0], out[0], grads[0], dx);
  return {dx};
}

Json ActivationLayer::get_config() const {
  return detail::Json({{"name", name()}, {"activation", activation_config_name(activation_, name())}});
}

LayerRef Activation(const std::string& activation, ActivationOptions options) {
  return std::make_shared<ActivationLayer>(activation_from_name(activation, "Activation"), std::move(options));
}

LayerRef Activation(const ActivationFn& activation, ActivationOptions options) {
  return std::make_shared<ActivationLayer>(activation, std::move(options));
}

KERASCPP_REGISTER_LAYER("Activation", [](const LayerConfig& c) {
  return layers::Activation(c.str("activation", "linear"), {.name = c.name()});
});

}  // namespace kerascpp::layers
