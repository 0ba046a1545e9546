// Small helpers shared by the layer implementations.
#pragma once
#include <fmt/format.h>

#include <charconv>
#include <nlohmann/json.hpp>
#include <string>

#include "kerascpp/layer.hpp"
#include "kerascpp/layer_config.hpp"
#include "kerascpp/layers/window_args.hpp"

namespace kerascpp::detail {

// The input spec of the NHWC image layers (pooling, padding, upsampling).
inline InputSpec nhwc_image_spec() {
  return {.ndim = 4,
          .layout = "(batch, height, width, channels)",
          .rank_hint = "add a channel axis with Reshape, e.g. Reshape({28, 28, 1})"};
}

// The input spec of the channels-last layers with `spatial` (1, 2 or 3) spatial axes.
inline InputSpec spatial_spec(std::size_t spatial) {
  if (spatial == 2) return nhwc_image_spec();
  if (spatial == 1) return {.ndim = 3, .layout = "(batch, steps, features)"};
  return {.ndim = 5, .layout = "(batch, depth, height, width, channels)"};
}

// Full tensor shape for a batch of `batch` examples of per-example shape `s`.
inline Shape with_batch(std::int64_t batch, const Shape& s) {
  Shape out{batch};
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

// Keras output length of a windowed op along one axis.
inline std::int64_t window_output(std::int64_t in, std::int64_t k, std::int64_t s, bool same) {
  return same ? (in + s - 1) / s : (in - k) / s + 1;
}

// "same" padding split like TensorFlow: the extra pixel goes to the bottom/right.
inline void same_padding(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t& before, std::int64_t& after) {
  std::int64_t out = (in + s - 1) / s;
  std::int64_t total = std::max<std::int64_t>((out - 1) * s + k - in, 0);
  before = total / 2;
  after = total - before;
}

// Dense's and Conv2D's Layer::low_precision_io: their backends take 16-bit activations with
// these two activations (relu's backward runs in 16 bits too).
inline Layer::LowPrecisionIO product_low_precision_io(ActivationKind act) {
  return act == ActivationKind::relu || act == ActivationKind::linear ? Layer::LowPrecisionIO::any
                                                                      : Layer::LowPrecisionIO::none;
}

// Gradient before a fused activation, from the layer's output y and dL/dy (no copy for linear).
inline Tensor through_activation(ReplicaContext& ctx, ActivationKind act, const Tensor& y, const Tensor& dy) {
  if (act == ActivationKind::linear) return dy;
  Tensor dz(dy.shape(), dy.dtype());
  ctx.backend->activation_backward(act, y, dy, dz);
  return dz;
}

// Starts a kernel+bias layer's weight gradients on replica r: whether this call writes them
// first (overwrite) or adds to an earlier call's, and the bias gradient (undefined without bias).
struct KernelBiasGrads {
  bool first;
  Tensor bias;
};
inline KernelBiasGrads take_kernel_bias_grads(const std::string& where, Variable& kernel, Variable* bias, int r) {
  KernelBiasGrads g{kernel.take_first_grad(r), Tensor()};
  if (bias) {
    if (bias->take_first_grad(r) != g.first)
      throw StateError(fmt::format("{}: kernel and bias gradients out of step", where));
    g.bias = bias->grad(r);
  }
  return g;
}

// A layer's config as Keras writes it: keys in insertion order ("name" first).
using Json = kerascpp::Json;

// A float argument as the shortest decimal that reads back as the same float: 0.99f is written
// 0.99 (as Keras writes the Python float), not 0.9900000095367432. from_chars, unlike stod, does
// not read the decimal point from the program's locale.
inline double json_float(float v) {
  const std::string text = fmt::format("{}", v);
  double out = static_cast<double>(v);  // NaN/inf (rejected by the layers anyway) stay as they are
  std::from_chars(text.data(), text.data() + text.size(), out);
  return out;
}

inline Json json_size2d(const Size2D& s) { return Json::array({s.height, s.width}); }

// Keras' "<weight>_regularizer" / "<weight>_constraint" config entries, only when set (Keras'
// from_config takes the defaults, None, for absent keys).
inline void add_weight_options(Json& config, const std::string& weight, const regularizers::Regularizer& r,
                               const constraints::Constraint& c) {
  if (r) config[weight + "_regularizer"] = Json::parse(r.config_json());
  if (c) config[weight + "_constraint"] = Json::parse(c.config_json());
}

// The settings Dense and the convolutions share in a config (activation, bias, kernel and bias
// regularizers and constraints, name), read into their options struct.
template <class Options>
Options read_kernel_options(const LayerConfig& c, Options o) {
  o.activation = c.str("activation", "linear");
  o.use_bias = c.get("use_bias", true);
  o.kernel_regularizer = c.regularizer("kernel_regularizer");
  o.bias_regularizer = c.regularizer("bias_regularizer");
  o.kernel_constraint = c.constraint("kernel_constraint");
  o.bias_constraint = c.constraint("bias_constraint");
  o.name = c.name();
  return o;
}

}  // namespace kerascpp::detail
