// The [outer, classes, inner] view of a row-major tensor for a softmax over one axis: `classes`
// is the axis' size, `outer` the product of the axes before it, `inner` of those after. Both
// backends (oneDNN's softmax with axis 1 of a 3-D descriptor, cuDNN's channel mode on NCHW
// (outer, classes, inner, 1)) normalise exactly these fibres without a transpose.
#pragma once
#include <fmt/format.h>

#include <cstdint>

#include "backend/op_shapes.hpp"
#include "check.hpp"

namespace kerascpp::op_shapes {

struct SoftmaxAxisView {
  std::int64_t outer = 1, classes = 1, inner = 1;
};

inline SoftmaxAxisView softmax_axis_view(const Tensor& x, int axis, const char* op) {
  // A plain throw, not KERASCPP_CHECK: this header is shared with the CUDA library.
  KERASCPP_CHECK_SHAPE(x.rank() >= 1, "{}: softmax needs rank >= 1, got shape {}", op, shape_str(x.shape()));
  const int a = normalize_axis(axis, x.rank(), op, x.shape());
  SoftmaxAxisView v;
  for (int i = 0; i < x.rank(); ++i) {
    if (i < a) v.outer *= x.dim(i);
    else if (i == a) v.classes = x.dim(i);
    else v.inner *= x.dim(i);
  }
  return v;
}

}  // namespace kerascpp::op_shapes
