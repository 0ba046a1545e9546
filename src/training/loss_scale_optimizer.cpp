#include "kerascpp/training/loss_scale_optimizer.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "check.hpp"

namespace kerascpp::optimizers {

namespace {

Tensor host_scalar(DType dtype) { return Tensor::zeros({}, dtype, Device{}); }

// One verdict for every replica of the step, so that they all skip or all apply. Their
// all-reduced gradients are the same bits on every replica here, but a collective that sums in
// another order per rank (MPI, NCCL across processes) need not promise that; a one-float
// all-reduce of the replicas that saw Inf or NaN does, on every transport.
bool finite_on_every_replica(ReplicaContext& ctx, bool finite_here) {
  if (!ctx.cross || ctx.num_replicas <= 1) return finite_here;
  std::vector<Tensor> count{
      Tensor::from_vector({1}, std::vector<float>{finite_here ? 0.f : 1.f}).to(ctx.backend->device())};
  ctx.cross->all_reduce_sum(ctx.replica_id, count);
  return count[0].to(Device{}).data<float>()[0] == 0.f;
}

}  // namespace

LossScaleOptimizer::LossScaleOptimizer(std::shared_ptr<Optimizer> inner, CopyInner copy_inner, LossScaleOptions o)
    : Optimizer(0.0),  // Keras' wrapper has a learning rate of 0 of its own; the inner one's is used
      inner_(std::move(inner)),
      copy_inner_(copy_inner),
      o_(o),
      own_iteration_(host_scalar(DType::int32)),
      own_learning_rate_(host_scalar(DType::float32)),
      step_counter_(host_scalar(DType::int32)),
      dynamic_scale_(host_scalar(DType::float32)) {
  KERASCPP_CHECK_VALUE(
      std::isfinite(o.initial_scale) && o.initial_scale > 0 && o.initial_scale <= std::numeric_limits<float>::max(),
      "LossScaleOptimizer: initial_scale must be a finite number > 0 (float32), got {}; Keras' default "
      "is 32768 (2^15), and a power of two keeps the unscaled gradients exact",
      o.initial_scale);
  KERASCPP_CHECK_VALUE(o.dynamic_growth_steps >= 1,
                       "LossScaleOptimizer: dynamic_growth_steps must be >= 1 (finite steps before the scale doubles), "
                       "got {}; Keras' default is 2000",
                       o.dynamic_growth_steps);
  KERASCPP_CHECK_VALUE(
      dynamic_cast<LossScaleOptimizer*>(inner_.get()) == nullptr,
      "LossScaleOptimizer: the inner optimizer is a LossScaleOptimizer too, which would scale the loss "
      "twice; wrap the plain optimizer (e.g. Adam) once");
  reset_scale();
}

OptimizerRef LossScaleOptimizer::around(std::shared_ptr<Optimizer> inner, LossScaleOptions options) {
  // Not make_shared: the constructor is private.
  return std::shared_ptr<Optimizer>(new LossScaleOptimizer(std::move(inner), nullptr, options));
}

namespace {
std::shared_ptr<Optimizer> copied_inner(const Optimizer& inner, std::shared_ptr<Optimizer> (*copy)(const Optimizer&)) {
  KERASCPP_CHECK_STATE(copy,
                       "LossScaleOptimizer: this one was made by compile() around the model's optimizer and cannot be "
                       "copied; make your own with optimizers::LossScaleOptimizer(optimizers::Adam(...)) to copy it");
  return copy(inner);
}
}  // namespace

LossScaleOptimizer::LossScaleOptimizer(const LossScaleOptimizer& other)
    : Optimizer(other),
      inner_(copied_inner(*other.inner_, other.copy_inner_)),
      copy_inner_(other.copy_inner_),
      o_(other.o_),
      own_iteration_(other.own_iteration_.clone()),
      own_learning_rate_(other.own_learning_rate_.clone()),
      step_counter_(other.step_counter_.clone()),
      dynamic_scale_(other.dynamic_scale_.clone()),
      finite_(other.finite_) {}

void LossScaleOptimizer::reset_scale() {
  step_counter_.data<std::int32_t>()[0] = 0;
  dynamic_scale_.data<float>()[0] = static_cast<float>(o_.initial_scale);
}

std::int64_t LossScaleOptimizer::step_counter() const { return step_counter_.data<std::int32_t>()[0]; }

float LossScaleOptimizer::loss_scale() const { return dynamic_scale_.data<float>()[0]; }

std::vector<std::pair<const char*, Tensor*>> LossScaleOptimizer::own_variables() {
  return {{"iteration", &own_iteration_},
          {"learning_rate", &own_learning_rate_},
          {"step_counter", &step_counter_},
          {"dynamic_scale", &dynamic_scale_}};
}

void LossScaleOptimizer::build(const std::vector<Variable*>& trainable, int replicas) {
  inner_->build(trainable, replicas);
  reset_scale();  // Keras' build() creates dynamic_scale at initial_scale
  finite_.assign(static_cast<std::size_t>(replicas), 1);
}

bool LossScaleOptimizer::prepare_gradients(ReplicaContext& ctx, const std::vector<Variable*>& trainable) {
  const int r = ctx.replica_id;
  if (o_.dynamic) {
    // Checked on the all-reduced gradients (with the penalties' scaled gradients), as Keras.
    std::vector<Tensor> grads;
    grads.reserve(trainable.size());
    for (Variable* v : trainable) grads.push_back(v->grad(r));
    const bool finite = finite_on_every_replica(ctx, ctx.backend->all_finite(grads));
    finite_.at(static_cast<std::size_t>(r)) = finite ? 1 : 0;
    if (!finite) return false;
  }
  // Keras divides by the scale; multiplying by 1/scale is the same bits for a power of two
  // (every dynamic scale from a power-of-two start) and within an ulp otherwise.
  const float inverse = 1.f / loss_scale();
  if (inverse != 1.f)
    for (Variable* v : trainable) ctx.backend->scale(v->grad(r), inverse);
  return inner_->prepare_gradients(ctx, trainable);  // then the inner optimizer's clipping
}

void LossScaleOptimizer::apply(Backend& backend, int replica, std::size_t index, Variable& variable) {
  inner_->apply(backend, replica, index, variable);
}

void LossScaleOptimizer::finish_step() {
  if (!o_.dynamic) {
    inner_->finish_step();
    return;
  }
  // Keras' _stateful_handle_finite_grads / _non_finite_grads, once per step.
  std::int32_t& counter = step_counter_.data<std::int32_t>()[0];
  float& scale = dynamic_scale_.data<float>()[0];
  const bool finite = finite_.empty() || finite_[0];
  if (finite) {
    inner_->finish_step();
    if (counter == o_.dynamic_growth_steps - 1) {
      counter = 0;
      // Keras doubles without a bound; past float32's range every later step would overflow,
      // halve back to Inf and be skipped forever, so the scale stays where it is instead.
      if (std::isfinite(scale * 2.f)) scale *= 2.f;
    } else {
      ++counter;
    }
  } else {
    counter = 0;
    scale *= 0.5f;
  }
  finite_.assign(finite_.size(), 1);
}

void LossScaleOptimizer::update(Backend&, Tensor&, const Tensor&, Tensor*, double, std::int64_t) const {
  throw std::logic_error("LossScaleOptimizer::update: apply() hands every variable to the inner optimizer");
}

}  // namespace kerascpp::optimizers
