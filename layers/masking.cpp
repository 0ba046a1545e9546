#include "kerascpp/layers/masking.hpp"
#include "kerascpp/core/layer_config.hpp"

#include <cmath>

#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

MaskingLayer::MaskingLayer(MaskingOptions options) : Layer(std::move(options.name)), mask_value_(options.mask_value) {
  KERASCPP_CHECK_VALUE(!std::isnan(mask_value_),
                       "Masking '{}': mask_value is NaN, which no value equals, so nothing would be masked", name());
  set_input_spec({.min_ndim = 2, .layout = "(batch, ..., features)"});
}

namespace {
// x with the rows whose mask is 0 set to zero (x viewed as [rows, features] over the mask [rows]).
Tensor zero_masked_rows(Backend& be, const Tensor& x, const Tensor& mask) {
  Tensor y = x.clone();
  Tensor rows = y.reshape({mask.numel(), x.dim(-1)});
  be.masked_fill(rows, mask.reshape({mask.numel()}), 0.f);
  return y;
}
}  // namespace

// st.saved[0]: the mask, kept for the backward and compute_output_masks.
std::vector<Tensor> MaskingLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  Tensor mask;
  ctx.backend->mask_not_equal(in[0], mask_value_, mask);
  st.saved = {mask};
  return {zero_masked_rows(*ctx.backend, in[0], mask)};
}

std::vector<Tensor> MaskingLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                           const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                           LayerState& st) {
  if (st.saved.empty()) forward(ctx, in, st);
  return {zero_masked_rows(*ctx.backend, grads[0], st.saved[0])};
}

std::vector<Tensor> MaskingLayer::compute_output_masks(ReplicaContext&, const std::vector<Tensor>&,
                                                       const std::vector<Tensor>&, const LayerState& st) {
  return {st.saved.empty() ? Tensor() : st.saved[0]};
}

Json MaskingLayer::get_config() const {
  return detail::Json({{"name", name()}, {"mask_value", detail::json_float(mask_value_)}});
}

LayerRef Masking(MaskingOptions options) { return std::make_shared<MaskingLayer>(std::move(options)); }

KERASCPP_REGISTER_LAYER("Masking", [](const LayerConfig& c) {
  return layers::Masking({.mask_value = c.get("mask_value", 0.f), .name = c.name()});
});

}  // namespace kerascpp::layers
