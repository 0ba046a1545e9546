// PReLU on existing Backend ops: alpha is tiled to the input's shape with concat (exact, and its
// backward is the sum of the tiles), then y = relu(x) + A * min(x, 0).
#include "kerascpp/layers/prelu.hpp"

#include <algorithm>

#include "kerascpp/core/layer_config.hpp"

#include "check.hpp"
#include "kerascpp/core/random.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

namespace {

// t repeated `times` times along `axis` (a size-1 axis of t).
Tensor tile(Backend& be, const Tensor& t, int axis, std::int64_t times) {
  Tensor out;
  be.concat(std::vector<Tensor>(static_cast<std::size_t>(times), t), axis, out);
  return out;
}

// The inverse for gradients: the `times` tiles of g along `axis` summed.
Tensor untile(Backend& be, const Tensor& g, int axis, std::int64_t times) {
  Shape part = g.shape();
  part[static_cast<std::size_t>(axis)] /= times;
  std::vector<Tensor> parts;
  for (std::int64_t i = 0; i < times; ++i) parts.emplace_back(part);
  be.split(g, axis, parts);
  Tensor sum;
  be.add(parts, sum);
  return sum;
}

}  // namespace

PReLULayer::PReLULayer(PReLUOptions options) : Layer(options.name), options_(std::move(options)) {
  set_input_spec({.min_ndim = 2, .layout = "(batch, ...)"});
}

void PReLULayer::build(const std::vector<Shape>& in) {
  Shape param = in[0];
  for (int a : options_.shared_axes) {
    KERASCPP_CHECK_VALUE(a >= 1 && a <= static_cast<int>(param.size()),
                         "{}: shared_axes holds {}, but the input has axes 1..{} after the batch axis "
                         "(shape {})",
                         where(), a, param.size(), shape_str(in[0]));
    param[static_cast<std::size_t>(a - 1)] = 1;
  }
  alpha_ = &add_weight("alpha", param, options_.alpha_initializer, true, next_random_seed(), options_.alpha_regularizer,
                       options_.alpha_constraint);
  InputSpec spec{.ndim = static_cast<int>(in[0].size()) + 1, .layout = "(batch, ...)"};
  for (int i = 1; i <= static_cast<int>(param.size()); ++i)  // the axes alpha does not share are fixed
    if (std::find(options_.shared_axes.begin(), options_.shared_axes.end(), i) == options_.shared_axes.end())
      spec.axes[i] = in[0][static_cast<std::size_t>(i - 1)];
  set_input_spec(spec);
}

std::vector<Shape> PReLULayer::compute_output_shapes(const std::vector<Shape>& in) { return {in[0]}; }

std::vector<Tensor> PReLULayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  Backend& be = *ctx.backend;
  const Tensor& x = in[0];
  Shape with_batch{1};
  const Shape& param = alpha_->value(ctx.replica_id).shape();
  with_batch.insert(with_batch.end(), param.begin(), param.end());
  Tensor a = alpha_->value(ctx.replica_id).reshape(with_batch);
  for (int axis = 0; axis < x.rank(); ++axis)
    if (a.dim(axis) == 1 && x.dim(axis) != 1) a = tile(be, a, axis, x.dim(axis));
  Tensor pos, neg, scaled, y;
  be.activation_forward(ActivationKind::relu, x, pos);
  be.copy(pos, neg);
  be.scale(neg, -1.f);
  be.add_inplace(neg, x);  // min(x, 0) = x - relu(x)
  be.multiply(a, neg, scaled);
  be.add({pos, scaled}, y);
  st.saved = {a, neg};
  return {y};
}

std::vector<Tensor> PReLULayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>&,
                                         const std::vector<Tensor>& grads, LayerState& st) {
  Backend& be = *ctx.backend;
  const int r = ctx.replica_id;
  const Tensor& x = in[0];
  const Tensor& dy = grads[0];
  const Tensor& a = st.saved.at(0);
  const Tensor& neg = st.saved.at(1);
  // dL/dalpha: dy * min(x, 0), summed over the batch and the shared axes.
  Tensor da;
  be.multiply(dy, neg, da);
  const Shape& param = alpha_->value(r).shape();
  for (int axis = x.rank() - 1; axis >= 0; --axis)
    if ((axis == 0 || param[static_cast<std::size_t>(axis - 1)] == 1) && x.dim(axis) != 1)
      da = untile(be, da, axis, x.dim(axis));
  Tensor& grad = alpha_->grad(r);
  if (alpha_->take_first_grad(r)) be.copy(da, grad);  // copy: same numel, any shapes
  else be.add_inplace(grad, da.reshape(grad.shape()));
  if (!st.need_input_grads) return {Tensor()};
  // dL/dx = dy where x > 0, alpha * dy elsewhere: r + A * (dy - r) with r = relu's backward.
  Tensor through, rest, dx;
  be.activation_backward(ActivationKind::relu, x, dy, through);  // x > 0 exactly where relu(x) > 0
  be.copy(through, rest);
  be.scale(rest, -1.f);
  be.add_inplace(rest, dy);
  be.multiply(a, rest, dx);
  be.add_inplace(dx, through);
  return {dx};
}

Json PReLULayer::get_config() const {
  detail::Json config = {{"name", name()}};
  detail::add_weight_options(config, "alpha", options_.alpha_regularizer, options_.alpha_constraint);
  config["shared_axes"] = options_.shared_axes.empty() ? Json(nullptr) : Json(options_.shared_axes);
  return config;
}

LayerRef PReLU(PReLUOptions options) { return std::make_shared<PReLULayer>(std::move(options)); }

KERASCPP_REGISTER_LAYER("PReLU", [](const LayerConfig& c) {
  PReLUOptions o;
  o.alpha_regularizer = c.regularizer("alpha_regularizer");
  o.alpha_constraint = c.constraint("alpha_constraint");
  if (const Json* axes = c.find("shared_axes")) {  // an int or a list of ints, as Keras takes it
    if (axes->is_number_integer()) o.shared_axes = {axes->get<int>()};
    else o.shared_axes = c.get<std::vector<int>>("shared_axes", {});
  }
  o.name = c.name();
  return layers::PReLU(std::move(o));
});

}  // namespace kerascpp::layers
