// RMSNormalization from Backend ops, as oneDNN 2.x has no RMS normalization primitive: a column
// of √(C·ε) appended to the rows x [R, C] makes their squared L2 norm Σx² + C·ε, so
// l2_normalize_rows gives x / √(Σx² + C·ε) = x / (√C · √(mean(x²) + ε)) in its first C
// columns (its 1/ε clamp never applies: the norm is at least √(C·ε)); times √C that is
// Keras' x / rms. The learned per-feature scale is a 1x1 depthwise convolution of the rows,
// whose backward ops give dx and d(scale) directly.
#include "kerascpp/layers/rms_normalization.hpp"
#include "kerascpp/core/layer_config.hpp"

#include <cmath>

#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

RMSNormalizationLayer::RMSNormalizationLayer(RMSNormalizationOptions options)
    : Layer(options.name), options_(std::move(options)) {
  KERASCPP_CHECK_VALUE(options_.epsilon > 0.f && std::isfinite(options_.epsilon),
                       "RMSNormalization '{}': epsilon must be a positive finite number, got {}", name(),
                       options_.epsilon);
  set_input_spec({.min_ndim = 2,
                  .layout = "(batch, ..., features)",
                  .rank_hint = "RMSNormalization normalises the last (feature) axis"});
}

void RMSNormalizationLayer::build(const std::vector<Shape>& in) {
  features_ = in[0].back();
  set_input_spec({.min_ndim = 2, .axes = {{-1, features_}}, .layout = "(batch, ..., features)"});
  scale_ = &add_weight("scale", {features_}, "ones", true, 0);
}

namespace {

// The per-feature scaling y[r, c] = z[r, c]·w[c] as a depthwise convolution: rows as 1x1 images.
Conv2DGeometry pointwise() { return {}; }  // 1x1 kernel, stride 1, no padding

struct Normalized {
  Tensor z;    // x / rms, [R, C]
  Tensor ye;   // the l2-normalised extended rows [R, C + 1]
  Tensor inv;  // their factors [R]
};

Normalized normalize(Backend& be, const Tensor& x2, float epsilon) {
  const std::int64_t rows = x2.dim(0), features = x2.dim(1);
  Tensor column = Tensor::zeros({rows, 1}, DType::float32, x2.device());
  Tensor value = Tensor::zeros({1}, DType::float32, x2.device());
  value.fill(std::sqrt(static_cast<float>(features) * epsilon));
  be.bias_add(column, value);
  Tensor extended({rows, features + 1});
  be.concat({x2, column}, 1, extended);
  Normalized n;
  be.l2_normalize_rows(extended, n.ye, n.inv);
  std::vector<Tensor> parts{Tensor({rows, features}), Tensor({rows, 1})};
  be.split(n.ye, 1, parts);
  n.z = parts[0];
  be.scale(n.z, std::sqrt(static_cast<float>(features)));
  return n;
}

}  // namespace

// st.saved: z, the extended rows' normalised values and their factors (for the backward).
std::vector<Tensor> RMSNormalizationLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  const Tensor x2 = in[0].reshape({-1, features_});
  Normalized n = normalize(*ctx.backend, x2, options_.epsilon);
  Tensor y(in[0].shape());
  Tensor y4 = y.reshape({-1, 1, 1, features_});
  ctx.backend->depthwise_conv2d_forward(n.z.reshape({-1, 1, 1, features_}),
                                        scale_->value(ctx.replica_id).reshape({1, 1, features_, 1}), Tensor(),
                                        pointwise(), ActivationKind::linear, y4);
  st.saved = {n.z, n.ye, n.inv};
  return {y};
}

std::vector<Tensor> RMSNormalizationLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                    const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                                    LayerState& st) {
  Backend& be = *ctx.backend;
  const int r = ctx.replica_id;
  if (st.saved.size() != 3) {  // a backward after a forward whose state was not kept: normalise again
    Normalized n = normalize(be, in[0].reshape({-1, features_}), options_.epsilon);
    st.saved = {n.z, n.ye, n.inv};
  }
  const Tensor& z = st.saved[0];
  const std::int64_t rows = z.dim(0);
  const Tensor dy = grads[0].reshape({rows, 1, 1, features_});
  const Tensor w = scale_->value(r).reshape({1, 1, features_, 1});
  const bool first = scale_->take_first_grad(r);
  Tensor dw = scale_->grad(r).reshape({1, 1, features_, 1});
  Tensor no_bias;
  be.depthwise_conv2d_backward_weights(z.reshape({rows, 1, 1, features_}), dy, pointwise(), dw, no_bias, !first);
  Tensor dz({rows, 1, 1, features_});
  be.depthwise_conv2d_backward_data(dy, w, pointwise(), dz);
  Tensor dz2 = dz.reshape({rows, features_});
  be.scale(dz2, std::sqrt(static_cast<float>(features_)));
  Tensor dextended({rows, features_ + 1});
  be.concat({dz2, Tensor::zeros({rows, 1}, DType::float32, dz2.device())}, 1, dextended);
  Tensor dxe;
  be.l2_normalize_rows_backward(st.saved[1], dextended, st.saved[2], dxe);
  std::vector<Tensor> parts{Tensor({rows, features_}), Tensor({rows, 1})};
  be.split(dxe, 1, parts);
  return {parts[0].reshape(in[0].shape())};
}

Json RMSNormalizationLayer::get_config() const {
  return detail::Json({{"name", name()},
                       {"axis", std::vector<int>{-1}},  // Keras writes the built layer's axis as a list
                       {"epsilon", detail::json_float(options_.epsilon)}});
}

LayerRef RMSNormalization(RMSNormalizationOptions options) {
  return std::make_shared<RMSNormalizationLayer>(std::move(options));
}

KERASCPP_REGISTER_LAYER("RMSNormalization", [](const LayerConfig& c) {
  c.expect_last_axis(0);
  return layers::RMSNormalization({.epsilon = c.get("epsilon", 1e-6f), .name = c.name()});
});

}  // namespace kerascpp::layers
