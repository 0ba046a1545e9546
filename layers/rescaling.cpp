// Rescaling: y = x * scale + offset with the Backend's copy, scale and bias_add (the offset as a
// per-channel bias of equal values, so no new op is needed).
#include "kerascpp/layers/rescaling.hpp"

#include "check.hpp"
#include "kerascpp/core/layer_config.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

RescalingLayer::RescalingLayer(float scale, RescalingOptions options)
    : Layer(std::move(options.name)), scale_(scale), offset_(options.offset) {
  KERASCPP_CHECK_VALUE(std::isfinite(scale_) && std::isfinite(offset_),
                       "Rescaling '{}': scale and offset must be finite numbers, got scale {} and offset {}", name(),
                       scale_, offset_);
  set_input_spec({});  // one float32 input of any shape
}

std::vector<Tensor> RescalingLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState&) {
  Tensor y(in[0].shape(), DType::float32, in[0].device());
  ctx.backend->copy(in[0], y);
  ctx.backend->scale(y, scale_);
  if (offset_ != 0.f && y.rank() > 0 && y.numel() > 0)
    ctx.backend->bias_add(y, Tensor::full({y.dim(-1)}, offset_).to(y.device()));
  return {y};
}

std::vector<Tensor> RescalingLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>&,
                                             const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                             LayerState&) {
  Tensor dx(grads[0].shape(), DType::float32, grads[0].device());
  ctx.backend->copy(grads[0], dx);
  ctx.backend->scale(dx, scale_);
  return {dx};
}

Json RescalingLayer::get_config() const {
  return detail::Json(
      {{"name", name()}, {"scale", detail::json_float(scale_)}, {"offset", detail::json_float(offset_)}});
}

LayerRef Rescaling(float scale, RescalingOptions options) {
  return std::make_shared<RescalingLayer>(scale, std::move(options));
}

namespace {

// Keras writes scale and offset as plain numbers, or as serialized arrays when they were given
// per channel; only numbers are taken here.
float scalar(const LayerConfig& c, const char* key, float fallback) {
  const Json* v = c.find(key);
  if (!v) return fallback;
  if (!v->is_number())
    c.fail(fmt::format("'{}' is {}: only a single number is supported (not one per channel)", key, v->dump()));
  return v->get<float>();
}

}  // namespace

KERASCPP_REGISTER_LAYER("Rescaling", [](const LayerConfig& c) {
  return layers::Rescaling(scalar(c, "scale", 1.f), {.offset = scalar(c, "offset", 0.f), .name = c.name()});
});

}  // namespace kerascpp::layers
