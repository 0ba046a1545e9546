// The default of Backend::pool2d_forward_inference: the training op, its workspace dropped.
#include "kerascpp/backend/backend.hpp"

namespace kerascpp {

void Backend::pool2d_forward_inference(const Tensor& x, const Pool2DGeometry& g, Tensor& y, bool relu) {
  Tensor workspace;
  if (relu) pool2d_forward_relu(x, g, y, workspace);
  else pool2d_forward(x, g, y, workspace);
}

}  // namespace kerascpp
