// Sublayers: a layer that runs whole layers inside it (Bidirectional, TimeDistributed) makes their
// variables its own, so that Model, the optimizers, replica mirroring, gradient checks and
// count_params see them through the wrapper's Layer::variables() / trainable_variables() (the
// sublayers are not nodes of the model's graph, so nothing else reaches them). .weights.h5
// groups come from the wrapper's Layer::weight_groups().
//
// Kept in a table beside Layer, keyed by the owner's weak pointer (an entry of a destroyed owner
// never matches a new layer at the same address), so that adding wrappers changed no member of
// the class every layer and test compiles against.
#pragma once
#include <memory>
#include <vector>

#include "kerascpp/core/layer.hpp"

namespace kerascpp::detail {

// Makes sublayer's variables owner's too (after owner's own); call from owner's build(), where
// owner is held by a shared_ptr (owner.shared_from_this()).
void track_sublayer(const std::shared_ptr<Layer>& owner, const std::shared_ptr<Layer>& sublayer);

// owner's tracked sublayers, in the order they were tracked (none for most layers).
std::vector<std::shared_ptr<Layer>> tracked_sublayers(const Layer& owner);

}  // namespace kerascpp::detail
