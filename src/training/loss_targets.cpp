#include "training/loss_targets.hpp"

#include "check.hpp"

namespace kerascpp::losses::detail {

void check_label_smoothing(double s, const char* loss) {
  KERASCPP_CHECK_VALUE(s >= 0.0 && s <= 1.0, "{}: label_smoothing must be in [0, 1] (0: none; 0.1 is common), got {}",
                       loss, s);
}

Tensor smoothed_targets(Backend& backend, const Tensor& target, double s, double offset) {
  KERASCPP_CHECK_VALUE(target.dtype() == DType::float32,
                       "label_smoothing needs float32 targets (one-hot or 0/1 values), got {}",
                       dtype_name(target.dtype()));
  Tensor t = target.clone();
  backend.scale(t, static_cast<float>(1.0 - s));
  Tensor shift(t.shape(), DType::float32, t.device());
  shift.fill(static_cast<float>(offset));
  backend.add_inplace(t, shift);
  return t;
}

Tensor hinge_targets(Backend& backend, const Tensor& target) {
  KERASCPP_CHECK_VALUE(target.dtype() == DType::float32,
                       "hinge losses need float32 targets (−1/1 or 0/1 values), got {}; cast the labels to float32",
                       dtype_name(target.dtype()));
  // binary_accuracy_sum(t, t, 0.5) counts the elements where (t > 0.5) == t: exactly the 0s and 1s.
  const double binary = backend.binary_accuracy_sum(target, target, 0.5f);
  if (binary != static_cast<double>(target.numel())) return target;
  return smoothed_targets(backend, target, -1.0, -1.0);  // t·2 − 1
}

}  // namespace kerascpp::losses::detail
