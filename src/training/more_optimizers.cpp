// Keras 3's Adamax, Adadelta, Ftrl, Lion, Lamb and ScheduleFreeAdamW (keras/src/optimizers/*.py): the options as Keras
// checks them, and each step as one call of the backend's generic optimizer_update (the rules are
// in backend/optimizer_rules.hpp) with the scalars Keras computes per step.
#include <algorithm>
#include <cmath>

#include "check.hpp"
#include "kerascpp/training/optimizers.hpp"
#include "training/optimizer_checks.hpp"

namespace kerascpp::optimizers {

using checks::check_epsilon;
using checks::check_range;

namespace {
// 1 − β^t with t = step + 1, in float32 as Keras' ops.power(cast(β), t) computes it.
float one_minus_power(double beta, std::int64_t step) {
  return 1.f - std::pow(static_cast<float>(beta), static_cast<float>(step + 1));
}
}  // namespace

Adamax::Adamax(LearningRate lr, AdamaxOptions o) : Optimizer(std::move(lr)), o_(o) {
  check_range(o.beta_1, 0, 1, false, "Adamax", "beta_1", "the Keras default is 0.9");
  check_range(o.beta_2, 0, 1, false, "Adamax", "beta_2", "the Keras default is 0.999");
  check_epsilon(o.epsilon, "Adamax");
}

void Adamax::update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const {
  const UpdateParams p{.rule = UpdateRule::adamax,
                       .lr = static_cast<float>(lr),
                       .beta_1 = static_cast<float>(o_.beta_1),
                       .beta_2 = static_cast<float>(o_.beta_2),
                       .epsilon = static_cast<float>(o_.epsilon),
                       .one_minus_beta_1_power = one_minus_power(o_.beta_1, step)};
  b.optimizer_update(p, w, g, {&slots[0], &slots[1]});
}

Adadelta::Adadelta(LearningRate lr, AdadeltaOptions o) : Optimizer(std::move(lr)), o_(o) {
  check_range(o.rho, 0, 1, true, "Adadelta", "rho", "the Keras default is 0.95");
  check_epsilon(o.epsilon, "Adadelta");
}

void Adadelta::update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t) const {
  const UpdateParams p{.rule = UpdateRule::adadelta,
                       .lr = static_cast<float>(lr),
                       .beta_1 = static_cast<float>(o_.rho),
                       .epsilon = static_cast<float>(o_.epsilon)};
  b.optimizer_update(p, w, g, {&slots[0], &slots[1]});
}

Ftrl::Ftrl(LearningRate lr, FtrlOptions o) : Optimizer(std::move(lr)), o_(o) {
  // Keras' own checks (ftrl.py), with NaN refused too.
  auto non_negative = [](double v, const char* name) {
    KERASCPP_CHECK_VALUE(std::isfinite(v) && v >= 0,
                         "Ftrl: {} must be a finite number >= 0, got {}; the Keras default is {}", name, v,
                         std::string(name) == "initial_accumulator_value" ? "0.1" : "0");
  };
  non_negative(o.initial_accumulator_value, "initial_accumulator_value");
  non_negative(o.l1_regularization_strength, "l1_regularization_strength");
  non_negative(o.l2_regularization_strength, "l2_regularization_strength");
  non_negative(o.l2_shrinkage_regularization_strength, "l2_shrinkage_regularization_strength");
  KERASCPP_CHECK_VALUE(std::isfinite(o.learning_rate_power) && o.learning_rate_power <= 0,
                       "Ftrl: learning_rate_power must be a finite number <= 0, got {}; the Keras default is -0.5",
                       o.learning_rate_power);
  KERASCPP_CHECK_VALUE(std::isfinite(o.beta), "Ftrl: beta must be a finite number, got {}; the Keras default is 0",
                       o.beta);
}

void Ftrl::update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const {
  // Ftrl divides by the rate (Keras would write Inf and NaN into the weights).
  KERASCPP_CHECK_VALUE(lr > 0, "Ftrl: the learning rate is 0 at step {}; Ftrl divides by it, so it must be > 0", step);
  const float lr_f = static_cast<float>(lr);
  // Keras: l2 + beta / (2·lr), with lr a float32 tensor.
  const float l2 = static_cast<float>(o_.l2_regularization_strength) + static_cast<float>(o_.beta) / (2.f * lr_f);
  const UpdateParams p{.rule = UpdateRule::ftrl,
                       .lr = lr_f,
                       .l1 = static_cast<float>(o_.l1_regularization_strength),
                       .l2 = l2,
                       .l2_shrinkage = static_cast<float>(o_.l2_shrinkage_regularization_strength),
                       .lr_power = static_cast<float>(o_.learning_rate_power)};
  b.optimizer_update(p, w, g, {&slots[0], &slots[1]});
}

Lion::Lion(LearningRate lr, LionOptions o) : Optimizer(std::move(lr)), o_(o) {
  // Keras refuses beta_1 <= 0 (the optimizer degenerates to sign SGD) and beta_1 > 1.
  KERASCPP_CHECK_VALUE(o.beta_1 > 0 && o.beta_1 <= 1,
                       "Lion: beta_1 must be in (0, 1], got {}; the Keras default is 0.9", o.beta_1);
  check_range(o.beta_2, 0, 1, true, "Lion", "beta_2", "the Keras default is 0.99");
}

void Lion::update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t) const {
  const UpdateParams p{.rule = UpdateRule::lion,
                       .lr = static_cast<float>(lr),
                       .beta_1 = static_cast<float>(o_.beta_1),
                       .beta_2 = static_cast<float>(o_.beta_2)};
  b.optimizer_update(p, w, g, {&slots[0]});
}

Lamb::Lamb(LearningRate lr, LambOptions o) : Optimizer(std::move(lr)), o_(o) {
  check_range(o.beta_1, 0, 1, false, "Lamb", "beta_1", "the Keras default is 0.9");
  check_range(o.beta_2, 0, 1, false, "Lamb", "beta_2", "the Keras default is 0.999");
  check_epsilon(o.epsilon, "Lamb");
}

void Lamb::update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const {
  // The direction needs the whole variable's norms before any weight moves: one elementwise pass
  // for the moments and the direction, two sums of squares, then w −= (ratio·lr)·direction.
  Tensor direction = Tensor::zeros(w.shape(), DType::float32, w.device());
  const UpdateParams p{.rule = UpdateRule::lamb_direction,
                       .beta_1 = static_cast<float>(o_.beta_1),
                       .beta_2 = static_cast<float>(o_.beta_2),
                       .epsilon = static_cast<float>(o_.epsilon),
                       .one_minus_beta_1_power = one_minus_power(o_.beta_1, step),
                       .one_minus_beta_2_power = one_minus_power(o_.beta_2, step)};
  b.optimizer_update(p, w, g, {&slots[0], &slots[1], &direction});
  const float w_norm = static_cast<float>(std::sqrt(b.sum_squares(w)));
  const float d_norm = static_cast<float>(std::sqrt(b.sum_squares(direction)));
  const float ratio = w_norm > 0 && d_norm > 0 ? w_norm / d_norm : 1.f;
  b.scale(direction, -(ratio * static_cast<float>(lr)));
  b.add_inplace(w, direction);
}

ScheduleFreeAdamW::ScheduleFreeAdamW(LearningRate lr, ScheduleFreeAdamWOptions o) : Optimizer(std::move(lr)), o_(o) {
  // beta_1 = 0 would divide by zero when the average is recovered from the variable.
  KERASCPP_CHECK_VALUE(o.beta_1 > 0 && o.beta_1 < 1,
                       "ScheduleFreeAdamW: beta_1 must be in (0, 1), got {}; the Keras default is 0.9", o.beta_1);
  check_range(o.beta_2, 0, 1, false, "ScheduleFreeAdamW", "beta_2", "the Keras default is 0.999");
  check_epsilon(o.epsilon, "ScheduleFreeAdamW");
  KERASCPP_CHECK_VALUE(o.warmup_steps >= 0,
                       "ScheduleFreeAdamW: warmup_steps must be >= 0, got {}; the Keras default is 0", o.warmup_steps);
}

void ScheduleFreeAdamW::update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr,
                               std::int64_t step) const {
  const float t = static_cast<float>(step + 1);
  float lr_f = static_cast<float>(lr);
  if (o_.warmup_steps > 0) lr_f = lr_f * std::min(t / static_cast<float>(o_.warmup_steps), 1.f);  // Keras' warmup
  const UpdateParams p{.rule = UpdateRule::schedule_free_adamw,
                       .lr = lr_f,
                       .beta_1 = static_cast<float>(o_.beta_1),
                       .beta_2 = static_cast<float>(o_.beta_2),
                       .epsilon = static_cast<float>(o_.epsilon),
                       .one_minus_beta_2_power = one_minus_power(o_.beta_2, step),
                       .value = 1.f / t};
  b.optimizer_update(p, w, g, {&slots[0], &slots[1]});
}

}  // namespace kerascpp::optimizers
