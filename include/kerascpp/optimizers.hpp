// Optimizers (SGD, Adam, AdamW, RMSprop, Adagrad, Nadam) with Keras 3 defaults and update rules, and learning-rate
// schedules. Slots are mirrored: one set per replica, updated identically from all-reduced gradients.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kerascpp/backend.hpp"
#include "kerascpp/context.hpp"
#include "kerascpp/variable.hpp"

namespace kerascpp::optimizers {

// Returns `value` when it is a usable learning rate (finite, >= 0, representable as float32);
// otherwise throws ValueError naming `what` (e.g. "Adam: learning_rate") and the fix.
double checked_learning_rate(double value, const char* what);

namespace schedules {
class LearningRateSchedule {
 public:
  virtual ~LearningRateSchedule() = default;
  virtual double operator()(std::int64_t step) const = 0;
};

struct ExponentialDecayOptions {
  bool staircase = false;
};
// lr = initial * decay_rate ^ (step / decay_steps)   (integer division when staircase)
class ExponentialDecay : public LearningRateSchedule {
 public:
  ExponentialDecay(double initial_learning_rate, std::int64_t decay_steps, double decay_rate,
                   ExponentialDecayOptions options = {});
  double operator()(std::int64_t step) const override;

 private:
  double initial_;
  std::int64_t decay_steps_;
  double rate_;
  bool staircase_;
};

// values[i] while step <= boundaries[i] (values has one more entry than boundaries).
class PiecewiseConstantDecay : public LearningRateSchedule {
 public:
  PiecewiseConstantDecay(std::vector<std::int64_t> boundaries, std::vector<double> values);
  double operator()(std::int64_t step) const override;

 private:
  std::vector<std::int64_t> boundaries_;
  std::vector<double> values_;
};

// Keras 3's CosineDecay. Without warmup_target: lr = initial * ((1 - alpha) * c + alpha), where
// c = (1 + cos(pi * min(step, decay_steps) / decay_steps)) / 2. With warmup_target: a linear
// ramp from initial to warmup_target over warmup_steps, then the cosine decay from warmup_target
// over decay_steps (steps beyond both keep the final value).
struct CosineDecayOptions {
  double alpha = 0.0;                   // the final rate as a fraction of the decayed-from rate
  std::optional<double> warmup_target;  // unset: no warmup
  std::int64_t warmup_steps = 0;
};
class CosineDecay : public LearningRateSchedule {
 public:
  CosineDecay(double initial_learning_rate, std::int64_t decay_steps, CosineDecayOptions options = {});
  double operator()(std::int64_t step) const override;

 private:
  double initial_;
  std::int64_t decay_steps_;
  CosineDecayOptions o_;
};

// The official Transformer's schedule ("Attention Is All You Need", TF official models):
// lr = initial * hidden_size^-0.5 * min(1, step / warmup_steps) / sqrt(max(step, warmup_steps)),
// i.e. a linear warmup to initial * (hidden_size * warmup_steps)^-0.5, then decay as step^-0.5.
// The official base model uses initial 2.0, hidden_size 512, warmup_steps 16000.
class TransformerSchedule : public LearningRateSchedule {
 public:
  TransformerSchedule(double initial_learning_rate, std::int64_t hidden_size, std::int64_t warmup_steps);
  double operator()(std::int64_t step) const override;

 private:
  double initial_;
  std::int64_t hidden_size_, warmup_steps_;
};
}  // namespace schedules

// A constant learning rate or a schedule.
class LearningRate {
 public:
  // Constant rates are kept at float32 precision, like Keras' variable, so a rate saved in a
  // checkpoint comes back bit-identical and a resumed run takes exactly the same steps.
  LearningRate(double value)  // NOLINT: implicit by design
      : value_(static_cast<float>(checked_learning_rate(value, "learning_rate"))) {}
  template <class S, class = std::enable_if_t<std::is_base_of_v<schedules::LearningRateSchedule, S>>>
  LearningRate(S schedule) : schedule_(std::make_shared<S>(std::move(schedule))) {}  // NOLINT
  double at(std::int64_t step) const { return schedule_ ? (*schedule_)(step) : value_; }
  bool is_schedule() const { return static_cast<bool>(schedule_); }

 private:
  double value_ = 0;
  std::shared_ptr<schedules::LearningRateSchedule> schedule_;
};

// Keras' clipnorm / global_clipnorm (unset: no clipping). Applied to the all-reduced gradients,
// so every replica clips identically. clipnorm: g ← g·c / max(‖g‖, c) per gradient;
// global_clipnorm: all gradients scaled by c / max(‖(g₁, g₂, …)‖, c). At most one of the two.
struct GradientClipping {
  std::optional<double> clipnorm;
  std::optional<double> global_clipnorm;
};

// The public calls are virtual so that a wrapper (LossScaleOptimizer) can hand them to the
// optimizer it wraps, as Keras' wrapper does with learning_rate and iterations.
class Optimizer {
 public:
  explicit Optimizer(LearningRate lr) : lr_(std::move(lr)) {}
  virtual ~Optimizer() = default;
  virtual std::string class_name() const = 0;
  virtual int slots_per_variable() const = 0;
  // This class's own entries of Keras' optimizer config ({"beta_1": 0.9, ...}) as a JSON object,
  // for Model::save's compile_config; "" for an optimizer Keras has no equivalent of (then no
  // compile_config is written).
  virtual std::string config_json() const { return ""; }

  // Current learning rate (the schedule evaluated at iterations()).
  virtual double learning_rate() const { return lr_.at(iterations_); }
  // Replaces the learning rate with a constant (ReduceLROnPlateau, LearningRateScheduler).
  virtual void set_learning_rate(double lr) { lr_ = LearningRate(lr); }
  virtual bool has_schedule() const { return lr_.is_schedule(); }
  virtual std::int64_t iterations() const { return iterations_; }
  virtual void set_iterations(std::int64_t it) { iterations_ = it; }

  // Throws ValueError for a norm that is not finite and > 0, or for both norms set (as Keras does).
  virtual void set_gradient_clipping(GradientClipping clipping);
  virtual const GradientClipping& gradient_clipping() const { return clipping_; }
  // Clips replica `replica`'s (all-reduced) gradients of `trainable` in place; call before apply().
  void clip_gradients(Backend& backend, int replica, const std::vector<Variable*>& trainable) const;

  // The factor the training step multiplies the loss (and so every gradient) by: the loss scale
  // of a LossScaleOptimizer, 1 for the others. Fixed during a step (finish_step changes it).
  virtual float loss_scale() const { return 1.f; }
  // Replica ctx's all-reduced gradients of `trainable`, made ready for apply(): clipped (and
  // first unscaled by a LossScaleOptimizer). Returns false when the step is to be skipped (a
  // LossScaleOptimizer found Inf or NaN): then it does so on every replica of the step, which
  // apply nothing. Called by every replica, once per step, before apply().
  virtual bool prepare_gradients(ReplicaContext& ctx, const std::vector<Variable*>& trainable);

  // Creates zero slots for each trainable variable on each replica.
  virtual void build(const std::vector<Variable*>& trainable, int replicas);
  virtual bool built() const { return !slots_.empty() || built_empty_; }
  // Updates replica `replica`'s copy of trainable variable `index` with its (all-reduced) gradient.
  virtual void apply(Backend& backend, int replica, std::size_t index, Variable& variable);
  // Call once per step after every replica applied its updates (or skipped the step).
  virtual void finish_step() {
    end_step(iterations_);
    ++iterations_;
  }

  // Slots in Keras order (per variable, interleaved), copy of replica `replica`, then the
  // optimizer-wide state (Nadam's u_product, shared by every replica) as Keras orders its variables.
  virtual std::vector<Tensor*> slot_tensors(int replica);
  // How many replicas build() made slots for (this process's mirrored copies; 0 before build).
  virtual int slot_replicas() const { return static_cast<int>(slots_.size()); }

 protected:
  virtual void update(Backend& backend, Tensor& w, const Tensor& g, Tensor* slots, double lr,
                      std::int64_t step) const = 0;
  // Value every slot starts at (Adagrad's initial_accumulator_value; 0 for the others).
  virtual float slot_initial_value() const { return 0.f; }
  // State of the whole optimizer rather than of one variable (Nadam's u_product): host tensors
  // saved and restored after the slots. build() calls reset_state(); finish_step() calls
  // end_step(step) once, after every replica applied step `step` (update() is const and runs on
  // replica threads, so it only reads this state).
  virtual std::vector<Tensor*> optimizer_state() { return {}; }
  virtual void reset_state() {}
  virtual void end_step(std::int64_t /*step*/) {}

 private:
  LearningRate lr_;
  GradientClipping clipping_;
  std::int64_t iterations_ = 0;
  bool built_empty_ = false;
  // slots_[replica][variable * slots_per_variable + k]
  std::vector<std::vector<Tensor>> slots_;
};

struct SGDOptions {
  double momentum = 0.0;
  bool nesterov = false;
};
class SGD : public Optimizer {
 public:
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

struct AdamOptions {
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-7;
};
class Adam : public Optimizer {
 public:
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

// Keras 3 AdamW: Adam plus decoupled weight decay, w −= lr·weight_decay·w before the Adam step
// (base_optimizer._apply_weight_decay). Same slots as Adam (momentum, velocity).
struct AdamWOptions {
  double weight_decay = 0.004;
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-7;
};
class AdamW : public Optimizer {
 public:
  explicit AdamW(LearningRate lr = 0.001, AdamWOptions o = {}) : Optimizer(std::move(lr)), o_(checked(o)) {}
  std::string class_name() const override { return "AdamW"; }
  std::string config_json() const override;
  int slots_per_variable() const override { return 2; }

 protected:
  void update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const override;

 private:
  static AdamWOptions checked(AdamWOptions o);  // throws ValueError for an option outside its range
  AdamWOptions o_;
};

struct RMSpropOptions {
  double rho = 0.9;
  double epsilon = 1e-7;
};
class RMSprop : public Optimizer {
 public:
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

// Keras 3 Adagrad: accumulator += g²; w −= lr·g / sqrt(accumulator + eps). One slot (accumulator).
struct AdagradOptions {
  double initial_accumulator_value = 0.1;
  double epsilon = 1e-7;
};
class Adagrad : public Optimizer {
 public:
  explicit Adagrad(LearningRate lr = 0.001, AdagradOptions o = {}) : Optimizer(std::move(lr)), o_(checked(o)) {}
  std::string class_name() const override { return "Adagrad"; }
  std::string config_json() const override;
  int slots_per_variable() const override { return 1; }

 protected:
  void update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const override;
  float slot_initial_value() const override { return static_cast<float>(o_.initial_accumulator_value); }

 private:
  static AdagradOptions checked(AdagradOptions o);  // throws ValueError for an option outside its range
  AdagradOptions o_;
};

// Keras 3 Nadam: Adam with Nesterov momentum and Dozat's momentum schedule
// u_t = β1·(1 − 0.5·0.96^t). Slots (momentum, velocity) per variable, plus Keras' u_product =
// Π u_t, one float32 scalar for the optimizer, saved after the slots (Keras' order).
struct NadamOptions {
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-7;
};
class Nadam : public Optimizer {
 public:
  explicit Nadam(LearningRate lr = 0.001, NadamOptions o = {});
  std::string class_name() const override { return "Nadam"; }
  std::string config_json() const override;
  int slots_per_variable() const override { return 2; }
  // Keras' u_product after the steps taken so far (1 before the first).
  float u_product() const { return u_product_.data<float>()[0]; }

 protected:
  void update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const override;
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

// Shared handle accepted by compile(): an optimizer object or a Keras name ("adam", "adamw", "sgd",
// "rmsprop", "adagrad", "nadam").
class OptimizerRef {
 public:
  OptimizerRef() = default;
  OptimizerRef(const char* name);         // NOLINT: implicit by design
  OptimizerRef(const std::string& name);  // NOLINT
  template <class O, class = std::enable_if_t<std::is_base_of_v<Optimizer, O>>>
  OptimizerRef(O opt) : opt_(std::make_shared<O>(std::move(opt))) {}      // NOLINT
  OptimizerRef(std::shared_ptr<Optimizer> opt) : opt_(std::move(opt)) {}  // NOLINT
  Optimizer* get() const { return opt_.get(); }
  const std::shared_ptr<Optimizer>& shared() const { return opt_; }
  Optimizer* operator->() const { return opt_.get(); }
  explicit operator bool() const { return static_cast<bool>(opt_); }

 private:
  std::shared_ptr<Optimizer> opt_;
};

}  // namespace kerascpp::optimizers
