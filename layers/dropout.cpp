#include "kerascpp/layers/dropout.hpp"
#include "kerascpp/core/layer_config.hpp"

#include "check.hpp"
#include "kerascpp/core/random.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

DropoutLayer::DropoutLayer(float rate, DropoutOptions options)
    : Layer(options.name), rate_(rate), seed_(options.seed ? *options.seed : next_random_seed()) {
  KERASCPP_CHECK_VALUE(rate_ >= 0.f && rate_ < 1.f,
                       "Dropout '{}': rate must be in [0, 1) (the fraction of inputs dropped), got {}", name(), rate_);
  set_input_spec({});  // one float32 input of any shape
}

std::vector<Shape> DropoutLayer::compute_output_shapes(const std::vector<Shape>& in) { return {in[0]}; }

std::vector<Tensor> DropoutLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  st.saved.clear();
  if (!ctx.training || rate_ == 0.f) return {in[0]};
  Tensor y(in[0].shape());
  Tensor mask(in[0].shape());
  // The replica's stream advances every step, so masks differ per step and replica yet replay exactly.
  ctx.backend->dropout_forward(in[0], rate_, seed_ ^ ctx.rng.next_u64(), y, mask);
  st.saved.push_back(mask);
  return {y};
}

std::vector<Tensor> DropoutLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>&, const std::vector<Tensor>&,
                                           const std::vector<Tensor>& grads, LayerState& st) {
  if (st.saved.empty()) return {grads[0]};
  Tensor dx(grads[0].shape());
  ctx.backend->multiply(grads[0], st.saved[0], dx);
  return {dx};
}

Json DropoutLayer::get_config() const { return detail::Json({{"name", name()}, {"rate", detail::json_float(rate_)}}); }

LayerRef Dropout(float rate, DropoutOptions options) {
  return std::make_shared<DropoutLayer>(rate, std::move(options));
}

KERASCPP_REGISTER_LAYER("Dropout", [](const LayerConfig& c) {
  c.expect("noise_shape", nullptr, "one mask element per input element");
  layers::DropoutOptions o{.name = c.name()};
  if (c.find("seed")) o.seed = c.get<std::uint64_t>("seed", 0);
  return layers::Dropout(c.required<float>("rate"), o);
});

}  // namespace kerascpp::layers
