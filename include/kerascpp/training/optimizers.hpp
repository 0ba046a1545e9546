// Optimizers (SGD, Adam, AdamW, RMSprop, Adagrad, Nadam, Adamax, Adadelta, Ftrl, Lion, Lamb, ScheduleFreeAdamW)
// with Keras 3 defaults and update rules, Keras' options common to all of them, and learning-rate schedules. Slots are
// mirrored: one set per replica, updated identically from all-reduced gradients.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kerascpp/backend/backend.hpp"
#include "kerascpp/core/variable.hpp"
#include "kerascpp/distribute/context.hpp"

namespace kerascpp::optimizers {

/// Returns `value` when it is a usable learning rate (finite, >= 0, representable as float32);
/// otherwise throws ValueError naming `what` (e.g. "Adam: learning_rate") and the fix.
double checked_learning_rate(double value, const char* what);

/// Keras' learning rate schedules (keras.optimizers.schedules).
namespace schedules {
/// A learning rate as a function of the optimizer step.
class LearningRateSchedule {
 public:
  /// Destroys the schedule.
  virtual ~LearningRateSchedule() = default;
  /// The learning rate at `step` (from 0).
  virtual double operator()(std::int64_t step) const = 0;
};

/// ExponentialDecay's settings, with Keras' names and defaults.
struct ExponentialDecayOptions {
  /// Decay in whole steps of decay_steps (integer division).
  bool staircase = false;
};
/// lr = initial * decay_rate ^ (step / decay_steps)   (integer division when staircase)
class ExponentialDecay : public LearningRateSchedule {
 public:
  /// Keras' ExponentialDecay(initial_learning_rate, decay_steps, decay_rate).
  ExponentialDecay(double initial_learning_rate, std::int64_t decay_steps, double decay_rate,
                   ExponentialDecayOptions options = {});
  /// The rate at `step`.
  double operator()(std::int64_t step) const override;

 private:
  double initial_;
  std::int64_t decay_steps_;
  double rate_;
  bool staircase_;
};

/// values[i] while step <= boundaries[i] (values has one more entry than boundaries).
class PiecewiseConstantDecay : public LearningRateSchedule {
 public:
  /// Keras' PiecewiseConstantDecay(boundaries, values); boundaries increasing.
  PiecewiseConstantDecay(std::vector<std::int64_t> boundaries, std::vector<double> values);
  /// The rate at `step`.
  double operator()(std::int64_t step) const override;

 private:
  std::vector<std::int64_t> boundaries_;
  std::vector<double> values_;
};

/// Keras 3's CosineDecay. Without warmup_target: lr = initial * ((1 - alpha) * c + alpha), where
/// c = (1 + cos(pi * min(step, decay_steps) / decay_steps)) / 2. With warmup_target: a linear
/// ramp from initial to warmup_target over warmup_steps, then the cosine decay from warmup_target
/// over decay_steps (steps beyond both keep the final value).
struct CosineDecayOptions {
  double alpha = 0.0;                   ///< the final rate as a fraction of the decayed-from rate
  std::optional<double> warmup_target;  ///< unset: no warmup
  /// Steps of the linear warmup (with warmup_target).
  std::int64_t warmup_steps = 0;
};
/// Keras 3's CosineDecay, with an optional linear warmup (see CosineDecayOptions).
class CosineDecay : public LearningRateSchedule {
 public:
  /// Decays from initial_learning_rate (or warmup_target) over `decay_steps`.
  CosineDecay(double initial_learning_rate, std::int64_t decay_steps, CosineDecayOptions options = {});
  /// The rate at `step`.
  double operator()(std::int64_t step) const override;

 private:
  double initial_;
  std::int64_t decay_steps_;
  CosineDecayOptions o_;
};

/// The official Transformer's schedule ("Attention Is All You Need", TF official models):
/// lr = initial * hidden_size^-0.5 * min(1, step / warmup_steps) / sqrt(max(step, warmup_steps)),
/// i.e. a linear warmup to initial * (hidden_size * warmup_steps)^-0.5, then decay as step^-0.5.
/// The official base model uses initial 2.0, hidden_size 512, warmup_steps 16000.
class TransformerSchedule : public LearningRateSchedule {
 public:
  /// The schedule with these constants (see above).
  TransformerSchedule(double initial_learning_rate, std::int64_t hidden_size, std::int64_t warmup_steps);
  /// The rate at `step`.
  double operator()(std::int64_t step) const override;

 private:
  double initial_;
  std::int64_t hidden_size_, warmup_steps_;
};
}  // namespace schedules

/// A constant learning rate or a schedule.
class LearningRate {
 public:
  /// Constant rates are kept at float32 precision, like Keras' variable, so a rate saved in a
  /// checkpoint comes back bit-identical and a resumed run takes exactly the same steps.
  LearningRate(double value)  // NOLINT: implicit by design
      : value_(static_cast<float>(checked_learning_rate(value, "learning_rate"))) {}
  template <class S, class = std::enable_if_t<std::is_base_of_v<schedules::LearningRateSchedule, S>>>
  /// A schedule, evaluated at each step.
  LearningRate(S schedule) : schedule_(std::make_shared<S>(std::move(schedule))) {}  // NOLINT
  /// The rate at `step`.
  double at(std::int64_t step) const { return schedule_ ? (*schedule_)(step) : value_; }
  /// Whether it is a schedule rather than a constant.
  bool is_schedule() const { return static_cast<bool>(schedule_); }

 private:
  double value_ = 0;
  std::shared_ptr<schedules::LearningRateSchedule> schedule_;
};

/// Keras' clipnorm / global_clipnorm / clipvalue (unset: no clipping). Applied to the all-reduced
/// gradients, so every replica clips identically. clipnorm: g ← g·c / max(‖g‖, c) per gradient;
/// global_clipnorm: all gradients scaled by c / max(‖(g₁, g₂, …)‖, c); clipvalue: each element
/// clipped to [−c, c]. At most one of the three.
struct GradientClipping {
  /// Clip each gradient to this L2 norm.
  std::optional<double> clipnorm;
  /// Scale all gradients together to this global L2 norm.
  std::optional<double> global_clipnorm;
  std::optional<double> clipvalue;  ///< each gradient element clipped to [−clipvalue, clipvalue]
};

/// Keras' options common to every optimizer (base_optimizer.py), applied in Keras' order: the
/// gradients divided by loss_scale_factor, accumulated (every gradient_accumulation_steps-th step
/// applies their mean), clipped, then w −= w·weight_decay·lr, the optimizer's step, and the EMA.
struct OptimizerOptions {
  std::optional<double> weight_decay;                       ///< decoupled decay w −= w·weight_decay·lr before each step
  bool use_ema = false;                                     ///< keep an exponential moving average of each variable
  double ema_momentum = 0.99;                               ///< the EMA's momentum, in [0, 1]
  std::optional<std::int64_t> ema_overwrite_frequency;      ///< every this many steps the variables take their EMA
  std::optional<double> loss_scale_factor;                  ///< loss multiplied, gradients divided by this
  std::optional<std::int64_t> gradient_accumulation_steps;  ///< >= 2: update with the mean of this many steps
};

/// The public calls are virtual so that a wrapper (LossScaleOptimizer) can hand them to the
/// optimizer it wraps, as Keras' wrapper does with learning_rate and iterations.
class Optimizer {
 public:
  /// An optimizer stepping with `lr` (a constant or a schedule).
  explicit Optimizer(LearningRate lr) : lr_(std::move(lr)) {}
  /// Destroys the optimizer and its slots.
  virtual ~Optimizer() = default;
  /// Keras' class name: "Adam", "SGD", ...
  virtual std::string class_name() const = 0;
  /// The number of state tensors kept per variable (Adam: momentum and velocity).
  virtual int slots_per_variable() const = 0;
  /// This class's own entries of Keras' optimizer config ({"beta_1": 0.9, ...}) as a JSON object,
  /// for Model::save's compile_config; "" for an optimizer Keras has no equivalent of (then no
  /// compile_config is written).
  virtual std::string config_json() const { return ""; }

  /// Current learning rate (the schedule evaluated at iterations()).
  virtual double learning_rate() const { return lr_.at(iterations_); }
  /// Replaces the learning rate with a constant (ReduceLROnPlateau, LearningRateScheduler).
  virtual void set_learning_rate(double lr) { lr_ = LearningRate(lr); }
  /// Whether the learning rate is a schedule.
  virtual bool has_schedule() const { return lr_.is_schedule(); }
  /// The number of steps taken (Keras' optimizer.iterations).
  virtual std::int64_t iterations() const { return iterations_; }
  /// Sets iterations() (restoring a checkpoint).
  virtual void set_iterations(std::int64_t it) { iterations_ = it; }

  /// Throws ValueError for a bound that is not finite and > 0, or for more than one set (as Keras does).
  virtual void set_gradient_clipping(GradientClipping clipping);
  /// Sets Keras' common options (weight_decay, EMA, accumulation, loss_scale_factor); before build().
  virtual void set_common_options(OptimizerOptions options);
  /// The common options set (all unset by default).
  virtual const OptimizerOptions& common_options() const { return options_; }
  /// The clipping set (none by default).
  virtual const GradientClipping& gradient_clipping() const { return clipping_; }
  /// Clips replica `replica`'s (all-reduced) gradients of `trainable` in place; call before apply().
  void clip_gradients(Backend& backend, int replica, const std::vector<Variable*>& trainable) const;

  /// The factor the training step multiplies the loss (and so every gradient) by: the loss scale
  /// of a LossScaleOptimizer, Keras' loss_scale_factor (1 when unset) for the others. Fixed during a step (finish_step
  /// changes it).
  virtual float loss_scale() const {
    return options_.loss_scale_factor ? static_cast<float>(*options_.loss_scale_factor) : 1.f;
  }
  /// Replica ctx's all-reduced gradients of `trainable`, made ready for apply(): clipped (and
  /// first unscaled by a LossScaleOptimizer). Returns false when the step is to be skipped (a
  /// LossScaleOptimizer found Inf or NaN): then it does so on every replica of the step, which
  /// apply nothing. Called by every replica, once per step, before apply().
  virtual bool prepare_gradients(ReplicaContext& ctx, const std::vector<Variable*>& trainable);

  /// Creates zero slots for each trainable variable on each replica.
  virtual void build(const std::vector<Variable*>& trainable, int replicas);
  /// Whether build() has run.
  virtual bool built() const { return !slots_.empty() || built_empty_; }
  /// Updates replica `replica`'s copy of trainable variable `index` with its (all-reduced) gradient.
  virtual void apply(Backend& backend, int replica, std::size_t index, Variable& variable);
  /// Call once per step after every replica applied its updates (or skipped the step).
  virtual void finish_step() {
    if (!accumulating_only()) end_step(update_step());  // Keras moves Nadam's u_product on update steps only
    ++iterations_;
  }

  /// Keras' order: the EMA averages (use_ema) and gradient accumulators of every variable, then the
  /// slots (per variable, interleaved), copy of replica `replica`, then the optimizer-wide state
  /// (Nadam's u_product, shared by every replica).
  virtual std::vector<Tensor*> slot_tensors(int replica);
  /// How many replicas build() made slots for (this process's mirrored copies; 0 before build).
  virtual int slot_replicas() const { return static_cast<int>(slots_.size()); }

 protected:
  /// The update rule: w and its slots from gradient g at learning rate lr and step `step` (from 0).
  virtual void update(Backend& backend, Tensor& w, const Tensor& g, Tensor* slots, double lr,
                      std::int64_t step) const = 0;
  /// Value slot k starts at (Adagrad's and Ftrl's initial_accumulator_value; 0 for the others).
  virtual float slot_initial_value(int /*k*/) const { return 0.f; }
  /// Whether slot k starts as a copy of its variable (ScheduleFreeAdamW's momentum) rather than a constant.
  virtual bool slot_copies_variable(int /*k*/) const { return false; }
  /// Whether this step only accumulates its gradients (gradient_accumulation_steps, not the last
  /// step of a group): no variable changes, the EMA still moves.
  bool accumulating_only() const;
  /// Keras' `optimizer.iterations`: the steps taken, counted in whole accumulation groups with
  /// gradient_accumulation_steps (the saved iteration count and a schedule's step count every step).
  /// The bias corrections, Nadam's schedule and the EMA's first step and overwrites use it.
  std::int64_t update_step() const;
  /// State of the whole optimizer rather than of one variable (Nadam's u_product): host tensors
  /// saved and restored after the slots. build() calls reset_state(); finish_step() calls
  /// end_step(step) once, after every replica applied step `step` (update() is const and runs on
  /// replica threads, so it only reads this state).
  virtual std::vector<Tensor*> optimizer_state() { return {}; }
  /// Resets optimizer_state() (called by build()).
  virtual void reset_state() {}
  /// Advances optimizer_state() after step `step` (called by finish_step()).
  virtual void end_step(std::int64_t /*step*/) {}

 private:
  LearningRate lr_;
  GradientClipping clipping_;
  OptimizerOptions options_;
  std::int64_t iterations_ = 0;
  bool built_empty_ = false;
  // slots_[replica][variable * slots_per_variable + k]
  std::vector<std::vector<Tensor>> slots_;
  // averages_[replica][variable] (use_ema), accumulators_[replica][variable] (accumulation)
  std::vector<std::vector<Tensor>> averages_, accumulators_;
};

/// SGD's settings, with Keras' names and defaults.
struct SGDOptions {
  /// Velocity factor; 0 is plain gradient descent (and keeps no slot).
  double momentum = 0.0;
  /// Nesterov momentum.
  bool nesterov = false;
};
/// Keras' SGD, with optional (Nesterov) momentum.
class SGD : public Optimizer {
 public:
  /// SGD at learning rate `lr`; ValueError for an option out of range.
  explicit SGD(LearningRate lr = 0.01, SGDOptions o = {}) : Optimizer(std::move(lr)), o_(checked(o)) {}
  std::string class_name() const override { return "SGD"; }
  std::string config_json() const override;
  int slots_per_variable() const override { return o_.momentum != 0.0 ? 1 : 0; }

 protected:
  void update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const override;

 private:
  static SGDOptions checked(SGDOptions o);  // throws ValueError for an option outside its range
  SGDOptions o_;
};

/// Adam's settings, with Keras' names and defaults.
struct AdamOptions {
  /// Decay rate of the first-moment (momentum) average.
  double beta_1 = 0.9;
  /// Decay rate of the second-moment (velocity) average.
  double beta_2 = 0.999;
  /// Added to the denominator for numerical stability.
  double epsilon = 1e-7;
};
/// Keras' Adam.
class Adam : public Optimizer {
 public:
  /// Adam at learning rate `lr`; ValueError for an option out of range.
  explicit Adam(LearningRate lr = 0.001, AdamOptions o = {}) : Optimizer(std::move(lr)), o_(checked(o)) {}
  std::string class_name() const override { return "Adam"; }
  std::string config_json() const override;
  int slots_per_variable() const override { return 2; }

 protected:
  void update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const override;

 private:
  static AdamOptions checked(AdamOptions o);  // throws ValueError for an option outside its range
  AdamOptions o_;
};

/// Keras 3 AdamW: Adam plus decoupled weight decay, w −= lr·weight_decay·w before the Adam step
/// (base_optimizer._apply_weight_decay). Same slots as Adam (momentum, velocity).
struct AdamWOptions {
  /// Decoupled weight decay factor.
  double weight_decay = 0.004;
  /// Decay rate of the first-moment (momentum) average.
  double beta_1 = 0.9;
  /// Decay rate of the second-moment (velocity) average.
  double beta_2 = 0.999;
  /// Added to the denominator for numerical stability.
  double epsilon = 1e-7;
};
/// Keras 3's AdamW (see AdamWOptions).
class AdamW : public Optimizer {
 public:
  /// AdamW at learning rate `lr`; ValueError for an option out of range.
  explicit AdamW(LearningRate lr = 0.001, AdamWOptions o = {}) : Optimizer(std::move(lr)), o_(checked(o)) {}
  std::string class_name() const override { return "AdamW"; }
  std::string config_json() const override;
  int slots_per_variable() const override { return 2; }
  // Refuses OptimizerOptions::weight_decay: AdamW's own (AdamWOptions) is the one Keras saves.
  void set_common_options(OptimizerOptions options) override;

 protected:
  void update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const override;

 private:
  static AdamWOptions checked(AdamWOptions o);  // throws ValueError for an option outside its range
  AdamWOptions o_;
};

/// RMSprop's settings, with Keras' names and defaults.
struct RMSpropOptions {
  /// Decay rate of the moving average of squared gradients.
  double rho = 0.9;
  /// Added to the denominator for numerical stability.
  double epsilon = 1e-7;
};
/// Keras' RMSprop.
class RMSprop : public Optimizer {
 public:
  /// RMSprop at learning rate `lr`; ValueError for an option out of range.
  explicit RMSprop(LearningRate lr = 0.001, RMSpropOptions o = {}) : Optimizer(std::move(lr)), o_(checked(o)) {}
  std::string class_name() const override { return "RMSprop"; }
  std::string config_json() const override;
  int slots_per_variable() const override { return 1; }

 protected:
  void update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const override;

 private:
  static RMSpropOptions checked(RMSpropOptions o);  // throws ValueError for an option outside its range
  RMSpropOptions o_;
};

/// Keras 3 Adagrad: accumulator += g²; w −= lr·g / sqrt(accumulator + eps). One slot (accumulator).
struct AdagradOptions {
  /// The value the accumulator starts at.
  double initial_accumulator_value = 0.1;
  /// Added to the denominator for numerical stability.
  double epsilon = 1e-7;
};
/// Keras 3's Adagrad (see AdagradOptions).
class Adagrad : public Optimizer {
 public:
  /// Adagrad at learning rate `lr`; ValueError for an option out of range.
  explicit Adagrad(LearningRate lr = 0.001, AdagradOptions o = {}) : Optimizer(std::move(lr)), o_(checked(o)) {}
  std::string class_name() const override { return "Adagrad"; }
  std::string config_json() const override;
  int slots_per_variable() const override { return 1; }

 protected:
  void update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const override;
  /// The accumulator starts at initial_accumulator_value.
  float slot_initial_value(int) const override { return static_cast<float>(o_.initial_accumulator_value); }

 private:
  static AdagradOptions checked(AdagradOptions o);  // throws ValueError for an option outside its range
  AdagradOptions o_;
};

/// Keras 3 Nadam: Adam with Nesterov momentum and Dozat's momentum schedule
/// u_t = β1·(1 − 0.5·0.96^t). Slots (momentum, velocity) per variable, plus Keras' u_product =
/// Π u_t, one float32 scalar for the optimizer, saved after the slots (Keras' order).
struct NadamOptions {
  /// Decay rate of the first-moment (momentum) average.
  double beta_1 = 0.9;
  /// Decay rate of the second-moment (velocity) average.
  double beta_2 = 0.999;
  /// Added to the denominator for numerical stability.
  double epsilon = 1e-7;
};
/// Keras 3's Nadam (see NadamOptions).
class Nadam : public Optimizer {
 public:
  /// Nadam at learning rate `lr`; ValueError for an option out of range.
  explicit Nadam(LearningRate lr = 0.001, NadamOptions o = {});
  std::string class_name() const override { return "Nadam"; }
  std::string config_json() const override;
  int slots_per_variable() const override { return 2; }
  /// Keras' u_product after the steps taken so far (1 before the first).
  float u_product() const { return u_product_.data<float>()[0]; }

 protected:
  void update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const override;
  /// Keras' u_product.
  std::vector<Tensor*> optimizer_state() override { return {&u_product_}; }
  void reset_state() override;
  void end_step(std::int64_t step) override;

 private:
  static NadamOptions checked(NadamOptions o);  // throws ValueError for an option outside its range
  float u_at(std::int64_t t) const;             // u_t in float32, as Keras computes it
  // u_product after step `step` (0-based): the stored product times u_{step+1}.
  float u_product_after(std::int64_t step) const;
  NadamOptions o_;
  Tensor u_product_;  // float32 scalar on the host
};

/// Keras 3 Adamax's options (Adam with the infinity norm).
struct AdamaxOptions {
  /// Decay rate of the first-moment (momentum) average.
  double beta_1 = 0.9;
  /// Decay rate of the infinity-norm average u.
  double beta_2 = 0.999;
  /// Added to the denominator for numerical stability.
  double epsilon = 1e-7;
};
/// Keras 3 Adamax: m += (g − m)(1 − β1); u = max(β2·u, |g|); w −= lr·m / ((1 − β1^t)(u + ε)).
/// Slots per variable: momentum, norm.
class Adamax : public Optimizer {
 public:
  /// Adamax at learning rate `lr`; ValueError for an option out of range.
  explicit Adamax(LearningRate lr = 0.001, AdamaxOptions o = {});
  std::string class_name() const override { return "Adamax"; }
  std::string config_json() const override;
  int slots_per_variable() const override { return 2; }

 protected:
  void update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const override;

 private:
  AdamaxOptions o_;
};

/// Keras 3 Adadelta's options.
struct AdadeltaOptions {
  /// Decay rate of both running averages.
  double rho = 0.95;
  /// Added to the denominator for numerical stability.
  double epsilon = 1e-7;
};
/// Keras 3 Adadelta (no bias correction). Slots per variable: accumulated_grad, accumulated_delta_var.
class Adadelta : public Optimizer {
 public:
  /// Adadelta at learning rate `lr`; ValueError for an option out of range.
  explicit Adadelta(LearningRate lr = 0.001, AdadeltaOptions o = {});
  std::string class_name() const override { return "Adadelta"; }
  std::string config_json() const override;
  int slots_per_variable() const override { return 2; }

 protected:
  void update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const override;

 private:
  AdadeltaOptions o_;
};

/// Keras 3 Ftrl's options (names and defaults as Keras has them).
struct FtrlOptions {
  /// The power the accumulator is raised to in the step size (<= 0).
  double learning_rate_power = -0.5;
  /// The accumulator slot's starting value (>= 0).
  double initial_accumulator_value = 0.1;
  /// L1 penalty strength (>= 0).
  double l1_regularization_strength = 0.0;
  /// L2 penalty strength (>= 0).
  double l2_regularization_strength = 0.0;
  /// L2 shrinkage applied to the gradient (>= 0).
  double l2_shrinkage_regularization_strength = 0.0;
  /// Added to the accumulator's root in the denominator.
  double beta = 0.0;
};
/// Keras 3 Ftrl (follow the regularized leader). Slots per variable: accumulator, linear.
class Ftrl : public Optimizer {
 public:
  /// Ftrl at learning rate `lr`; ValueError for an option out of range.
  explicit Ftrl(LearningRate lr = 0.001, FtrlOptions o = {});
  std::string class_name() const override { return "Ftrl"; }
  std::string config_json() const override;
  int slots_per_variable() const override { return 2; }

 protected:
  void update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const override;
  /// The accumulator starts at initial_accumulator_value, linear at 0.
  float slot_initial_value(int k) const override {
    return k == 0 ? static_cast<float>(o_.initial_accumulator_value) : 0.f;
  }

 private:
  FtrlOptions o_;
};

/// Keras 3 Lion's options.
struct LionOptions {
  /// Interpolation between momentum and gradient for the update's sign.
  double beta_1 = 0.9;
  /// Decay rate of the momentum.
  double beta_2 = 0.99;
};
/// Keras 3 Lion: w −= lr·sign(β1·m + (1 − β1)g); m = β2·m + (1 − β2)g. One slot: momentum.
class Lion : public Optimizer {
 public:
  /// Lion at learning rate `lr`; ValueError for an option out of range.
  explicit Lion(LearningRate lr = 0.001, LionOptions o = {});
  std::string class_name() const override { return "Lion"; }
  std::string config_json() const override;
  int slots_per_variable() const override { return 1; }

 protected:
  void update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const override;

 private:
  LionOptions o_;
};

/// Keras 3 Lamb's options.
struct LambOptions {
  /// Decay rate of the first-moment (momentum) average.
  double beta_1 = 0.9;
  /// Decay rate of the second-moment (velocity) average.
  double beta_2 = 0.999;
  /// Added to the denominator for numerical stability.
  double epsilon = 1e-7;
};
/// Keras 3 Lamb: Adam's bias-corrected direction d, scaled per variable by the trust ratio
/// ‖w‖/‖d‖ (1 when either is 0): w −= ratio·lr·d. Slots per variable: momentum, velocity.
class Lamb : public Optimizer {
 public:
  /// Lamb at learning rate `lr`; ValueError for an option out of range.
  explicit Lamb(LearningRate lr = 0.001, LambOptions o = {});
  std::string class_name() const override { return "Lamb"; }
  std::string config_json() const override;
  int slots_per_variable() const override { return 2; }

 protected:
  void update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const override;

 private:
  LambOptions o_;
};

/// Keras 3 ScheduleFreeAdamW's options.
struct ScheduleFreeAdamWOptions {
  /// Interpolation between z and its average for the gradient's point.
  double beta_1 = 0.9;
  /// Decay rate of the second-moment (velocity) average.
  double beta_2 = 0.999;
  /// Added to the denominator for numerical stability.
  double epsilon = 1e-8;
  std::int64_t warmup_steps = 0;  ///< the rate ramps linearly over this many steps
};
/// Keras 3 ScheduleFreeAdamW (Defazio et al., "The Road Less Scheduled"): Adam's second moment,
/// an iterate z (Keras' `momentum`, starting as the variable) and the variable as the interpolation
/// of z and its running average. Slots per variable: momentum, velocity.
class ScheduleFreeAdamW : public Optimizer {
 public:
  /// ScheduleFreeAdamW at learning rate `lr` (Keras' default 0.0025); ValueError for an option out of range.
  explicit ScheduleFreeAdamW(LearningRate lr = 0.0025, ScheduleFreeAdamWOptions o = {});
  std::string class_name() const override { return "ScheduleFreeAdamW"; }
  std::string config_json() const override;
  int slots_per_variable() const override { return 2; }

 protected:
  void update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const override;
  /// The momentum slot (z) starts as a copy of the variable.
  bool slot_copies_variable(int k) const override { return k == 0; }

 private:
  ScheduleFreeAdamWOptions o_;
};

/// Shared handle accepted by compile(): an optimizer object or a Keras name ("adam", "adamw", "sgd",
/// "rmsprop", "adagrad", "nadam", "adamax", "adadelta", "ftrl", "lion", "lamb", "schedule_free_adamw").
class OptimizerRef {
 public:
  /// No optimizer.
  OptimizerRef() = default;
  /// @{
  /// A new optimizer of this Keras name with Keras' defaults; ValueError for another name.
  OptimizerRef(const char* name);         // NOLINT: implicit by design
  OptimizerRef(const std::string& name);  // NOLINT
  /// @}
  template <class O, class = std::enable_if_t<std::is_base_of_v<Optimizer, O>>>
  /// Holds a copy of `opt`.
  OptimizerRef(O opt) : opt_(std::make_shared<O>(std::move(opt))) {}  // NOLINT
  /// Shares `opt`.
  OptimizerRef(std::shared_ptr<Optimizer> opt) : opt_(std::move(opt)) {}  // NOLINT
  /// The optimizer held (nullptr for none).
  Optimizer* get() const { return opt_.get(); }
  /// The shared pointer held.
  const std::shared_ptr<Optimizer>& shared() const { return opt_; }
  /// The optimizer's members.
  Optimizer* operator->() const { return opt_.get(); }
  /// Whether an optimizer is held.
  explicit operator bool() const { return static_cast<bool>(opt_); }

 private:
  std::shared_ptr<Optimizer> opt_;
};

/// Keras' serialization of `optimizer` ({"module": "keras.optimizers", "class_name": ..., "config": ...}) as
/// JSON, as keras.optimizers.serialize writes it; "" where Keras could not rebuild it (a schedule, a class of
/// your own).
std::string serialize(const Optimizer& optimizer);
/// The optimizer a Keras serialization (keras.optimizers.serialize, a .keras compile_config) describes;
/// ValueError for a class or option kerascpp does not have.
OptimizerRef deserialize(const std::string& json);

}  // namespace kerascpp::optimizers
