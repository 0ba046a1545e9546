#include "training/weight_penalties.hpp"

namespace kerascpp::detail {

std::function<double()> weight_penalties(Backend& backend, int replica, const std::vector<Variable*>& vars,
                                         bool add_grads, float loss_scale) {
  std::vector<Backend::PenaltyTerm> terms;
  for (Variable* v : vars) {
    const regularizers::Regularizer& r = v->regularizer();
    if (!r) continue;
    terms.push_back({&v->value(replica), r.l1(), r.l2(), add_grads ? &v->grad(replica) : nullptr});
  }
  return backend.weight_penalties(terms, loss_scale);
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
