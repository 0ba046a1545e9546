#include "kerascpp/training/optimizers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "check.hpp"
#include "training/optimizer_checks.hpp"

namespace kerascpp::optimizers {

double checked_learning_rate(double value, const char* what) {
  // A NaN or negative rate trains to garbage without any error (the examples used to exit 0 and
  // overwrite their final weights); float32 is what the update kernels and checkpoints use.
  KERASCPP_CHECK_VALUE(std::isfinite(value) && value >= 0 && value <= std::numeric_limits<float>::max(),
                       "{} must be a finite number >= 0, got {}; pass a rate such as 1e-3", what, value);
  return value;
}

namespace checks {
void check_range(double v, double lo, double hi, bool hi_inclusive, const char* optimizer, const char* name,
                 const char* hint) {
  const bool ok = v >= lo && (hi_inclusive ? v <= hi : v < hi);
  KERASCPP_CHECK_VALUE(ok, "{}: {} must be in [{}, {}{}, got {}; {}", optimizer, name, lo, hi, hi_inclusive ? "]" : ")",
                       v, hint);
}
void check_epsilon(double v, const char* optimizer) {
  KERASCPP_CHECK_VALUE(std::isfinite(v) && v > 0,
                       "{}: epsilon must be a finite number > 0 (it keeps the update from dividing by zero), got {}; "
                       "the Keras default is 1e-7",
                       optimizer, v);
}
}  // namespace checks
using checks::check_epsilon;
using checks::check_range;

SGDOptions SGD::checked(SGDOptions o) {
  check_range(o.momentum, 0, 1, true, "SGD", "momentum", "Keras' default is 0, a typical value 0.9");
  return o;
}

AdamOptions Adam::checked(AdamOptions o) {
  check_range(o.beta_1, 0, 1, false, "Adam", "beta_1", "the Keras default is 0.9");
  check_range(o.beta_2, 0, 1, false, "Adam", "beta_2", "the Keras default is 0.999");
  check_epsilon(o.epsilon, "Adam");
  return o;
}

AdamWOptions AdamW::checked(AdamWOptions o) {
  KERASCPP_CHECK_VALUE(std::isfinite(o.weight_decay) && o.weight_decay >= 0,
                       "AdamW: weight_decay must be a finite number >= 0, got {}; the Keras default is 0.004",
                       o.weight_decay);
  check_range(o.beta_1, 0, 1, false, "AdamW", "beta_1", "the Keras default is 0.9");
  check_range(o.beta_2, 0, 1, false, "AdamW", "beta_2", "the Keras default is 0.999");
  check_epsilon(o.epsilon, "AdamW");
  return o;
}

AdagradOptions Adagrad::checked(AdagradOptions o) {
  // A negative accumulator makes sqrt(accumulator + eps) NaN on the first step.
  KERASCPP_CHECK_VALUE(
      std::isfinite(o.initial_accumulator_value) && o.initial_accumulator_value >= 0 &&
          o.initial_accumulator_value <= std::numeric_limits<float>::max(),
      "Adagrad: initial_accumulator_value must be a finite number >= 0, got {}; the Keras default is 0.1",
      o.initial_accumulator_value);
  check_epsilon(o.epsilon, "Adagrad");
  return o;
}

RMSpropOptions RMSprop::checked(RMSpropOptions o) {
  check_range(o.rho, 0, 1, false, "RMSprop", "rho", "the Keras default is 0.9");
  check_epsilon(o.epsilon, "RMSprop");
  return o;
}

namespace schedules {
ExponentialDecay::ExponentialDecay(double initial, std::int64_t steps, double rate, ExponentialDecayOptions o)
    : initial_(checked_learning_rate(initial, "ExponentialDecay: initial_learning_rate")),
      decay_steps_(steps),
      rate_(rate),
      staircase_(o.staircase) {
  KERASCPP_CHECK_VALUE(steps > 0, "ExponentialDecay: decay_steps must be positive, got {}", steps);
  // A negative rate raised to a fractional power is NaN; 0 would zero the rate after one step.
  KERASCPP_CHECK_VALUE(std::isfinite(rate) && rate > 0,
                       "ExponentialDecay: decay_rate must be a finite number > 0, got {}; e.g. 0.96 decays by 4% every "
                       "decay_steps",
                       rate);
}

double ExponentialDecay::operator()(std::int64_t step) const {
  double p = static_cast<double>(step) / static_cast<double>(decay_steps_);
  if (staircase_) p = std::floor(p);
  return initial_ * std::pow(rate_, p);
}

PiecewiseConstantDecay::PiecewiseConstantDecay(std::vector<std::int64_t> b, std::vector<double> v)
    : boundaries_(std::move(b)), values_(std::move(v)) {
  KERASCPP_CHECK_VALUE(values_.size() == boundaries_.size() + 1,
                       "PiecewiseConstantDecay: values needs one more entry than boundaries ({} boundaries, "
                       "{} values)",
                       boundaries_.size(), values_.size());
  for (std::size_t i = 1; i < boundaries_.size(); ++i)
    KERASCPP_CHECK_VALUE(
        boundaries_[i] > boundaries_[i - 1],
        "PiecewiseConstantDecay: boundaries must be strictly increasing, but boundaries[{}] = {} follows "
        "{}; sort them",
        i, boundaries_[i], boundaries_[i - 1]);
  for (std::size_t i = 0; i < values_.size(); ++i)
    checked_learning_rate(values_[i], fmt::format("PiecewiseConstantDecay: values[{}]", i).c_str());
}

double PiecewiseConstantDecay::operator()(std::int64_t step) const {
  for (std::size_t i = 0; i < boundaries_.size(); ++i)
    if (step <= boundaries_[i]) return values_[i];
  return values_.back();
}
}  // namespace schedules

void Optimizer::set_gradient_clipping(GradientClipping c) {
  for (auto [value, name] : {std::pair{c.clipnorm, "clipnorm"}, std::pair{c.global_clipnorm, "global_clipnorm"},
                             std::pair{c.clipvalue, "clipvalue"}})
    KERASCPP_CHECK_VALUE(!value || (std::isfinite(*value) && *value > 0),
                         "{}: {} must be a finite number > 0, got {}; leave it unset for no clipping", class_name(),
                         name, value.value_or(0));
  const int set = int(c.clipnorm.has_value()) + int(c.global_clipnorm.has_value()) + int(c.clipvalue.has_value());
  KERASCPP_CHECK_VALUE(set <= 1,
                       "{}: only one of clipnorm, clipvalue and global_clipnorm can be set (as in Keras); keep one",
                       class_name());
  clipping_ = c;
}

void Optimizer::set_common_options(OptimizerOptions o) {
  const std::string name = class_name();
  KERASCPP_CHECK_VALUE(
      !built(),
      "{}: set_common_options after the optimizer was built (its EMA and accumulator slots are made then); set "
      "the options before compile()",
      name);
  KERASCPP_CHECK_VALUE(!o.weight_decay || (std::isfinite(*o.weight_decay) && *o.weight_decay >= 0),
                       "{}: weight_decay must be a finite number >= 0, got {}; leave it unset for none", name,
                       o.weight_decay.value_or(0));
  KERASCPP_CHECK_VALUE(!o.use_ema || (o.ema_momentum >= 0 && o.ema_momentum <= 1),
                       "{}: ema_momentum must be in [0, 1], got {}; the Keras default is 0.99", name, o.ema_momentum);
  KERASCPP_CHECK_VALUE(!o.use_ema || !o.ema_overwrite_frequency || *o.ema_overwrite_frequency >= 1,
                       "{}: ema_overwrite_frequency must be an integer >= 1 or unset, got {}", name,
                       o.ema_overwrite_frequency.value_or(0));
  KERASCPP_CHECK_VALUE(!o.loss_scale_factor || (std::isfinite(*o.loss_scale_factor) && *o.loss_scale_factor > 0),
                       "{}: loss_scale_factor must be a finite number > 0, got {}; leave it unset for none", name,
                       o.loss_scale_factor.value_or(0));
  KERASCPP_CHECK_VALUE(
      !o.gradient_accumulation_steps || *o.gradient_accumulation_steps >= 2,
      "{}: gradient_accumulation_steps must be an integer >= 2, got {}; leave it unset to update every step", name,
      o.gradient_accumulation_steps.value_or(0));
  options_ = o;
}

std::int64_t Optimizer::update_step() const {
  const auto steps = options_.gradient_accumulation_steps;
  return steps ? iterations_ / *steps : iterations_;
}

bool Optimizer::accumulating_only() const {
  const auto steps = options_.gradient_accumulation_steps;
  return steps && (iterations_ + 1) % *steps != 0;
}

void Optimizer::clip_gradients(Backend& backend, int replica, const std::vector<Variable*>& trainable) const {
  if (clipping_.clipnorm) {
    // Keras' _clip_by_norm: g·c / max(‖g‖, c); a zero gradient stays zero.
    const double c = *clipping_.clipnorm;
    for (Variable* v : trainable) {
      Tensor& g = v->grad(replica);
      const double norm = std::sqrt(backend.sum_squares(g));
      const double factor = c / std::max(norm, c);
      if (factor != 1.0) backend.scale(g, static_cast<float>(factor));
    }
  } else if (clipping_.global_clipnorm) {
    // Keras' clip_by_global_norm: scale = c·min(1/‖G‖, 1/c), NaN when the norm is not finite.
    const double c = *clipping_.global_clipnorm;
    double total = 0.0;
    for (Variable* v : trainable) total += backend.sum_squares(v->grad(replica));
    const double norm = std::sqrt(total);
    const double factor = std::isfinite(norm) ? c * std::min(1.0 / norm, 1.0 / c) : std::nan("");
    if (factor != 1.0)
      for (Variable* v : trainable) backend.scale(v->grad(replica), static_cast<float>(factor));
  } else if (clipping_.clipvalue) {
    const UpdateParams p{.rule = UpdateRule::clip_value, .value = static_cast<float>(*clipping_.clipvalue)};
    for (Variable* v : trainable) backend.optimizer_update(p, v->grad(replica), Tensor(), {});
  }
}

bool Optimizer::prepare_gradients(ReplicaContext& ctx, const std::vector<Variable*>& trainable) {
  Backend& backend = *ctx.backend;
  const int r = ctx.replica_id;
  if (options_.loss_scale_factor) {  // Keras' apply(): g / loss_scale_factor, before anything else
    const UpdateParams p{.rule = UpdateRule::divide, .value = static_cast<float>(*options_.loss_scale_factor)};
    for (Variable* v : trainable) backend.optimizer_update(p, v->grad(r), Tensor(), {});
  }
  if (options_.gradient_accumulation_steps && !accumulators_.empty()) {
    auto& acc = accumulators_.at(static_cast<std::size_t>(r));
    const bool only = accumulating_only();
    const UpdateParams p{.rule = only ? UpdateRule::accumulate_gradient : UpdateRule::average_accumulated,
                         .value = static_cast<float>(*options_.gradient_accumulation_steps)};
    for (std::size_t i = 0; i < trainable.size(); ++i)
      backend.optimizer_update(p, trainable[i]->grad(r), Tensor(), {&acc.at(i)});
    if (only) return true;  // apply() moves only the EMA; Keras clips the mean alone
  }
  clip_gradients(backend, r, trainable);
  return true;
}

void Optimizer::build(const std::vector<Variable*>& trainable, int replicas) {
  reset_state();
  slots_.assign(static_cast<std::size_t>(replicas), {});
  averages_.assign(options_.use_ema ? static_cast<std::size_t>(replicas) : 0, {});
  accumulators_.assign(options_.gradient_accumulation_steps ? static_cast<std::size_t>(replicas) : 0, {});
  int k = slots_per_variable();
  built_empty_ = k == 0 || trainable.empty();
  for (int r = 0; r < replicas; ++r)
    for (Variable* v : trainable) {  // each slot lives beside its replica's copy of the variable
      const Device device = v->value(r).device();
      if (options_.use_ema) {  // Keras' EMA starts at zeros; its first step copies the variable
        averages_[static_cast<std::size_t>(r)].push_back(Tensor::zeros(v->shape(), DType::float32, device));
      }
      if (options_.gradient_accumulation_steps)
        accumulators_[static_cast<std::size_t>(r)].push_back(Tensor::zeros(v->shape(), DType::float32, device));
      for (int s = 0; s < k; ++s) {
        slots_[static_cast<std::size_t>(r)].push_back(Tensor::zeros(v->shape(), DType::float32, device));
        Tensor& slot = slots_[static_cast<std::size_t>(r)].back();
        if (slot_copies_variable(s)) slot.copy_from(v->value(r));
        else if (const float initial = slot_initial_value(s); initial != 0.f) slot.fill(initial);
      }
    }
}

void Optimizer::apply(Backend& backend, int replica, std::size_t index, Variable& variable) {
  int k = slots_per_variable();
  Tensor* slots = k ? &slots_.at(static_cast<std::size_t>(replica)).at(index * static_cast<std::size_t>(k)) : nullptr;
  const double lr = learning_rate();
  // A user-written schedule is only seen through its values: refuse a bad one before it is applied.
  KERASCPP_CHECK_VALUE(
      std::isfinite(lr) && lr >= 0,
      "{}: the learning-rate schedule returned {} at step {}; a schedule must return a finite rate >= 0", class_name(),
      lr, iterations_);
  Tensor& w = variable.value(replica);
  // Keras builds an optimizer at its first step: a slot that starts as its variable copies the
  // variable as it is then (after any load_weights or set_weights that followed compile()).
  if (iterations_ == 0)
    for (int s = 0; s < k; ++s)
      if (slot_copies_variable(s)) backend.copy(w, slots[s]);
  if (!accumulating_only()) {
    if (options_.weight_decay)  // Keras' _apply_weight_decay, before the step
      backend.weight_decay_update(w, static_cast<float>(lr), static_cast<float>(*options_.weight_decay));
    update(backend, w, variable.grad(replica), slots, lr, update_step());
  }
  if (options_.use_ema) {
    // Keras' _update_model_variables_moving_average: momentum 0 while update_step() is 0 (the
    // average becomes the variable), then ema_momentum; every ema_overwrite_frequency-th update
    // step the variable takes its average.
    Tensor& average = averages_.at(static_cast<std::size_t>(replica)).at(index);
    const UpdateParams p{.rule = UpdateRule::moving_average,
                         .beta_1 = update_step() == 0 ? 0.f : static_cast<float>(options_.ema_momentum)};
    backend.optimizer_update(p, w, Tensor(), {&average});
    if (options_.ema_overwrite_frequency && (update_step() + 1) % *options_.ema_overwrite_frequency == 0)
      backend.copy(average, w);
  }
}

std::vector<Tensor*> Optimizer::slot_tensors(int replica) {
  std::vector<Tensor*> out;
  for (auto* group : {&averages_, &accumulators_})
    if (!group->empty())
      for (auto& t : group->at(static_cast<std::size_t>(replica))) out.push_back(&t);
  if (!slots_.empty())
    for (auto& t : slots_.at(static_cast<std::size_t>(replica))) out.push_back(&t);
  if (built())
    for (Tensor* t : optimizer_state()) out.push_back(t);
  return out;
}

void SGD::update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t) const {
  Tensor none;
  b.sgd_update(w, g, slots ? slots[0] : none, static_cast<float>(lr), static_cast<float>(o_.momentum), o_.nesterov);
}

namespace {

// Adam's step size, Keras 3's lr·√(1 − β2^t) / (1 − β1^t) (bias corrections folded into the
// learning rate), from the β's the backends use: rounded to float32. adam_update weighs the
// moments by 1 − β formed in float32 from those floats, and 1 − 0.999f is 0.00099998713, 1.3e-5
// below 0.001. Corrections from the exact β's then disagreed with v's weights: every step early
// in training was 6.4e-6 (relative) too long, which sent a CNN's weights 7.2e-4 from a float64
// run within 32 steps, against 3.9e-5 for Keras float32 (docs/numerics.md). With both from the
// same β's the two cancel (at t = 1 the step is exactly lr·m/√v).
double adam_step_size(double lr, double beta_1, double beta_2, std::int64_t step) {
  const double t = static_cast<double>(step + 1);
  const double b1 = static_cast<float>(beta_1), b2 = static_cast<float>(beta_2);
  return lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
}

}  // namespace

void Adam::update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const {
  // Epsilon is added after the sqrt, as in Keras 3.
  const double lr_t = adam_step_size(lr, o_.beta_1, o_.beta_2, step);
  b.adam_update(w, g, slots[0], slots[1], static_cast<float>(lr_t), static_cast<float>(o_.beta_1),
                static_cast<float>(o_.beta_2), static_cast<float>(o_.epsilon));
}

void AdamW::set_common_options(OptimizerOptions o) {
  KERASCPP_CHECK_VALUE(
      !o.weight_decay,
      "AdamW: set weight_decay in AdamWOptions (it is AdamW's own, default 0.004), not in OptimizerOptions");
  Optimizer::set_common_options(o);
}

void AdamW::update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const {
  // Keras 3 applies the decay with the plain learning rate, before the (bias-corrected) Adam step.
  b.weight_decay_update(w, static_cast<float>(lr), static_cast<float>(o_.weight_decay));
  const double lr_t = adam_step_size(lr, o_.beta_1, o_.beta_2, step);
  b.adam_update(w, g, slots[0], slots[1], static_cast<float>(lr_t), static_cast<float>(o_.beta_1),
                static_cast<float>(o_.beta_2), static_cast<float>(o_.epsilon));
}

void Adagrad::update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t) const {
  b.adagrad_update(w, g, slots[0], static_cast<float>(lr), static_cast<float>(o_.epsilon));
}

void RMSprop::update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t) const {
  b.rmsprop_update(w, g, slots[0], static_cast<float>(lr), static_cast<float>(o_.rho), static_cast<float>(o_.epsilon));
}

NadamOptions Nadam::checked(NadamOptions o) {
  check_range(o.beta_1, 0, 1, false, "Nadam", "beta_1", "the Keras default is 0.9");
  check_range(o.beta_2, 0, 1, false, "Nadam", "beta_2", "the Keras default is 0.999");
  check_epsilon(o.epsilon, "Nadam");
  return o;
}

Nadam::Nadam(LearningRate lr, NadamOptions o)
    : Optimizer(std::move(lr)), o_(checked(o)), u_product_(Tensor::zeros({}, DType::float32, Device{})) {
  u_product_.fill(1.f);
}

void Nadam::reset_state() { u_product_.fill(1.f); }

float Nadam::u_at(std::int64_t t) const {
  // Keras: beta_1 * (1 - 0.5 * power(0.96, t)), every operand float32.
  const float decay = std::pow(0.96f, static_cast<float>(t));
  return static_cast<float>(o_.beta_1) * (1.f - 0.5f * decay);
}

float Nadam::u_product_after(std::int64_t step) const {
  // Keras' _backend_update_step, before the variables' updates: u_product * beta_1 * (1 − 0.5·0.96^t).
  const float decay = std::pow(0.96f, static_cast<float>(step + 1));
  return u_product_.data<float>()[0] * static_cast<float>(o_.beta_1) * (1.f - 0.5f * decay);
}

void Nadam::end_step(std::int64_t step) { u_product_.data<float>()[0] = u_product_after(step); }

void Nadam::update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const {
  // Keras updates u_product once per step before the variables; it is committed in end_step(),
  // so every replica (and variable) of this step reads the same stored value.
  const float u = u_at(step + 1), u_next = u_at(step + 2);
  const float beta_2_power = std::pow(static_cast<float>(o_.beta_2), static_cast<float>(step + 1));
  b.nadam_update(w, g, slots[0], slots[1], static_cast<float>(lr), static_cast<float>(o_.beta_1),
                 static_cast<float>(o_.beta_2), static_cast<float>(o_.epsilon), u, u_next, u_product_after(step),
                 beta_2_power);
}

OptimizerRef::OptimizerRef(const char* name) : OptimizerRef(std::string(name)) {}

OptimizerRef::OptimizerRef(const std::string& name) {
  if (name == "adam") opt_ = std::make_shared<Adam>();
  else if (name == "sgd") opt_ = std::make_shared<SGD>();
  else if (name == "adamw") opt_ = std::make_shared<AdamW>();
  else if (name == "rmsprop") opt_ = std::make_shared<RMSprop>();
  else if (name == "adagrad") opt_ = std::make_shared<Adagrad>();
  else if (name == "nadam") opt_ = std::make_shared<Nadam>();
  else if (name == "adamax") opt_ = std::make_shared<Adamax>();
  else if (name == "adadelta") opt_ = std::make_shared<Adadelta>();
  else if (name == "ftrl") opt_ = std::make_shared<Ftrl>();
  else if (name == "lion") opt_ = std::make_shared<Lion>();
  else if (name == "lamb") opt_ = std::make_shared<Lamb>();
  else if (name == "schedule_free_adamw") opt_ = std::make_shared<ScheduleFreeAdamW>();
  else
    throw ValueError(
        fmt::format("unknown optimizer '{}'; use \"adam\", \"adamw\", \"sgd\", \"rmsprop\", \"adagrad\", "
                    "\"nadam\", \"adamax\", \"adadelta\", \"ftrl\", \"lion\", \"lamb\" or \"schedule_free_adamw\"",
                    name));
}

}  // namespace kerascpp::optimizers
