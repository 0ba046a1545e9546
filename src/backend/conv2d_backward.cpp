// Backend::conv2d_backward's default: Conv2D's backward pass as three ops (the activation's
// backward, then the weight and input gradients). Backends that can fuse part of it override it.
#include "kerascpp/backend/backend.hpp"

namespace kerascpp {

void Backend::conv2d_backward(const ActivationFn& act, const Tensor& x, const Tensor& y, const Tensor& dy,
                              const Tensor& w, const Conv2DGeometry& g, Tensor& dw, Tensor& db, bool accumulate,
                              Tensor& dx) {
  Tensor dz = dy;
  if (act != ActivationKind::linear) {
    dz = Tensor(dy.shape());
    activation_backward(act, y, dy, dz);
  }
  conv2d_backward_weights(x, dz, g, dw, db, accumulate);
  if (dx.defined()) conv2d_backward_data(dz, w, g, dx);
}

}  // namespace kerascpp
