// The pooling layers' calls of the Backend's 2-D pooling ops, with the workspace a backward needs
// kept in LayerState::saved (pooling.cpp, pooling_nd.cpp).
#pragma once
#include "kerascpp/backend/backend.hpp"
#include "kerascpp/core/layer.hpp"
#include "kerascpp/distribute/context.hpp"

namespace kerascpp::detail {

// The pooling's forward for training: y, and in workspace what its backward needs.
inline void pool_training_forward(Backend& backend, const Tensor& x, const Pool2DGeometry& g, bool relu, Tensor& y,
                                  Tensor& workspace) {
  if (relu) backend.pool2d_forward_relu(x, g, y, workspace);
  else backend.pool2d_forward(x, g, y, workspace);
}

// The pooling's forward, its workspace in st.saved[slot]. Without training (predict, evaluate)
// nothing is kept for a backward pass (Backend::pool2d_forward_inference), and st.saved is emptied.
inline void pool_forward(ReplicaContext& ctx, const Tensor& x, const Pool2DGeometry& g, bool relu, Tensor& y,
                         LayerState& st, std::size_t slot = 0) {
  if (!ctx.training) {
    st.saved.clear();
    ctx.backend->pool2d_forward_inference(x, g, y, relu);
    return;
  }
  if (st.saved.size() <= slot) st.saved.resize(slot + 1);
  pool_training_forward(*ctx.backend, x, g, relu, y, st.saved[slot]);
}

// The workspace pool_forward kept for the backward pass. A custom loop may run the backward
// after a forward with training = false (Model::forward): the forward then runs again for it.
inline const Tensor& pool_backward_workspace(ReplicaContext& ctx, const Tensor& x, const Pool2DGeometry& g, bool relu,
                                             LayerState& st) {
  if (st.saved.empty()) {
    st.saved.resize(1);
    Tensor y;
    pool_training_forward(*ctx.backend, x, g, relu, y, st.saved[0]);
  }
  return st.saved[0];
}

}  // namespace kerascpp::detail
