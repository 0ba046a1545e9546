// Small helpers shared by the layer implementations.
#pragma once
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <string>

#include "check.hpp"
#include "kerascpp/core/layer.hpp"
#include "kerascpp/core/layer_config.hpp"
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

// The input spec of the 1-D convolutions (Conv1D, DepthwiseConv1D, SeparableConv1D).
inline InputSpec sequence_conv_spec() {
  return {.ndim = 3,
          .layout = "(batch, steps, channels)",
          .rank_hint = "add a channel axis with Reshape, e.g. Reshape({100, 1})"};
}

// A (batch, steps, channels) sequence as the image (batch, 1, steps, channels): the same bytes,
// so the 2-D convolution ops run the 1-D convolutions on views.
inline Tensor sequence_as_image(const Tensor& t) { return t.reshape({t.dim(0), 1, t.dim(1), t.dim(2)}); }

// A 1-D convolution's kernel (k, ...) as the 2-D one (1, k, ...) of sequence_as_image's views.
inline Tensor kernel_1d_as_2d(const Tensor& w) {
  Shape s = w.shape();
  s.insert(s.begin(), 1);
  return w.reshape(s);
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

// The transposed convolutions (Conv1DTranspose, Conv2DTranspose), along one axis.
// Keras' output length without output_padding: in·stride ("same") or (in−1)·stride +
// max(kernel, stride) ("valid").
inline std::int64_t transpose_output(std::int64_t in, std::int64_t k, std::int64_t s, bool same) {
  return same ? in * s : (in - 1) * s + std::max(k, s);
}

// Padding of the Conv2D from the output (length `out`) back to the input (length `in`).
// Keras pads the stride-dilated input by `left` = k−1 ("valid") or min(⌈(s+k−2)/2⌉, k−1)
// ("same") before a stride-1 convolution with the flipped kernel; output position o then
// gathers input i through kernel tap t where o = i·s + t − (k−1−left), which is the Conv2D
// with `before` = k−1−left. `after` is what makes that Conv2D give `in` outputs again (0 when
// the last output rows get no contribution at all: "valid" with a kernel smaller than the
// stride, whose extra rows stay zero, as in Keras).
inline void transpose_padding(std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t s, bool same,
                              std::int64_t& before, std::int64_t& after) {
  std::int64_t left = k - 1;
  if (same) {
    const std::int64_t total = s + k - 2;
    left = std::min(total / 2 + total % 2, k - 1);
  }
  before = k - 1 - left;
  after = std::max<std::int64_t>((in - 1) * s + k - out - before, 0);
}

// Dense's and Conv2D's Layer::low_precision_io: their backends take 16-bit activations with
// these two activations (relu's backward runs in 16 bits too).
inline Layer::LowPrecisionIO product_low_precision_io(const ActivationFn& act) {
  return act == ActivationKind::relu || act == ActivationKind::linear ? Layer::LowPrecisionIO::any
                                                                      : Layer::LowPrecisionIO::none;
}

// The activation of a layer with a kernel (Dense, the convolutions), from its `activation=`
// name. glu is refused: it halves the last axis, so the output would not have `units`/`filters`
// features (Keras' own output shape for it is wrong too).
inline ActivationFn kernel_layer_activation(const std::string& name, const std::string& where) {
  ActivationFn act = activation_from_name(name, where);
  KERASCPP_CHECK_VALUE(!act.changes_shape(),
                       "{}: activation \"{}\" halves the last axis, so the layer's output would not have its "
                       "declared size; apply it with a separate Activation(\"{}\") layer",
                       where, name, name);
  return act;
}

// The activation a kernel layer lets its backend op fuse: all of it where the backward needs
// only the output y, else none (linear): the layer then keeps the product z and applies the
// activation itself (finish_activation), since the backward needs z.
inline ActivationFn fusable_activation(const ActivationFn& act) {
  return act.gradient_from_output() ? act : ActivationFn(ActivationKind::linear);
}

// After the backend op ran with fusable_activation(act): the layer's output. Where the op did not
// apply act, keeps z in st.saved for through_activation and returns act(z).
inline Tensor finish_activation(ReplicaContext& ctx, const ActivationFn& act, const Tensor& z, LayerState& st) {
  if (act.gradient_from_output()) return z;
  st.saved = {z};
  Tensor y(z.shape());
  ctx.backend->activation_forward(act, z, y);
  return y;
}

// The product z that finish_activation kept, or y itself where the activation was fused.
inline const Tensor& pre_activation(const ActivationFn& act, const Tensor& y, const LayerState& st) {
  if (act.gradient_from_output()) return y;
  KERASCPP_CHECK_STATE(!st.saved.empty(), "backward through {} without its forward's pre-activation; run forward first",
                       activation_name(act));
  return st.saved[0];
}

// Gradient before the activation, from the layer's output y and dL/dy (no copy for linear), or
// from the product z kept by finish_activation.
inline Tensor through_activation(ReplicaContext& ctx, const ActivationFn& act, const Tensor& y, const Tensor& dy,
                                 const LayerState& st) {
  if (act == ActivationKind::linear) return dy;
  Tensor dz(dy.shape(), dy.dtype());
  ctx.backend->activation_backward(act, pre_activation(act, y, st), y, dy, dz);
  return dz;
}

// For backend ops that run the activation's backward themselves from (act, y, dy), such as
// conv2d_backward: what to pass them. Where the layer applied the activation itself, its backward
// runs here and the op gets linear, the product z and dL/dz.
struct ActivationGrad {
  ActivationFn act;
  Tensor y, dy;
};
inline ActivationGrad op_activation_grad(ReplicaContext& ctx, const ActivationFn& act, const Tensor& y,
                                         const Tensor& dy, const LayerState& st) {
  if (act.gradient_from_output()) return {act, y, dy};
  return {ActivationKind::linear, pre_activation(act, y, st), through_activation(ctx, act, y, dy, st)};
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
    KERASCPP_CHECK_STATE(bias->take_first_grad(r) == g.first, "{}: kernel and bias gradients out of step", where);
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
