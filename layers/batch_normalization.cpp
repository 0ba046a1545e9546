#include "kerascpp/layers/batch_normalization.hpp"

#include <algorithm>
#include <cmath>

#include "batch_normalization_sync.hpp"
#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

// Saved state between forward and backward: [0] mean, [1] var (the statistics used to normalise).
// Moving statistics are mirrored variables: every replica applies the same update from the
// all-reduced batch statistics, so the copies stay identical even when normalisation uses
// per-replica statistics (the default, like TensorFlow's MirroredStrategy).

BatchNormalizationLayer::BatchNormalizationLayer(BatchNormalizationOptions options)
    : Layer(options.name), options_(std::move(options)) {
  KERASCPP_CHECK(options_.epsilon > 0.f && std::isfinite(options_.epsilon), ValueError,
                 "BatchNormalization '{}': epsilon must be a positive finite number, got {}", name(), options_.epsilon);
  KERASCPP_CHECK(options_.momentum >= 0.f && options_.momentum <= 1.f, ValueError,
                 "BatchNormalization '{}': momentum must be in [0, 1], got {}", name(), options_.momentum);
  set_input_spec({.min_ndim = 2,
                  .layout = "(batch, ..., channels)",
                  .rank_hint = "BatchNormalization normalises the last (channel) axis"});
}

std::vector<Shape> BatchNormalizationLayer::compute_output_shapes(const std::vector<Shape>& in) { return {in[0]}; }

void BatchNormalizationLayer::build(const std::vector<Shape>& in) {
  channels_ = in[0].back();
  // Built for this many channels, as Keras' InputSpec(ndim=rank, axes={-1: channels}).
  set_input_spec({.ndim = static_cast<int>(in[0].size()) + 1,
                  .axes = {{-1, channels_}},
                  .layout = "(batch, ..., channels)"});
  gamma_ = &add_weight("gamma", {channels_}, "ones", true, 0);
  beta_ = &add_weight("beta", {channels_}, "zeros", true, 0);
  moving_mean_ = &add_weight("moving_mean", {channels_}, "zeros", false, 0);
  moving_variance_ = &add_weight("moving_variance", {channels_}, "ones", false, 0);
}

// The per-channel arithmetic between collectives runs on the host. On a GPU replica the
// channel vectors are staged through host copies (Tensor::to); on the CPU to() returns the
// tensor itself, so nothing is copied.
namespace {
const Device kHost{};

// Packs per-channel vectors and a count into one tensor on `device` so one collective serves them all.
Tensor pack(const std::vector<Tensor>& parts, double count, Device device) {
  std::int64_t c = parts[0].numel();
  Tensor t({static_cast<std::int64_t>(parts.size()) * c + 1}, DType::float32, kHost);
  float* p = t.data<float>();
  for (std::size_t i = 0; i < parts.size(); ++i)
    std::copy_n(parts[i].to(kHost).data<float>(), c, p + static_cast<std::int64_t>(i) * c);
  p[t.numel() - 1] = static_cast<float>(count);
  return t.to(device);
}

// Writes the host values `host` into `dst` (a no-op when dst is that host tensor).
void store(Tensor& dst, const Tensor& host) {
  if (!dst.same_storage(host)) dst.copy_from(host);
}
}  // namespace

void BatchNormalizationLayer::update_moving_statistics(ReplicaContext& ctx, const Tensor& mean, const Tensor& var) {
  int r = ctx.replica_id;
  float m = options_.momentum;
  Tensor& moving_mean = moving_mean_->value(r);
  Tensor& moving_var = moving_variance_->value(r);
  if (!moving_mean.on_host()) {
    // On a GPU: moving·m + batch·(1 − m) with backend ops on the replica's stream, no host sync.
    // Same three roundings per element as the loop below.
    for (auto [moving, batch] : {std::pair{&moving_mean, &mean}, std::pair{&moving_var, &var}}) {
      Tensor scaled(batch->shape(), DType::float32, moving->device());
      ctx.backend->copy(batch->to(moving->device()), scaled);
      ctx.backend->scale(scaled, 1.f - m);
      ctx.backend->scale(*moving, m);
      ctx.backend->add_inplace(*moving, scaled);
    }
    return;
  }
  Tensor hbm = mean.to(kHost), hbv = var.to(kHost);
  float* mm = moving_mean.data<float>();
  float* mv = moving_var.data<float>();
  const float* bm = hbm.data<float>();
  const float* bv = hbv.data<float>();
  for (std::int64_t i = 0; i < channels_; ++i) {
    mm[i] = mm[i] * m + bm[i] * (1.f - m);
    mv[i] = mv[i] * m + bv[i] * (1.f - m);
  }
}

std::vector<Tensor> BatchNormalizationLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                     LayerState& st) {
  int r = ctx.replica_id;
  const Tensor& x = in[0];
  Tensor x2 = x.reshape({-1, channels_});
  Tensor y(x.shape());
  Tensor y2 = y.reshape({-1, channels_});
  if (!ctx.training) {
    ctx.backend->batchnorm_forward_inference(x2, gamma_->value(r), beta_->value(r), moving_mean_->value(r),
                                             moving_variance_->value(r), options_.epsilon, y2);
    return {y};
  }
  const Device dev = ctx.backend->device();
  Tensor mean({channels_}, DType::float32, dev), var({channels_}, DType::float32, dev);
  double count = static_cast<double>(x2.dim(0));
  bool collective = ctx.cross && ctx.num_replicas > 1;
  if (options_.synchronized && collective) {
    // This replica's moments (the backend's accurate ones; y is overwritten below), gathered
    // and combined: see batch_normalization_sync.hpp for why not Σx and Σx².
    ctx.backend->batchnorm_forward_training(x2, gamma_->value(r), beta_->value(r), options_.epsilon, y2, mean, var);
    Tensor hmean = mean.to(kHost), hvar = var.to(kHost);
    sync_bn::all_replica_moments(ctx, channels_, count, mean, var, hmean, hvar);
    store(mean, hmean);
    store(var, hvar);
    ctx.backend->batchnorm_forward_inference(x2, gamma_->value(r), beta_->value(r), mean, var, options_.epsilon, y2);
    update_moving_statistics(ctx, mean, var);
  } else {
    ctx.backend->batchnorm_forward_training(x2, gamma_->value(r), beta_->value(r), options_.epsilon, y2, mean, var);
    if (collective) {
      // Moving statistics follow the example-weighted average of the replicas' batch statistics.
      Tensor weighted_mean = mean.clone(), weighted_var = var.clone();
      ctx.backend->scale(weighted_mean, static_cast<float>(count));
      ctx.backend->scale(weighted_var, static_cast<float>(count));
      Tensor packed = pack({weighted_mean, weighted_var}, count, dev);
      ctx.cross->all_reduce_sum(r, {packed});
      Tensor host = packed.to(kHost);
      const float* p = host.data<float>();
      float total = p[2 * channels_];
      Tensor avg_mean({channels_}, DType::float32, kHost), avg_var({channels_}, DType::float32, kHost);
      for (std::int64_t c = 0; c < channels_; ++c) {
        avg_mean.data<float>()[c] = p[c] / total;
        avg_var.data<float>()[c] = p[channels_ + c] / total;
      }
      update_moving_statistics(ctx, avg_mean, avg_var);
    } else {
      update_moving_statistics(ctx, mean, var);
    }
  }
  st.saved = {mean, var};
  return {y};
}

void BatchNormalizationLayer::forward_empty(ReplicaContext& ctx) {
  if (!ctx.training || !ctx.cross || ctx.num_replicas < 2) return;
  int r = ctx.replica_id;
  if (options_.synchronized) {  // an empty slot in the gather the other replicas make
    Tensor mean({channels_}, DType::float32, kHost), var({channels_}, DType::float32, kHost);
    sync_bn::all_replica_moments(ctx, channels_, 0.0, Tensor(), Tensor(), mean, var);
    update_moving_statistics(ctx, mean, var);
    return;
  }
  Tensor zeros = Tensor::zeros({channels_}, DType::float32, kHost);
  Tensor packed = pack({zeros, zeros}, 0.0, ctx.backend->device());
  ctx.cross->all_reduce_sum(r, {packed});
  Tensor host = packed.to(kHost);
  const float* p = host.data<float>();
  double total = p[2 * channels_];
  Tensor mean({channels_}, DType::float32, kHost), var({channels_}, DType::float32, kHost);
  for (std::int64_t c = 0; c < channels_; ++c) {
    double mu = p[c] / total;
    mean.data<float>()[c] = static_cast<float>(mu);
    var.data<float>()[c] = static_cast<float>(p[channels_ + c] / total);
  }
  update_moving_statistics(ctx, mean, var);
}

std::vector<Tensor> BatchNormalizationLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                      const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                                      LayerState& st) {
  int r = ctx.replica_id;
  Tensor x2 = in[0].reshape({-1, channels_});
  Tensor dy2 = grads[0].reshape({-1, channels_});
  const Tensor& mean = st.saved.at(0);
  const Tensor& var = st.saved.at(1);
  Tensor dx(in[0].shape());
  Tensor dx2 = dx.reshape({-1, channels_});
  Tensor dgamma({channels_}), dbeta({channels_});
  if (options_.synchronized && ctx.cross && ctx.num_replicas > 1) {
    Tensor sum_dy({channels_}), sum_dy_xmu({channels_});
    ctx.backend->batchnorm_backward_sums(dy2, x2, mean, sum_dy, sum_dy_xmu);
    // Local parameter gradients (the strategy all-reduces them with every other gradient).
    dbeta.copy_from(sum_dy);
    {
      Tensor hdgamma = dgamma.to(kHost), hxmu = sum_dy_xmu.to(kHost), hvar = var.to(kHost);
      for (std::int64_t c = 0; c < channels_; ++c)
        hdgamma.data<float>()[c] = hxmu.data<float>()[c] / std::sqrt(hvar.data<float>()[c] + options_.epsilon);
      store(dgamma, hdgamma);
    }
    Tensor packed = pack({sum_dy, sum_dy_xmu}, static_cast<double>(x2.dim(0)), ctx.backend->device());
    ctx.cross->all_reduce_sum(r, {packed});
    Tensor host = packed.to(kHost);
    const float* p = host.data<float>();
    // Views of the reduced sums, on the replica's device (no copy on the host).
    sum_dy = packed.slice(0, channels_);
    sum_dy_xmu = packed.slice(channels_, 2 * channels_);
    ctx.backend->batchnorm_backward_apply(dy2, x2, gamma_->value(r), mean, var, options_.epsilon, sum_dy, sum_dy_xmu,
                                          p[2 * channels_], dx2);
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
  if (options_.synchronized && ctx.cross && ctx.num_replicas > 1) {
    Tensor zeros = Tensor::zeros({channels_}, DType::float32, kHost);
    Tensor packed = pack({zeros, zeros}, 0.0, ctx.backend->device());
    ctx.cross->all_reduce_sum(ctx.replica_id, {packed});
  }
}

std::string BatchNormalizationLayer::config_json() const {
  return detail::dump({{"name", name()},
                      {"momentum", detail::json_float(options_.momentum)},
                      {"epsilon", detail::json_float(options_.epsilon)},
                      {"synchronized", options_.synchronized}});
}

LayerRef BatchNormalization(BatchNormalizationOptions options) {
  return std::make_shared<BatchNormalizationLayer>(std::move(options));
}

}  // namespace kerascpp::layers
