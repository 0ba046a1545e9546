// Normalization: (x - mean) / sqrt(variance + 1e-14) per feature of the last axis, through the
// Backend's batchnorm_forward_inference (no scale or shift). Keras divides by
// max(sqrt(variance), 1e-7): the same at variance 0, and within 1e-14 / (2 variance) relative
// elsewhere. adapt() reads the dataset on the host: it runs before training, not in a step.
#include "kerascpp/layers/normalization.hpp"

#include <cmath>

#include "check.hpp"
#include "kerascpp/core/layer_config.hpp"
#include "kerascpp/layers/input_layer.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {
namespace {

// epsilon() squared: sqrt(0 + kVarianceFloor) is Keras' floor of the standard deviation.
constexpr float kVarianceFloor = 1e-14f;

// `values` (one, or one per channel) as `channels` values.
std::vector<float> per_channel(const std::vector<float>& values, std::int64_t channels) {
  if (values.size() == 1) return std::vector<float>(static_cast<std::size_t>(channels), values[0]);
  return values;
}

// Runs (x - mean) / sqrt(var + floor) over the last axis of x.
Tensor standardize(Backend& be, const Tensor& x, const Tensor& mean, const Tensor& var, std::int64_t channels) {
  Tensor y(x.shape(), DType::float32, x.device());
  if (x.numel() == 0) return y;
  Tensor y2 = y.reshape({-1, channels});
  be.batchnorm_forward_inference(x.reshape({-1, channels}), Tensor(), Tensor(), mean, var, kVarianceFloor, y2);
  return y;
}

}  // namespace

NormalizationLayer::NormalizationLayer(NormalizationOptions options)
    : Layer(options.name), options_(std::move(options)) {
  KERASCPP_CHECK_VALUE(options_.axis == -1,
                       "Normalization '{}': only axis=-1 (the last axis, Keras' default) is supported, got {}; "
                       "move the feature axis last with Permute",
                       name(), options_.axis);
  KERASCPP_CHECK_VALUE(options_.mean.has_value() == options_.variance.has_value(),
                       "Normalization '{}': give both mean and variance, or neither (then call adapt())", name());
  if (options_.mean) {
    KERASCPP_CHECK_VALUE(!options_.mean->empty() && options_.mean->size() == options_.variance->size(),
                         "Normalization '{}': mean and variance must have the same, non-zero, number of values; "
                         "got {} and {}",
                         name(), options_.mean->size(), options_.variance->size());
    for (float v : *options_.variance)
      KERASCPP_CHECK_VALUE(v >= 0.f, "Normalization '{}': variance values must be >= 0, got {}", name(), v);
  }
  set_input_spec({.min_ndim = 2});
}

void NormalizationLayer::build(const std::vector<Shape>& in) {
  channels_ = in[0].back();
  KERASCPP_CHECK_SHAPE(channels_ > 0, "{}: the last axis of the input {} must have a known size", where(),
                       shape_str(detail::with_batch(-1, in[0])));
  KERASCPP_CHECK_VALUE(
      !options_.mean || options_.mean->size() == 1 || static_cast<std::int64_t>(options_.mean->size()) == channels_,
      "{}: {} mean and variance values for an input of {} features; give one, or one per feature", where(),
      options_.mean ? options_.mean->size() : 0, channels_);
  set_input_spec({.min_ndim = 2, .axes = {{-1, channels_}}, .layout = "(batch, ..., features)"});
  if (options_.mean) return;  // fixed statistics: no weights, as in Keras
  mean_ = &add_weight("mean", {channels_}, "zeros", false, 0);
  variance_ = &add_weight("variance", {channels_}, "ones", false, 0);
  count_ = &add_weight("count", {}, "zeros", false, 0);
}

Tensor NormalizationLayer::mean_on(ReplicaContext& ctx) const {
  if (mean_) return mean_->value(ctx.replica_id);
  return Tensor::from_vector({channels_}, per_channel(*options_.mean, channels_)).to(ctx.backend->device());
}

Tensor NormalizationLayer::variance_on(ReplicaContext& ctx) const {
  if (variance_) return variance_->value(ctx.replica_id);
  return Tensor::from_vector({channels_}, per_channel(*options_.variance, channels_)).to(ctx.backend->device());
}

std::vector<Tensor> NormalizationLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState&) {
  return {standardize(*ctx.backend, in[0], mean_on(ctx), variance_on(ctx), channels_)};
}

std::vector<Tensor> NormalizationLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>&,
                                                 const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                                 LayerState&) {
  // d/dx of (x - mean) / s is 1 / s: the same op on dy with a zero mean.
  const Tensor zeros = Tensor::zeros({channels_}, DType::float32, ctx.backend->device());
  return {standardize(*ctx.backend, grads[0], zeros, variance_on(ctx), channels_)};
}

Json NormalizationLayer::get_config() const {
  auto values = [](const std::optional<std::vector<float>>& v) {
    if (!v) return nlohmann::json(nullptr);
    nlohmann::json out = nlohmann::json::array();
    for (float x : *v) out.push_back(detail::json_float(x));
    return out;
  };
  return detail::Json({{"name", name()},
                       {"axis", {options_.axis}},
                       {"invert", false},
                       {"mean", values(options_.mean)},
                       {"variance", values(options_.variance)}});
}

void NormalizationLayer::set_statistics(const std::vector<double>& mean, const std::vector<double>& variance,
                                        std::int64_t count) {
  std::vector<float> m(mean.begin(), mean.end()), v(variance.begin(), variance.end());
  mean_->assign(Tensor::from_vector({channels_}, m));
  variance_->assign(Tensor::from_vector({channels_}, v));
  count_->assign(Tensor::from_vector({}, std::vector<float>{static_cast<float>(count)}));
}

void NormalizationLayer::adapt(const Dataset& data) {
  KERASCPP_CHECK_VALUE(!options_.mean,
                       "Normalization '{}': adapt() needs a layer without fixed mean and variance; this one was "
                       "given them",
                       name());
  std::vector<double> mean, variance;
  std::int64_t total = 0;
  auto it = data.make_iterator();
  for (Example e; it->next(e);) {
    KERASCPP_CHECK_VALUE(!e.empty() && e[0].rank() >= 1,
                         "Normalization '{}': adapt() needs elements whose first component has a feature axis", name());
    const Tensor& x = e[0];
    if (!built()) (void)(*this)(Input({x.dim(-1)}, DType::float32, name() + "_adapt_input"));
    KERASCPP_CHECK_VALUE(x.dim(-1) == channels_,
                         "Normalization '{}': adapt() got an element of shape {} but the layer has {} features", name(),
                         shape_str(x.shape()), channels_);
    // This element's mean and population variance per feature (two passes, float64), then
    // combined with the running ones by their counts as Keras' adapt combines its batches.
    const std::vector<float> v = x.to_vector();
    const auto C = static_cast<std::size_t>(channels_);
    const std::size_t rows = v.size() / C;
    if (rows == 0) continue;
    std::vector<double> m(C, 0.0), s(C, 0.0);
    for (std::size_t i = 0; i < v.size(); ++i) m[i % C] += v[i];
    for (double& a : m) a /= static_cast<double>(rows);
    for (std::size_t i = 0; i < v.size(); ++i) s[i % C] += (v[i] - m[i % C]) * (v[i] - m[i % C]);
    for (double& a : s) a /= static_cast<double>(rows);
    if (mean.empty()) {
      mean = m;
      variance = s;
      total = static_cast<std::int64_t>(rows);
      continue;
    }
    total += static_cast<std::int64_t>(rows);
    const double w_new = static_cast<double>(rows) / static_cast<double>(total), w_old = 1.0 - w_new;
    for (std::size_t c = 0; c < C; ++c) {
      const double combined = mean[c] * w_old + m[c] * w_new;
      variance[c] = (variance[c] + (mean[c] - combined) * (mean[c] - combined)) * w_old +
                    (s[c] + (m[c] - combined) * (m[c] - combined)) * w_new;
      mean[c] = combined;
    }
  }
  KERASCPP_CHECK_VALUE(total > 0, "Normalization '{}': adapt() got a dataset with no values", name());
  set_statistics(mean, variance, total);
}

std::shared_ptr<NormalizationLayer> Normalization(NormalizationOptions options) {
  return std::make_shared<NormalizationLayer>(std::move(options));
}

namespace {

std::optional<std::vector<float>> statistics(const LayerConfig& c, const char* key) {
  const Json* v = c.find(key);
  if (!v) return std::nullopt;
  if (v->is_number()) return std::vector<float>{v->get<float>()};
  if (!v->is_array()) c.fail(fmt::format("'{}' is {}: expected a number or a list of numbers", key, v->dump()));
  std::vector<float> out;
  for (const Json& x : *v) {
    if (!x.is_number()) c.fail(fmt::format("'{}' is {}: only a flat list of numbers is supported", key, v->dump()));
    out.push_back(x.get<float>());
  }
  return out;
}

}  // namespace

KERASCPP_REGISTER_LAYER("Normalization", [](const LayerConfig& c) {
  c.expect("invert", false, "x normalised, not the inverse");
  int axis = -1;
  if (const Json* a = c.find("axis")) {
    if (a->is_number_integer()) axis = a->get<int>();
    else if (a->is_array() && a->size() == 1 && (*a)[0].is_number_integer()) axis = (*a)[0].get<int>();
    else c.fail(fmt::format("'axis' is {}: only the last axis, -1, is supported", a->dump()));
  } else {
    c.fail("'axis' is None (one statistic over every axis): only the last axis, -1, is supported");
  }
  return LayerRef(layers::Normalization(
      {.axis = axis, .mean = statistics(c, "mean"), .variance = statistics(c, "variance"), .name = c.name()}));
});

}  // namespace kerascpp::layers
