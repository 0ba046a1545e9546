#include "engine/weight_penalties.hpp"

namespace kerascpp::detail {

double weight_penalties(Backend& backend, int replica, const std::vector<Variable*>& vars, bool add_grads,
                        float loss_scale) {
  double total = 0.0;
  Tensor no_grad;
  for (Variable* v : vars) {
    const regularizers::Regularizer& r = v->regularizer();
    if (!r) continue;
    total +=
        backend.weight_penalty(v->value(replica), r.l1(), r.l2(), add_grads ? v->grad(replica) : no_grad, loss_scale);
  }
  return total;
}

void apply_constraints(Backend& backend, int replica, const std::vector<Variable*>& vars) {
  for (Variable* v : vars) {
    const constraints::Constraint& c = v->constraint();
    if (!c) continue;
    // MaxNorm over the leading axes 0..k-1: the norms run down rows of [Π leading dims, rest].
    std::int64_t rows = 1;
    for (std::size_t a = 0; a < c.axis().size(); ++a) rows *= v->shape()[a];
    backend.max_norm(v->value(replica), rows, c.max_value());
  }
}

}  // namespace kerascpp::detail
