// Target rewrites some losses apply before their formula, as Keras does: label smoothing and the
// hinge losses' 0/1 → −1/1 labels. Each returns a new tensor on the target's device; the
// dataset's targets stay untouched.
#pragma once
#include "kerascpp/backend/backend.hpp"

namespace kerascpp::losses::detail {

// label_smoothing in [0, 1], else ValueError naming `loss`.
void check_label_smoothing(double s, const char* loss);

// t·(1 − s) + offset (float32 targets only: ValueError otherwise).
Tensor smoothed_targets(Backend& backend, const Tensor& target, double s, double offset);

// Keras' convert_binary_labels_to_hinge: 2t − 1 when every target is 0 or 1, else the targets as
// they are (one check over the whole shard, as Keras checks the whole batch).
Tensor hinge_targets(Backend& backend, const Tensor& target);

}  // namespace kerascpp::losses::detail
