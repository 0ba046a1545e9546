// Device-agnostic argument checks and shape arithmetic shared by every backend (CPU in
// backend/cpu/, CUDA in cuda/). They only look at shapes, dtypes and geometry, never at tensor
// data, so the CPU and GPU backends reject the same calls with the same messages (tests match
// on the text) and agree on every output size. What depends on where a tensor lives (host vs
// GPU, reading label values) stays in each backend; callers check that first, then call these.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "kerascpp/backend/backend.hpp"
#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp::op_shapes {

// ------------------------------------------------------------------------------ general

// Shape comparison without building a Shape (ops run every step; this keeps them allocation-free).
inline bool has_shape(const Tensor& t, std::initializer_list<std::int64_t> shape) {
  if (t.shape().size() != shape.size()) return false;
  std::size_t i = 0;
  for (auto d : shape)
    if (t.shape()[i++] != d) return false;
  return true;
}
void require_same_shape(const Tensor& t, const char* arg, const Tensor& ref, const char* ref_arg, const char* op);
void require_rank_at_least(const Tensor& t, int rank, const char* op, const char* arg);
// A preallocated output (already checked for dtype and device) must have the result's shape.
void require_output_shape(const Tensor& t, const Shape& shape, const char* op, const char* arg);
// Tensors of rank > 2 are read as [product of leading axes, last axis]; 0 rows when the last
// axis is empty.
inline std::int64_t leading(const Tensor& t) {
  std::int64_t last = t.rank() == 0 ? 1 : t.dim(-1);
  return last == 0 ? 0 : t.numel() / last;
}

// ------------------------------------------------------------------------ concat / split

int normalize_axis(int axis, int rank, const char* op, const Shape& shape);
// `parts` agree with `whole` on every axis but `axis`, whose sizes add up.
void check_parts(const std::vector<Tensor>& parts, const Tensor& whole, int axis, const char* op);
// Product of the axes before `axis`.
std::int64_t outer_count(const Shape& s, int axis);

// --------------------------------------------------------------------- dense and matmul

// x [..., in] against kernel w (in, units). The bias is checked apart (after its own dtype and
// device check) so that both backends report problems in the same order.
void check_dense_kernel(const Tensor& x, const Tensor& w, const char* op);
// A bias for kernel w is (units,).
void check_dense_bias(const Tensor& b, const Tensor& w, const char* op);
// op(a) (M, K) · op(b) (K, N), each operand read as [leading, last].
struct MatmulDims {
  std::int64_t M, K, N;
};
MatmulDims matmul_dims(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, const char* op);
// A preallocated c holds M·N values with N on its last axis.
void check_matmul_output(const Tensor& c, const MatmulDims& m, const char* op);

// Batched matmul over rank-3 a [B, .., ..] and b [B, .., ..]: B and the per-slice M, K, N.
struct BatchedMatmulDims {
  std::int64_t B, M, K, N;
};
BatchedMatmulDims batched_matmul_dims(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b,
                                      const char* op);
// transpose: perm is a permutation of 0..rank-1 (rank <= 6); returns the output shape.
Shape transposed_shape(const Tensor& x, const std::vector<int>& perm, const char* op);
// masked_fill: x [B, G·L] over a uint8 mask [B, L]; returns {B, G, L}.
struct MaskedFillDims {
  std::int64_t B, G, L;
};
MaskedFillDims masked_fill_dims(const Tensor& x, const Tensor& mask, const char* op);
// upsample_linear: x float32 viewed as [outer, n, inner] around `axis` (0 <= axis < rank), times
// >= 1; `y` (the output, or for the backward the input gradient's other side) must be float32 of
// x's shape with dim(axis) * times (forward) or / times (backward). Returns {outer, n, inner}.
struct LinearResizeDims {
  std::int64_t outer, n, inner;
};
LinearResizeDims linear_resize_dims(const Tensor& small, const Tensor& large, int axis, std::int64_t times,
                                    const char* op);
// mask_not_equal: x of rank >= 1 and its mask (uint8, x's shape without the last axis),
// allocated on `device` when undefined; returns the last axis' size.
std::int64_t prepare_mask_not_equal(const Tensor& x, Tensor& mask, Device device, const char* op);
// mask_and: two uint8 masks of one shape.
void check_mask_pair(const Tensor& a, const Tensor& b, const char* op);
// attention_mask: out uint8 [B, T, S]; each given mask uint8 of [B, T], [B, S], [B, T, S].
void check_attention_masks(const Tensor& query_mask, const Tensor& value_mask, const Tensor& explicit_mask,
                           const Tensor& out, const char* op);

// ------------------------------------------------------------------------- convolution

struct ConvShape {
  std::int64_t n, ih, iw, ic, oh, ow, oc;
};
// Shapes from an NHWC input and the HWIO kernel; checks the geometry, the kernel and that the
// kernel fits the (padded) input. `x_name` names the input in messages ("x", "dx").
ConvShape conv_shape(const Tensor& x, const Tensor& w, const Conv2DGeometry& g, const char* op, const char* x_name);
// Backward weights, before dw's shape is known: a valid geometry and NHWC x and dy.
void check_conv_weights_args(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g, const char* op);
// dy has the convolution's output shape.
void check_conv_dy(const Tensor& dy, const ConvShape& s, const char* op);
// A bias (already checked for dtype and device) has one value per filter of kernel w.
void check_conv_bias(const Tensor& b, const Tensor& w, const ConvShape& s, const char* op);
// Depthwise convolution: NHWC x and a [kh, kw, C, M] kernel; oc = C·M.
ConvShape depthwise_conv_shape(const Tensor& x, const Tensor& w, const Conv2DGeometry& g, const char* op,
                               const char* x_name);
// The depthwise kernel shape [kh, kw, C, M] for x [.., C] and dy [.., C·M] (backward weights,
// before dw's shape is known); dy's channels must be a multiple of x's.
Shape depthwise_kernel_shape(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g, const char* op);

// ----------------------------------------------------------------------------- pooling

struct PoolShape {
  std::int64_t n, ih, iw, c, oh, ow;
};
PoolShape pool_shape(const Tensor& x, const Pool2DGeometry& g, const char* op);
// dy has the shape pooling x gives.
void check_pool_dy(const Tensor& dy, const Tensor& x, const PoolShape& s, const char* op);
// g is a max pooling: pool2d_forward_relu's (only max commutes with the ReLU).
void require_max_pooling(const Pool2DGeometry& g, const char* op);

// ------------------------------------------------------------------------- batch norm

// Channels of x viewed as [M, C] (x needs rank >= 1).
std::int64_t channels_of(const Tensor& x, const char* op);
// A per-channel parameter or statistic (already checked for dtype and device) is (channels,).
void check_channel_vector(const Tensor& t, std::int64_t channels, const Tensor& x, const char* op, const char* arg);

// ------------------------------------------------------------------ losses and metrics

// Predictions viewed as rows of their last axis, grouped per example; every result is per
// example (rows of one example averaged), so the caller's Σ/N matches Keras's mean.
struct RowLayout {
  std::int64_t examples = 0;     // N = pred.dim(0)
  std::int64_t rows = 0;         // rows of the last axis in all of pred
  std::int64_t width = 0;        // length of the last axis (classes)
  std::int64_t per_example = 0;  // rows per example
};
// Class predictions (batch, ..., classes).
RowLayout class_rows_of(const Tensor& pred, const char* op);
// Elementwise losses/metrics: each example is one row of all its values.
RowLayout element_rows_of(const Tensor& pred, const char* op);
// Dense targets have pred's shape; a trailing axis of 1 on either side is tolerated, as Keras
// squeezes it ((N,) targets against (N, 1) predictions).
void check_target_shape(const Tensor& target, const Tensor& pred, const char* op);
// One-hot targets of categorical crossentropy have pred's shape.
void check_one_hot_target(const Tensor& target, const Tensor& pred, const char* op);
// Class labels (already checked to be defined and where the backend wants them): an integer
// dtype and one entry per row of pred viewed as [rows, classes].
void check_labels(const Tensor& labels, const Tensor& pred, std::int64_t rows, const char* op);
// The error for label `value` at `index` outside [0, classes); each backend finds it its own way.
[[noreturn]] void throw_label_out_of_range(std::int64_t value, std::int64_t index, std::int64_t classes,
                                           const Tensor& pred, const char* op);

// TrainingKernels::row_loss: the formula's Keras name (for errors), and its rows (rank >= 2:
// the last axis; rank 1, elementwise formulas only: one value per example) after the target
// checks (labels: check_labels; whole-row formulas: pred's shape; elementwise: check_target_shape).
// A gradient asked of a formula without one is a ValueError.
const char* row_loss_name(RowLoss kind);
RowLayout row_loss_rows_of(RowLoss kind, const Tensor& pred, const Tensor& target, bool grad_wanted);

}  // namespace kerascpp::op_shapes
