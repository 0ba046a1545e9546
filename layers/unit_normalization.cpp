// UnitNormalization on the Backend's l2_normalize_rows. Keras clamps the factor 1/‖x‖ at 1/ε with
// ε = 1e-12 here and 1e-7 in Dot(normalize=True); the op clamps at 1/1e-7, so the two differ only
// for a row whose norm is below 1e-7 (scaled by 1e7 here rather than by up to 1e12).
#include "kerascpp/layers/unit_normalization.hpp"
#include "kerascpp/core/layer_config.hpp"

#include "layer_util.hpp"

namespace kerascpp::layers {

UnitNormalizationLayer::UnitNormalizationLayer(UnitNormalizationOptions options) : Layer(std::move(options.name)) {
  set_input_spec({.min_ndim = 2, .layout = "(batch, ..., features)"});
}

// st.saved: the rows' factors, kept for the backward.
std::vector<Tensor> UnitNormalizationLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                    LayerState& st) {
  Tensor rows, inv;
  ctx.backend->l2_normalize_rows(in[0].reshape({-1, in[0].dim(-1)}), rows, inv);
  st.saved = {inv};
  return {rows.reshape(in[0].shape())};
}

std::vector<Tensor> UnitNormalizationLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                     const std::vector<Tensor>& out, const std::vector<Tensor>& grads,
                                                     LayerState& st) {
  const std::int64_t features = in[0].dim(-1);
  Tensor y = out[0].reshape({-1, features});
  Tensor inv = st.saved.empty() ? Tensor() : st.saved[0];
  if (!inv.defined()) {  // a backward after a forward whose state was not kept: normalise again
    Tensor again;
    ctx.backend->l2_normalize_rows(in[0].reshape({-1, features}), again, inv);
  }
  Tensor dx;
  ctx.backend->l2_normalize_rows_backward(y, grads[0].reshape({-1, features}), inv, dx);
  return {dx.reshape(in[0].shape())};
}

Json UnitNormalizationLayer::get_config() const { return detail::Json({{"name", name()}, {"axis", -1}}); }

LayerRef UnitNormalization(UnitNormalizationOptions options) {
  return std::make_shared<UnitNormalizationLayer>(std::move(options));
}

KERASCPP_REGISTER_LAYER("UnitNormalization", [](const LayerConfig& c) {
  c.expect_last_axis(0);
  return layers::UnitNormalization({.name = c.name()});
});

}  // namespace kerascpp::layers
