// CosineDecay (Keras 3) and the official Transformer's warmup + inverse-square-root schedule.
// ExponentialDecay and PiecewiseConstantDecay live with the optimizers (optimizers.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "check.hpp"
#include "kerascpp/training/optimizers.hpp"

namespace kerascpp::optimizers::schedules {

CosineDecay::CosineDecay(double initial, std::int64_t decay_steps, CosineDecayOptions o)
    : initial_(checked_learning_rate(initial, "CosineDecay: initial_learning_rate")), decay_steps_(decay_steps), o_(o) {
  KERASCPP_CHECK_VALUE(decay_steps > 0, "CosineDecay: decay_steps must be positive, got {}", decay_steps);
  KERASCPP_CHECK_VALUE(std::isfinite(o.alpha) && o.alpha >= 0 && o.alpha <= 1,
                       "CosineDecay: alpha must be in [0, 1] (the final rate as a fraction; Keras' default 0), got {}",
                       o.alpha);
  KERASCPP_CHECK_VALUE(o.warmup_steps >= 0, "CosineDecay: warmup_steps must be >= 0, got {}", o.warmup_steps);
  if (o.warmup_target) checked_learning_rate(*o.warmup_target, "CosineDecay: warmup_target");
  KERASCPP_CHECK_VALUE(
      !o.warmup_target || o.warmup_steps > 0,
      "CosineDecay: warmup_target is set but warmup_steps is 0; give the warmup a length (e.g. 1000 steps)");
}

double CosineDecay::operator()(std::int64_t step) const {
  const double decay_steps = static_cast<double>(decay_steps_);
  auto decay = [&](double s, double from) {
    double cosine = 0.5 * (1.0 + std::cos(M_PI * s / decay_steps));
    return from * ((1.0 - o_.alpha) * cosine + o_.alpha);
  };
  double s = static_cast<double>(std::max<std::int64_t>(step, 0));
  if (!o_.warmup_target) return decay(std::min(s, decay_steps), initial_);
  const double warmup = static_cast<double>(o_.warmup_steps), target = *o_.warmup_target;
  s = std::min(s, decay_steps + warmup);
  if (s < warmup) return initial_ + (target - initial_) * (s / warmup);
  return decay(s - warmup, target);
}

TransformerSchedule::TransformerSchedule(double initial, std::int64_t hidden_size, std::int64_t warmup_steps)
    : initial_(checked_learning_rate(initial, "TransformerSchedule: initial_learning_rate")),
      hidden_size_(hidden_size),
      warmup_steps_(warmup_steps) {
  KERASCPP_CHECK_VALUE(
      hidden_size > 0,
      "TransformerSchedule: hidden_size must be positive (the model width, 512 for the base model), got {}",
      hidden_size);
  KERASCPP_CHECK_VALUE(warmup_steps > 0,
                       "TransformerSchedule: warmup_steps must be positive (16000 for the base model), got {}",
                       warmup_steps);
}

double TransformerSchedule::operator()(std::int64_t step) const {
  const double s = static_cast<double>(std::max<std::int64_t>(step, 0)), w = static_cast<double>(warmup_steps_);
  return initial_ / std::sqrt(static_cast<double>(hidden_size_)) * std::min(1.0, s / w) / std::sqrt(std::max(s, w));
}

}  // namespace kerascpp::optimizers::schedules
