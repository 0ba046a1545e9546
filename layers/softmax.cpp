#include "kerascpp/layers/softmax.hpp"
#include "kerascpp/core/layer_config.hpp"

#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

SoftmaxLayer::SoftmaxLayer(SoftmaxOptions options) : Layer(options.name), options_(std::move(options)) {
  set_input_spec({.min_ndim = 1, .layout = "(batch, ...)"});
}

std::vector<Shape> SoftmaxLayer::compute_output_shapes(const std::vector<Shape>& in) {
  // `in` has no batch axis; the layer's axis counts it, as in Keras.
  const int rank = static_cast<int>(in[0].size()) + 1;
  KERASCPP_CHECK_VALUE(
      options_.axis >= -rank && options_.axis < rank,
      "Softmax '{}': axis {} is out of range for an input of rank {} (batch axis included); use an axis "
      "in -{}..{}",
      name(), options_.axis, rank, rank, rank - 1);
  return {in[0]};
}

namespace {

// Keras' Softmax with a mask: masked inputs become -1e9 before the softmax and the masked
// outputs 0 after it (a wholly masked row gives zeros). The mask must cover the input's trailing
// axes, e.g. [B, T] on [B, T]; Keras refuses masks that do not broadcast, and so does this.
Tensor mask_of(const LayerState& st, const Tensor& x, const std::string& where) {
  if (st.input_masks.empty() || !st.input_masks[0].defined()) return Tensor();
  const Tensor& m = st.input_masks[0];
  bool fits = m.rank() <= x.rank() && m.rank() >= 1;
  for (int i = 1; fits && i < m.rank(); ++i) fits = m.dim(i) == x.dim(x.rank() - m.rank() + i);
  KERASCPP_CHECK_VALUE(
      fits,
      "{}: the input's mask {} does not cover the input {}; Keras' Softmax needs a mask that broadcasts "
      "to its input (e.g. a (batch, steps) mask on (batch, steps) scores); drop the mask before this "
      "layer or apply the softmax to the masked axis only",
      where, shape_str(m.shape()), shape_str(x.shape()));
  return m;
}

}  // namespace

std::vector<Tensor> SoftmaxLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  Tensor y(in[0].shape());
  const Tensor mask = mask_of(st, in[0], where());
  if (!mask.defined()) {
    ctx.backend->softmax_axis_forward(in[0], options_.axis, y);
    return {y};
  }
  Tensor masked_x = in[0].clone();
  ctx.backend->masked_fill(masked_x, mask, -1e9f);
  ctx.backend->softmax_axis_forward(masked_x, options_.axis, y);
  ctx.backend->masked_fill(y, mask, 0.f);
  return {y};
}

std::vector<Tensor> SoftmaxLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                           const std::vector<Tensor>& out, const std::vector<Tensor>& grads,
                                           LayerState& st) {
  Tensor dx(grads[0].shape());
  const Tensor mask = mask_of(st, in[0], where());
  Tensor dy = grads[0];
  if (mask.defined()) {  // the where() after the softmax passes no gradient at masked outputs
    dy = grads[0].clone();
    ctx.backend->masked_fill(dy, mask, 0.f);
  }
  ctx.backend->softmax_axis_backward(out[0], dy, options_.axis, dx);
  if (mask.defined()) ctx.backend->masked_fill(dx, mask, 0.f);  // nor at masked inputs (where() before)
  return {dx};
}

Json SoftmaxLayer::get_config() const { return detail::Json({{"name", name()}, {"axis", options_.axis}}); }

LayerRef Softmax(SoftmaxOptions options) { return std::make_shared<SoftmaxLayer>(std::move(options)); }

KERASCPP_REGISTER_LAYER("Softmax", [](const LayerConfig& c) {
  return layers::Softmax({.axis = c.get("axis", -1), .name = c.name()});
});

}  // namespace kerascpp::layers
