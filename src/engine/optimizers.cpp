#include "kerascpp/optimizers.hpp"

#include <fmt/format.h>

#include <cmath>

namespace kerascpp::optimizers {

namespace schedules {
ExponentialDecay::ExponentialDecay(double initial, std::int64_t steps, double rate, ExponentialDecayOptions o)
    : initial_(initial), decay_steps_(steps), rate_(rate), staircase_(o.staircase) {
  if (steps <= 0) throw ValueError(fmt::format("ExponentialDecay: decay_steps must be positive, got {}", steps));
}

double ExponentialDecay::operator()(std::int64_t step) const {
  double p = static_cast<double>(step) / static_cast<double>(decay_steps_);
  if (staircase_) p = std::floor(p);
  return initial_ * std::pow(rate_, p);
}

PiecewiseConstantDecay::PiecewiseConstantDecay(std::vector<std::int64_t> b, std::vector<double> v)
    : boundaries_(std::move(b)), values_(std::move(v)) {
  if (values_.size() != boundaries_.size() + 1)
    throw ValueError(fmt::format("PiecewiseConstantDecay: values needs one more entry than boundaries ({} boundaries, "
                            "{} values)",
                            boundaries_.size(), values_.size()));
}

double PiecewiseConstantDecay::operator()(std::int64_t step) const {
  for (std::size_t i = 0; i < boundaries_.size(); ++i)
    if (step <= boundaries_[i]) return values_[i];
  return values_.back();
}
}  // namespace schedules

void Optimizer::build(const std::vector<Variable*>& trainable, int replicas) {
  slots_.assign(static_cast<std::size_t>(replicas), {});
  int k = slots_per_variable();
  built_empty_ = k == 0 || trainable.empty();
  for (int r = 0; r < replicas; ++r)
    for (Variable* v : trainable)  // each slot lives beside its replica's copy of the variable
      for (int s = 0; s < k; ++s)
        slots_[static_cast<std::size_t>(r)].push_back(Tensor::zeros(v->shape(), DType::float32, v->value(r).device()));
}

void Optimizer::apply(Backend& backend, int replica, std::size_t index, Variable& variable) {
  int k = slots_per_variable();
  Tensor* slots = k ? &slots_.at(static_cast<std::size_t>(replica)).at(index * static_cast<std::size_t>(k)) : nullptr;
  update(backend, variable.value(replica), variable.grad(replica), slots, learning_rate(), iterations_);
}

std::vector<Tensor*> Optimizer::slot_tensors(int replica) {
  std::vector<Tensor*> out;
  if (slots_.empty()) return out;
  for (auto& t : slots_.at(static_cast<std::size_t>(replica))) out.push_back(&t);
  return out;
}

void SGD::update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t) const {
  Tensor none;
  b.sgd_update(w, g, slots ? slots[0] : none, static_cast<float>(lr), static_cast<float>(o_.momentum), o_.nesterov);
}

void Adam::update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t step) const {
  // Keras 3: bias corrections folded into the learning rate, epsilon added after the sqrt.
  double t = static_cast<double>(step + 1);
  double lr_t = lr * std::sqrt(1 - std::pow(o_.beta_2, t)) / (1 - std::pow(o_.beta_1, t));
  b.adam_update(w, g, slots[0], slots[1], static_cast<float>(lr_t), static_cast<float>(o_.beta_1),
                static_cast<float>(o_.beta_2), static_cast<float>(o_.epsilon));
}

void RMSprop::update(Backend& b, Tensor& w, const Tensor& g, Tensor* slots, double lr, std::int64_t) const {
  b.rmsprop_update(w, g, slots[0], static_cast<float>(lr), static_cast<float>(o_.rho), static_cast<float>(o_.epsilon));
}

OptimizerRef::OptimizerRef(const char* name) : OptimizerRef(std::string(name)) {}

OptimizerRef::OptimizerRef(const std::string& name) {
  if (name == "adam") opt_ = std::make_shared<Adam>();
  else if (name == "sgd") opt_ = std::make_shared<SGD>();
  else if (name == "rmsprop") opt_ = std::make_shared<RMSprop>();
  else throw ValueError(fmt::format("unknown optimizer '{}'; use \"adam\", \"sgd\" or \"rmsprop\"", name));
}

}  // namespace kerascpp::optimizers
