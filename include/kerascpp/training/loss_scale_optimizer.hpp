// LossScaleOptimizer: loss scaling around another optimizer, for training in float16 without
// gradients underflowing. Keras 3's keras.optimizers.LossScaleOptimizer (dynamic) and TensorFlow's
// fixed loss scale (LossScaleOptimizer(dynamic=False, initial_scale=N), the official models'
// --loss_scale N).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kerascpp/training/optimizers.hpp"

/// Keras' optimizers (keras.optimizers) and learning rate schedules.
namespace kerascpp::optimizers {

/// LossScaleOptimizer's settings, with Keras' names and defaults.
struct LossScaleOptions {
  /// true: Keras' dynamic scale (halved on overflow, doubled after dynamic_growth_steps finite
  /// steps); false: a fixed scale that never changes and never skips a step, as TensorFlow's.
  bool dynamic = true;
  double initial_scale = 32768;              ///< 2^15, Keras' default; finite and > 0
  std::int64_t dynamic_growth_steps = 2000;  ///< >= 1
};

/// Each training step multiplies the loss (its penalties included, so every gradient) by
/// loss_scale(); the all-reduced gradients are divided by it before the wrapped optimizer applies
/// them. Dynamic: when any gradient holds Inf or NaN the step is skipped on every replica (no
/// variable, slot or iteration changes; the constraints do not run) and the scale halves; after
/// dynamic_growth_steps finite steps in a row it doubles (while it stays finite in float32).
/// Logs report the unscaled loss. learning_rate, iterations and clipping are the wrapped
/// optimizer's, as in Keras (where clipnorm must be set on the inner optimizer; here setting it on
/// the wrapper sets it there). The state is Keras' optimizer variables: a weights file stores
/// step_counter and dynamic_scale, then the wrapped optimizer's variables, in Keras' layout.
///   model.compile({.optimizer = optimizers::LossScaleOptimizer(optimizers::Adam(1e-3)), ...});
///   optimizers::LossScaleOptimizer(optimizers::SGD(0.1), {.dynamic = false, .initial_scale = 128});
class LossScaleOptimizer : public Optimizer {
 public:
  /// Throws ValueError for a scale that is not finite and > 0, for growth steps < 1, or for an
  /// inner optimizer that is itself a LossScaleOptimizer.
  template <class O, class = std::enable_if_t<std::is_base_of_v<Optimizer, O>>>
  explicit LossScaleOptimizer(O inner, LossScaleOptions options = {})
      : LossScaleOptimizer(std::make_shared<O>(std::move(inner)), &copy_as<O>, options) {}
  /// Around an optimizer already held by a shared pointer (an OptimizerRef's shared(); compile()
  /// wraps a mixed_float16 model's optimizer so, as Keras does). It shares `inner`; copying it
  /// is a StateError.
  static OptimizerRef around(std::shared_ptr<Optimizer> inner, LossScaleOptions options = {});
  /// A copy wraps a copy of the inner optimizer (as copying any optimizer gives an independent one).
  LossScaleOptimizer(const LossScaleOptimizer& other);
  /// Takes over the other's inner optimizer and state.
  LossScaleOptimizer(LossScaleOptimizer&&) = default;
  LossScaleOptimizer& operator=(const LossScaleOptimizer&) = delete;
  /// Takes over the other's inner optimizer and state.
  LossScaleOptimizer& operator=(LossScaleOptimizer&&) = default;

  /// "LossScaleOptimizer".
  std::string class_name() const override { return "LossScaleOptimizer"; }
  /// The wrapped optimizer's (the wrapper keeps no per-variable slots).
  int slots_per_variable() const override { return inner_->slots_per_variable(); }
  /// The wrapped optimizer (Keras' inner_optimizer).
  Optimizer& inner_optimizer() const { return *inner_; }
  /// The settings it was made with.
  const LossScaleOptions& options() const { return o_; }
  /// Finite steps since the scale last changed (Keras' step_counter).
  std::int64_t step_counter() const;

  /// The current scale the loss is multiplied by.
  float loss_scale() const override;
  /// Unscales this replica's gradients; false (skip the step everywhere) when a dynamic scale finds Inf or NaN.
  bool prepare_gradients(ReplicaContext& ctx, const std::vector<Variable*>& trainable) override;
  /// Builds the wrapped optimizer's slots and sets the scale to initial_scale.
  void build(const std::vector<Variable*>& trainable, int replicas) override;
  /// Whether the wrapped optimizer is built.
  bool built() const override { return inner_->built(); }
  /// The wrapped optimizer's update of one variable (not called in a skipped step).
  void apply(Backend& backend, int replica, std::size_t index, Variable& variable) override;
  /// Ends the step: halves the scale after a skipped step, doubles it after dynamic_growth_steps finite ones.
  void finish_step() override;

  /// @{
  /// The wrapped optimizer's (forwarded to it, as in Keras).
  double learning_rate() const override { return inner_->learning_rate(); }
  void set_learning_rate(double lr) override { inner_->set_learning_rate(lr); }
  bool has_schedule() const override { return inner_->has_schedule(); }
  std::int64_t iterations() const override { return inner_->iterations(); }
  void set_iterations(std::int64_t it) override { inner_->set_iterations(it); }
  void set_gradient_clipping(GradientClipping clipping) override { inner_->set_gradient_clipping(clipping); }
  const GradientClipping& gradient_clipping() const override { return inner_->gradient_clipping(); }
  std::vector<Tensor*> slot_tensors(int replica) override { return inner_->slot_tensors(replica); }
  int slot_replicas() const override { return inner_->slot_replicas(); }
  /// @}
  /// The wrapper's own variables, named and ordered as Keras' (a weights file stores them before
  /// the inner optimizer's): iteration and learning_rate (int32 and float32, unused and 0, as in
  /// Keras), step_counter (int32) and dynamic_scale (float32); host scalars.
  std::vector<std::pair<const char*, Tensor*>> own_variables();

 protected:
  /// Not used: apply() hands each update to the wrapped optimizer.
  void update(Backend&, Tensor&, const Tensor&, Tensor*, double, std::int64_t) const override;

 private:
  using CopyInner = std::shared_ptr<Optimizer> (*)(const Optimizer&);
  template <class O>
  static std::shared_ptr<Optimizer> copy_as(const Optimizer& o) {
    return std::make_shared<O>(static_cast<const O&>(o));
  }
  LossScaleOptimizer(std::shared_ptr<Optimizer> inner, CopyInner copy_inner, LossScaleOptions options);
  void reset_scale();

  std::shared_ptr<Optimizer> inner_;
  CopyInner copy_inner_;
  LossScaleOptions o_;
  // Host scalars, in Keras' order of the wrapper's variables.
  Tensor own_iteration_, own_learning_rate_, step_counter_, dynamic_scale_;
  // Each replica's verdict on this step's gradients (1: finite), written by prepare_gradients on
  // the replica threads, read by finish_step. Every replica reaches the same one.
  std::vector<unsigned char> finite_;
};

}  // namespace kerascpp::optimizers
