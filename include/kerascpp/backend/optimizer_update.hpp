// The argument of TrainingKernels::optimizer_update: which of Keras 3's elementwise optimizer
// rules to run and its float32 scalars. One generic kernel with a rule, rather than one virtual
// per optimizer, keeps the backend interface short (scripts/check_structure.sh caps it). Free of
// other includes so that the CUDA kernels can include it.
#pragma once

namespace kerascpp {

/// An elementwise optimizer rule, written as Keras 3 computes it (float32, Keras' operation order).
enum class UpdateRule : int {
  // slots m, u: m += (g − m)(1 − β1); u = max(β2·u, |g|); w −= lr·m / ((1 − β1^t)·(u + ε))
  adamax,
  // slots accumulated_grad a, accumulated_delta_var d: a = ρa + (1 − ρ)g²;
  // δ = −√(d + ε)·g / √(a + ε); d = ρd + (1 − ρ)δ²; w += lr·δ   (ρ in beta_1)
  adadelta,
  // slots accumulator n, linear z (Keras' Ftrl, l2 already including beta / (2·lr)):
  // z += g + 2·l2_shrinkage·w − (n'^−p − n^−p)/lr·w, n' = n + g²; w = (clip(z, ±l1) − z) / (n'^−p/lr + 2·l2)
  ftrl,
  // slot m: w −= lr·sign(β1·m + (1 − β1)g); m = β2·m + (1 − β2)g
  lion,
  // slots m, v, direction (output): Adam's moments, direction = (m / (1 − β1^t)) / (√(v / (1 − β2^t)) + ε);
  // w is not changed (Lamb scales the direction by its trust ratio afterwards)
  lamb_direction,
  // slots z (momentum), v (velocity), Keras' ScheduleFreeAdamW: v += (g² − v)(1 − β2);
  // z' = z − lr·g / (√(v / (1 − β2^t)) + ε); x = (w − (1 − β1)z)/β1; w = (1 − β1)z' + β1((1 − c)x + c·z'), c = value =
  // 1/t
  schedule_free_adamw,
  // gradient rules: `w` is the gradient being rewritten, `g` unused
  clip_value,           // w = clip(w, −value, value)   (Keras' clipvalue)
  accumulate_gradient,  // slot accumulator: accumulator += w
  average_accumulated,  // slot accumulator: w = (w + accumulator) / value; accumulator = 0
  divide,               // w = w / value   (Keras' loss_scale_factor)
  // slot average: average = β1·average + (1 − β1)·w   (Keras' EMA, β1 = 0 on the first step)
  moving_average,
};

/// The scalars of an UpdateRule (float32, as Keras rounds them); each rule reads the ones it names.
struct UpdateParams {
  /// The rule to run.
  UpdateRule rule = UpdateRule::adamax;
  /// @{
  /// The learning rate and Keras' beta_1, beta_2 and epsilon.
  float lr = 0, beta_1 = 0, beta_2 = 0, epsilon = 0;
  /// @}
  /// @{
  /// The bias corrections 1 − β^t.
  float one_minus_beta_1_power = 1, one_minus_beta_2_power = 1;
  /// @}
  /// @{
  /// Ftrl's regularization strengths and learning_rate_power.
  float l1 = 0, l2 = 0, l2_shrinkage = 0, lr_power = 0;
  /// @}
  float value = 0;  ///< clip_value's bound, the accumulation steps
};

}  // namespace kerascpp
