#include "kerascpp/layers/batch_normalization.hpp"
#include "kerascpp/core/layer_config.hpp"

#include <cmath>

#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

// Saved state between forward and backward: [0] mean, [1] var (the statistics used to normalise).
// Moving statistics are mirrored variables: every replica applies the same update from the
// all-reduced batch statistics, so the copies stay identical even when normalisation uses
// per-replica statistics (the default, like TensorFlow's MirroredStrategy).

BatchNormalizationLayer::BatchNormalizationLayer(BatchNormalizationOptions options)
    : Layer(options.name), options_(std::move(options)) {
  KERASCPP_CHECK_VALUE(options_.epsilon > 0.f && std::isfinite(options_.epsilon),
                       "BatchNormalization '{}': epsilon must be a positive finite number, got {}", name(),
                       options_.epsilon);
  KERASCPP_CHECK_VALUE(options_.momentum >= 0.f && options_.momentum <= 1.f,
                       "BatchNormalization '{}': momentum must be in [0, 1], got {}", name(), options_.momentum);
  set_input_spec({.min_ndim = 2,
                  .layout = "(batch, ..., channels)",
                  .rank_hint = "BatchNormalization normalises the last (channel) axis"});
}

std::vector<Shape> BatchNormalizationLayer::compute_output_shapes(const std::vector<Shape>& in) { return {in[0]}; }

void BatchNormalizationLayer::build(const std::vector<Shape>& in) {
  channels_ = in[0].back();
  // Built for this many channels, as Keras' InputSpec(ndim=rank, axes={-1: channels}).
  set_input_spec(
      {.ndim = static_cast<int>(in[0].size()) + 1, .axes = {{-1, channels_}}, .layout = "(batch, ..., channels)"});
  gamma_ = &add_weight("gamma", {channels_}, "ones", true, 0);
  beta_ = &add_weight("beta", {channels_}, "zeros", true, 0);
  moving_mean_ = &add_weight("moving_mean", {channels_}, "zeros", false, 0);
  moving_variance_ = &add_weight("moving_variance", {channels_}, "ones", false, 0);
}

void BatchNormalizationLayer::update_moving_statistics(ReplicaContext& ctx, const Tensor& mean, const Tensor& var) {
  int r = ctx.replica_id;
  ctx.backend->moving_average_update(moving_mean_->value(r), mean, options_.momentum);
  ctx.backend->moving_average_update(moving_variance_->value(r), var, options_.momentum);
}

namespace {
// Sums `packed` over the replicas, in place (the vector holds a handle to its storage).
void all_reduce(ReplicaContext& ctx, Tensor& packed) {
  std::vector<Tensor> parts{packed};
  ctx.cross->all_reduce_sum(ctx.replica_id, parts);
}
}  // namespace

std::vector<Tensor> BatchNormalizationLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                     LayerState& st) {
  int r = ctx.replica_id;
  const Tensor& x = in[0];
  Tensor x2 = x.reshape({-1, channels_});
  Tensor y(x.shape());
  Tensor y2 = y.reshape({-1, channels_});
  if (!ctx.training || !trainable()) {  // a frozen BatchNormalization runs in inference mode (Keras)
    ctx.backend->batchnorm_forward_inference(x2, gamma_->value(r), beta_->value(r), moving_mean_->value(r),
                                             moving_variance_->value(r), options_.epsilon, y2);
    return {y};
  }
  Tensor mean, var;
  const std::int64_t rows = x2.dim(0);
  bool collective = ctx.cross && ctx.num_replicas > 1;
  if (options_.synchronized && collective) {
    // The union's moments: every replica's (count, mean, var) gathered through one all-reduce
    // and combined (Keras' ops.moments(..., synchronized=True)), not Σx and Σx², which cancel
    // when |mean| >> std.
    Tensor local_mean, local_var, packed;
    ctx.backend->moments(x2, local_mean, local_var);
    ctx.backend->pack_moments(local_mean, local_var, rows, ctx.replica_id_in_sync, ctx.num_replicas, packed);
    all_reduce(ctx, packed);
    ctx.backend->synchronized_moments(packed, ctx.num_replicas, mean, var);
    ctx.backend->batchnorm_forward_inference(x2, gamma_->value(r), beta_->value(r), mean, var, options_.epsilon, y2);
    update_moving_statistics(ctx, mean, var);
  } else {
    ctx.backend->batchnorm_forward_training(x2, gamma_->value(r), beta_->value(r), options_.epsilon, y2, mean, var);
    if (collective) {
      // Moving statistics follow the example-weighted average of the replicas' batch statistics.
      Tensor packed, avg_mean, avg_var;
      ctx.backend->pack_moments(mean, var, rows, ctx.replica_id_in_sync, ctx.num_replicas, packed);
      all_reduce(ctx, packed);
      ctx.backend->average_moments(packed, ctx.num_replicas, avg_mean, avg_var);
      update_moving_statistics(ctx, avg_mean, avg_var);
    } else {
      update_moving_statistics(ctx, mean, var);
    }
  }
  st.saved = {mean, var};
  return {y};
}

void BatchNormalizationLayer::forward_empty(ReplicaContext& ctx) {
  if (!ctx.training || !trainable() || !ctx.cross || ctx.num_replicas < 2) return;
  // No rows here: an all-zero slot in the statistics the other replicas gather.
  Tensor packed = Tensor::zeros({moments_packed_size(channels_, ctx.num_replicas)});
  all_reduce(ctx, packed);
  Tensor mean, var;
  if (options_.synchronized) ctx.backend->synchronized_moments(packed, ctx.num_replicas, mean, var);
  else ctx.backend->average_moments(packed, ctx.num_replicas, mean, var);
  update_moving_statistics(ctx, mean, var);
}

std::vector<Tensor> BatchNormalizationLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                      const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                                      LayerState& st) {
  int r = ctx.replica_id;
  Tensor x2 = in[0].reshape({-1, channels_});
  Tensor dy2 = grads[0].reshape({-1, channels_});
  Tensor dx(in[0].shape());
  Tensor dx2 = dx.reshape({-1, channels_});
  if (!trainable()) {
    // Frozen, so forward ran in inference mode: y = (x - moving_mean) * gamma / sqrt(moving_var + eps)
    // + beta, whose input gradient is the same per-channel scaling of dy (no mean, no beta).
    Tensor zeros = Tensor::zeros({channels_});
    ctx.backend->batchnorm_forward_inference(dy2, gamma_->value(r), zeros, zeros, moving_variance_->value(r),
                                             options_.epsilon, dx2);
    return {dx};
  }
  const Tensor& mean = st.saved.at(0);
  const Tensor& var = st.saved.at(1);
  Tensor dgamma({channels_}), dbeta({channels_});
  if (options_.synchronized && ctx.cross && ctx.num_replicas > 1) {
    // Local gradient sums (and the local parameter gradients, which the strategy all-reduces
    // with every other gradient), summed over the replicas, then the input gradient.
    Tensor sums;
    ctx.backend->batchnorm_backward_reduce(dy2, x2, mean, var, options_.epsilon, sums, dgamma, dbeta);
    all_reduce(ctx, sums);
    ctx.backend->batchnorm_backward_apply(dy2, x2, gamma_->value(r), mean, var, options_.epsilon, sums, dx2);
  } else {
    ctx.backend->batchnorm_backward(dy2, x2, gamma_->value(r), mean, var, options_.epsilon, dx2, dgamma, dbeta);
  }
  for (auto [var_ptr, g] : {std::pair{gamma_, &dgamma}, std::pair{beta_, &dbeta}}) {
    if (var_ptr->take_first_grad(r)) var_ptr->grad(r).copy_from(*g);
    else ctx.backend->add_inplace(var_ptr->grad(r), *g);
  }
  return {dx};
}

void BatchNormalizationLayer::backward_empty(ReplicaContext& ctx) {
  // Take part in the synchronized backward collective; the gradient reducer zero-fills gamma/beta.
  if (options_.synchronized && trainable() && ctx.cross && ctx.num_replicas > 1) {
    Tensor sums = Tensor::zeros({batchnorm_grad_sums_size(channels_)});
    all_reduce(ctx, sums);
  }
}

Json BatchNormalizationLayer::get_config() const {
  return detail::Json({{"name", name()},
                       {"momentum", detail::json_float(options_.momentum)},
                       {"epsilon", detail::json_float(options_.epsilon)},
                       {"synchronized", options_.synchronized}});
}

LayerRef BatchNormalization(BatchNormalizationOptions options) {
  return std::make_shared<BatchNormalizationLayer>(std::move(options));
}

KERASCPP_REGISTER_LAYER("BatchNormalization", [](const LayerConfig& c) {
  c.expect_last_axis(4);
  c.expect("center", true, "BatchNormalization always learns beta");
  c.expect("scale", true, "BatchNormalization always learns gamma");
  return layers::BatchNormalization({.momentum = c.get("momentum", 0.99f),
                                     .epsilon = c.get("epsilon", 1e-3f),
                                     .synchronized = c.get("synchronized", false),
                                     .name = c.name()});
});

}  // namespace kerascpp::layers
