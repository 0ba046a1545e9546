// The regularization losses and constraints of a model's trainable variables: Keras' model.losses
// from kernel_regularizer & co., and variable.constraint applied after each optimizer update.
#pragma once
#include <functional>
#include <vector>

#include "kerascpp/backend/backend.hpp"
#include "kerascpp/core/variable.hpp"

namespace kerascpp::detail {

// Σ of the regularizers' penalties over replica `replica`'s copies of `vars` (the same value on
// every replica: the copies are equal). With add_grads, each penalty's gradient times
// `loss_scale` (LossScaleOptimizer's: Keras scales the whole loss, penalties included) is added
// to the variable's gradient of that replica: call it after the all-reduce, so it is added once.
// The total comes from the returned function (Backend::weight_penalties: a GPU waits for it only
// when asked, so the optimizer's update can be queued first).
std::function<double()> weight_penalties(Backend& backend, int replica, const std::vector<Variable*>& vars,
                                         bool add_grads, float loss_scale = 1.f);

// Applies each variable's constraint to replica `replica`'s copy, in place.
void apply_constraints(Backend& backend, int replica, const std::vector<Variable*>& vars);

}  // namespace kerascpp::detail
