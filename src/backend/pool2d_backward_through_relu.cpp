// Backend::pool2d_backward_through_relu's default: the max pooling's backward, then the ReLU's
// backward of its input, in place on dx. Backends that can mask at the pooled resolution
// override it.
#include "kerascpp/backend.hpp"

namespace kerascpp {

void Backend::pool2d_backward_through_relu(const Tensor& dy, const Tensor& x, const Tensor& /*y*/,
                                           const Pool2DGeometry& g, const Tensor& workspace, Tensor& dx) {
  pool2d_backward(dy, x, g, workspace, dx);
  activation_backward(ActivationKind::relu, x, dx, dx);
}

}  // namespace kerascpp
