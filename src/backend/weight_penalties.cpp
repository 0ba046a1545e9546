// Backend::weight_penalties' default: each weight's penalty at once, in order.
#include "kerascpp/backend/backend.hpp"

namespace kerascpp {

std::function<double()> TrainingKernels::weight_penalties(const std::vector<PenaltyTerm>& terms, float grad_scale) {
  double total = 0.0;
  Tensor no_grad;
  for (const PenaltyTerm& t : terms) total += weight_penalty(*t.w, t.l1, t.l2, t.grad ? *t.grad : no_grad, grad_scale);
  return [total] { return total; };
}

}  // namespace kerascpp
