// The defaults of the ReLU-into-max-pooling ops (LayerState::output_relu_deferred and
// output_grad_past_relu): each runs the max pooling and the ReLU as two ops. The CPU backend
// overrides both to apply the ReLU inside the pooling's loop.
#include "backend/op_shapes.hpp"
#include "kerascpp/backend/backend.hpp"

namespace kerascpp {

void Backend::pool2d_forward_relu(const Tensor& x, const Pool2DGeometry& g, Tensor& y, Tensor& workspace) {
  op_shapes::require_max_pooling(g, "pool2d_forward_relu");
  pool2d_forward(x, g, y, workspace);
  activation_forward(ActivationKind::relu, y, y);
}

// The max pooling's backward, then the ReLU's backward of its input, in place on dx.
void Backend::pool2d_backward_through_relu(const Tensor& dy, const Tensor& x, const Tensor& /*y*/,
                                           const Pool2DGeometry& g, const Tensor& workspace, Tensor& dx,
                                           Tensor* dx_channel_sums) {
  if (dx_channel_sums) *dx_channel_sums = Tensor();
  pool2d_backward(dy, x, g, workspace, dx);
  activation_backward(ActivationKind::relu, x, dx, dx);
}

}  // namespace kerascpp
