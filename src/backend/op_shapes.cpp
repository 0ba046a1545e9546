#include "backend/op_shapes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/row_loss_formulas.hpp"
#include "check.hpp"

namespace kerascpp::op_shapes {

// ------------------------------------------------------------------------------ general

void require_same_shape(const Tensor& t, const char* arg, const Tensor& ref, const char* ref_arg, const char* op) {
  KERASCPP_CHECK_SHAPE(t.shape() == ref.shape(), "{}: `{}` has shape {} but `{}` has shape {}; they must match", op,
                       arg, shape_str(t.shape()), ref_arg, shape_str(ref.shape()));
}

void require_rank_at_least(const Tensor& t, int rank, const char* op, const char* arg) {
  KERASCPP_CHECK_SHAPE(t.rank() >= rank, "{}: `{}` has shape {} but needs rank >= {}", op, arg, shape_str(t.shape()),
                       rank);
}

void require_output_shape(const Tensor& t, const Shape& shape, const char* op, const char* arg) {
  KERASCPP_CHECK_SHAPE(t.shape() == shape,
                       "{}: output `{}` has shape {} but the result has shape {}; allocate it as {}", op, arg,
                       shape_str(t.shape()), shape_str(shape), shape_str(shape));
}

// ------------------------------------------------------------------------ concat / split

int normalize_axis(int axis, int rank, const char* op, const Shape& shape) {
  int a = axis < 0 ? axis + rank : axis;
  KERASCPP_CHECK_VALUE(a >= 0 && a < rank, "{}: axis {} is out of range for shape {}; use -{}..{}", op, axis,
                       shape_str(shape), rank, rank - 1);
  return a;
}

void check_parts(const std::vector<Tensor>& parts, const Tensor& whole, int axis, const char* op) {
  std::int64_t total = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Tensor& p = parts[i];
    bool ok = p.rank() == whole.rank();
    for (int d = 0; ok && d < whole.rank(); ++d)
      if (d != axis && p.dim(d) != whole.dim(d)) ok = false;
    KERASCPP_CHECK_SHAPE(ok, "{}: part {} has shape {} but must match {} on every axis except {}", op, i,
                         shape_str(p.shape()), shape_str(whole.shape()), axis);
    total += p.dim(axis);
  }
  KERASCPP_CHECK_SHAPE(total == whole.dim(axis),
                       "{}: the parts add up to {} along axis {} but the whole tensor {} has {}", op, total, axis,
                       shape_str(whole.shape()), whole.dim(axis));
}

std::int64_t outer_count(const Shape& s, int axis) {
  std::int64_t n = 1;
  for (int d = 0; d < axis; ++d) n *= s[static_cast<std::size_t>(d)];
  return n;
}

// --------------------------------------------------------------------- dense and matmul

void check_dense_kernel(const Tensor& x, const Tensor& w, const char* op) {
  KERASCPP_CHECK_SHAPE(w.rank() == 2 && w.dim(0) == x.dim(-1),
                       "{}: x has shape {} but kernel w has shape {}; the kernel must be (in_features={}, "
                       "units)",
                       op, shape_str(x.shape()), shape_str(w.shape()), x.dim(-1));
}

void check_dense_bias(const Tensor& b, const Tensor& w, const char* op) {
  const std::int64_t out = w.dim(1);
  KERASCPP_CHECK_SHAPE(has_shape(b, {out}),
                       "{}: bias has shape {} but the kernel {} has {} units; the bias must be ({},)", op,
                       shape_str(b.shape()), shape_str(w.shape()), out, out);
}

MatmulDims matmul_dims(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, const char* op) {
  const std::int64_t a_rows = leading(a), a_cols = a.dim(-1), b_rows = leading(b), b_cols = b.dim(-1);
  const std::int64_t M = transpose_a ? a_cols : a_rows, K = transpose_a ? a_rows : a_cols;
  const std::int64_t K2 = transpose_b ? b_cols : b_rows, N = transpose_b ? b_rows : b_cols;
  KERASCPP_CHECK_SHAPE(K == K2,
                       "{}: op(a) is ({}, {}) from a {}{} but op(b) is ({}, {}) from b {}{}; the inner "
                       "dimensions must agree",
                       op, M, K, shape_str(a.shape()), transpose_a ? " transposed" : "", K2, N, shape_str(b.shape()),
                       transpose_b ? " transposed" : "");
  return {M, K, N};
}

void check_matmul_output(const Tensor& c, const MatmulDims& m, const char* op) {
  KERASCPP_CHECK_SHAPE(c.rank() >= 1 && c.dim(-1) == m.N && c.numel() == m.M * m.N,
                       "{}: output c has shape {} but the product is ({}, {}); allocate c as ({}, {})", op,
                       shape_str(c.shape()), m.M, m.N, m.M, m.N);
}

BatchedMatmulDims batched_matmul_dims(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b,
                                      const char* op) {
  KERASCPP_CHECK_SHAPE(a.rank() == 3 && b.rank() == 3 && a.dim(0) == b.dim(0),
                       "{}: a {} and b {} must both be rank 3 with the same leading (batch) size", op,
                       shape_str(a.shape()), shape_str(b.shape()));
  const std::int64_t M = transpose_a ? a.dim(2) : a.dim(1), K = transpose_a ? a.dim(1) : a.dim(2);
  const std::int64_t K2 = transpose_b ? b.dim(2) : b.dim(1), N = transpose_b ? b.dim(1) : b.dim(2);
  KERASCPP_CHECK_SHAPE(K == K2,
                       "{}: op(a) slices are ({}, {}) but op(b) slices are ({}, {}); the inner "
                       "dimensions must agree",
                       op, M, K, K2, N);
  return {a.dim(0), M, K, N};
}

Shape transposed_shape(const Tensor& x, const std::vector<int>& perm, const char* op) {
  std::vector<bool> seen(perm.size(), false);
  bool ok = static_cast<int>(perm.size()) == x.rank() && x.rank() <= 6;
  for (int p : perm) {
    ok = ok && p >= 0 && p < static_cast<int>(perm.size()) && !seen[static_cast<std::size_t>(p)];
    if (ok) seen[static_cast<std::size_t>(p)] = true;
  }
  KERASCPP_CHECK_VALUE(ok, "{}: perm ({}) must be a permutation of the {} axes of x {} (rank <= 6)", op,
                       fmt::join(perm, ", "), x.rank(), shape_str(x.shape()));
  Shape out;
  for (int p : perm) out.push_back(x.dim(p));
  return out;
}

MaskedFillDims masked_fill_dims(const Tensor& x, const Tensor& mask, const char* op) {
  KERASCPP_CHECK_VALUE(mask.dtype() == DType::uint8, "{}: mask must be uint8 (1 keep, 0 mask), got {}", op,
                       dtype_name(mask.dtype()));
  // The mask's axes after the first are x's trailing axes: x [B, G..., L...] over mask [B, L...].
  bool fits = mask.rank() >= 1 && x.rank() >= mask.rank() && mask.dim(0) == x.dim(0) && mask.numel() > 0;
  for (int i = 1; fits && i < mask.rank(); ++i) fits = mask.dim(i) == x.dim(x.rank() - mask.rank() + i);
  KERASCPP_CHECK_SHAPE(fits, "{}: mask {} does not fit x {}: x must be [B, ..., L...] over a [B, L...] mask", op,
                       shape_str(mask.shape()), shape_str(x.shape()));
  const std::int64_t B = x.dim(0), L = mask.numel() / B;
  return {B, x.numel() / (B * L), L};
}

LinearResizeDims linear_resize_dims(const Tensor& small, const Tensor& large, int axis, std::int64_t times,
                                    const char* op) {
  KERASCPP_CHECK_VALUE(small.dtype() == DType::float32 && large.dtype() == DType::float32,
                       "{}: tensors must be float32, got {} and {}", op, dtype_name(small.dtype()),
                       dtype_name(large.dtype()));
  KERASCPP_CHECK_VALUE(axis >= 0 && axis < small.rank() && times >= 1,
                       "{}: axis {} of a rank-{} tensor by a factor {}: need 0 <= axis < rank and factor >= 1", op,
                       axis, small.rank(), times);
  Shape expected = small.shape();
  expected[static_cast<std::size_t>(axis)] *= times;
  KERASCPP_CHECK_SHAPE(large.shape() == expected, "{}: {} upsampled {} times along axis {} is {}, got {}", op,
                       shape_str(small.shape()), times, axis, shape_str(expected), shape_str(large.shape()));
  LinearResizeDims d{1, small.dim(axis), 1};
  for (int a = 0; a < axis; ++a) d.outer *= small.dim(a);
  for (int a = axis + 1; a < small.rank(); ++a) d.inner *= small.dim(a);
  return d;
}

std::int64_t prepare_mask_not_equal(const Tensor& x, Tensor& mask, Device device, const char* op) {
  require_rank_at_least(x, 1, op, "x");
  const Shape rows(x.shape().begin(), x.shape().end() - 1);
  if (!mask.defined()) mask = Tensor(rows, DType::uint8, device);
  KERASCPP_CHECK_SHAPE(mask.dtype() == DType::uint8 && mask.shape() == rows,
                       "{}: mask must be uint8 {} for x {}, got {} {}", op, shape_str(rows), shape_str(x.shape()),
                       dtype_name(mask.dtype()), shape_str(mask.shape()));
  KERASCPP_CHECK_DEVICE(mask.device() == device, "{}: mask is on {} but this backend computes on {}", op,
                        mask.device().str(), device.str());
  return x.dim(-1);
}

void check_mask_pair(const Tensor& a, const Tensor& b, const char* op) {
  KERASCPP_CHECK_VALUE(a.dtype() == DType::uint8 && b.dtype() == DType::uint8, "{}: masks must be uint8, got {} and {}",
                       op, dtype_name(a.dtype()), dtype_name(b.dtype()));
  KERASCPP_CHECK_SHAPE(a.shape() == b.shape(),
                       "{}: masks of different shapes {} and {}; a merge of masked inputs needs "
                       "masks of one shape",
                       op, shape_str(a.shape()), shape_str(b.shape()));
}

void check_attention_masks(const Tensor& query_mask, const Tensor& value_mask, const Tensor& explicit_mask,
                           const Tensor& out, const char* op) {
  KERASCPP_CHECK_SHAPE(out.dtype() == DType::uint8 && out.rank() == 3,
                       "{}: out must be a uint8 [B, T, S] tensor, got {} {}", op, dtype_name(out.dtype()),
                       shape_str(out.shape()));
  const std::int64_t B = out.dim(0), T = out.dim(1), S = out.dim(2);
  auto check = [&](const Tensor& m, const Shape& want, const char* what) {
    if (!m.defined()) return;
    KERASCPP_CHECK_SHAPE(m.dtype() == DType::uint8 && m.shape() == want,
                         "{}: the {} must be uint8 {} (1 keeps a position), got {} {}", op, what, shape_str(want),
                         dtype_name(m.dtype()), shape_str(m.shape()));
  };
  check(query_mask, {B, T}, "query mask");
  check(value_mask, {B, S}, "value mask");
  check(explicit_mask, {B, T, S}, "attention_mask");
}

// ------------------------------------------------------------------------- convolution

namespace {

void check_geometry(const Conv2DGeometry& g, const char* op) {
  KERASCPP_CHECK_VALUE(!(g.kernel_h < 1 || g.kernel_w < 1 || g.stride_h < 1 || g.stride_w < 1 || g.pad_top < 0 ||
                         g.pad_left < 0 || g.pad_bottom < 0 || g.pad_right < 0),
                       "{}: invalid geometry kernel {}x{}, strides {}x{}, padding t{} l{} b{} r{}; kernel and "
                       "strides must be >= 1 and padding >= 0",
                       op, g.kernel_h, g.kernel_w, g.stride_h, g.stride_w, g.pad_top, g.pad_left, g.pad_bottom,
                       g.pad_right);
}

std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p0, std::int64_t p1) {
  std::int64_t span = in + p0 + p1 - k;
  return span < 0 ? 0 : span / s + 1;
}

void check_kernel(const Tensor& w, const Conv2DGeometry& g, const char* op) {
  KERASCPP_CHECK_SHAPE(w.rank() == 4 && w.dim(0) == g.kernel_h && w.dim(1) == g.kernel_w,
                       "{}: kernel has shape {} but the geometry says a {}x{} kernel; expected "
                       "(kernel_h, kernel_w, in_channels, filters) = ({}, {}, C, F)",
                       op, shape_str(w.shape()), g.kernel_h, g.kernel_w, g.kernel_h, g.kernel_w);
}

}  // namespace

ConvShape conv_shape(const Tensor& x, const Tensor& w, const Conv2DGeometry& g, const char* op, const char* x_name) {
  check_geometry(g, op);
  check_kernel(w, g, op);
  KERASCPP_CHECK_SHAPE(x.rank() == 4, "{}: {} has shape {} but must be NHWC (batch, height, width, channels)", op,
                       x_name, shape_str(x.shape()));
  KERASCPP_CHECK_SHAPE(x.dim(3) == w.dim(2), "{}: {} {} has {} channels but the kernel {} expects {}", op, x_name,
                       shape_str(x.shape()), x.dim(3), shape_str(w.shape()), w.dim(2));
  ConvShape s{x.dim(0), x.dim(1), x.dim(2), x.dim(3), 0, 0, w.dim(3)};
  s.oh = out_size(s.ih, g.kernel_h, g.stride_h, g.pad_top, g.pad_bottom);
  s.ow = out_size(s.iw, g.kernel_w, g.stride_w, g.pad_left, g.pad_right);
  KERASCPP_CHECK_SHAPE(s.oh > 0 && s.ow > 0,
                       "{}: a {}x{} kernel does not fit the {} input {} with padding t{} b{} l{} r{}; use "
                       "\"same\" padding or a larger input",
                       op, g.kernel_h, g.kernel_w, x_name, shape_str(x.shape()), g.pad_top, g.pad_bottom, g.pad_left,
                       g.pad_right);
  return s;
}

void check_conv_weights_args(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g, const char* op) {
  check_geometry(g, op);
  KERASCPP_CHECK_SHAPE(dy.rank() == 4, "{}: dy has shape {} but must be NHWC", op, shape_str(dy.shape()));
  KERASCPP_CHECK_SHAPE(x.rank() == 4, "{}: x has shape {} but must be NHWC (batch, height, width, channels)", op,
                       shape_str(x.shape()));
}

void check_conv_dy(const Tensor& dy, const ConvShape& s, const char* op) {
  KERASCPP_CHECK_SHAPE(has_shape(dy, {s.n, s.oh, s.ow, s.oc}), "{}: dy has shape {} but the convolution output is {}",
                       op, shape_str(dy.shape()), shape_str({s.n, s.oh, s.ow, s.oc}));
}

void check_conv_bias(const Tensor& b, const Tensor& w, const ConvShape& s, const char* op) {
  KERASCPP_CHECK_SHAPE(has_shape(b, {s.oc}),
                       "{}: bias has shape {} but the kernel {} has {} filters; the bias must be ({},)", op,
                       shape_str(b.shape()), shape_str(w.shape()), s.oc, s.oc);
}

ConvShape depthwise_conv_shape(const Tensor& x, const Tensor& w, const Conv2DGeometry& g, const char* op,
                               const char* x_name) {
  // The [kh, kw, C, M] kernel checks like an HWIO kernel with C inputs and M "filters"; only
  // the output channel count differs.
  ConvShape s = conv_shape(x, w, g, op, x_name);
  s.oc = w.dim(2) * w.dim(3);
  return s;
}

Shape depthwise_kernel_shape(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g, const char* op) {
  const std::int64_t c = x.dim(3), oc = dy.dim(3);
  KERASCPP_CHECK_SHAPE(c != 0 && oc % c == 0,
                       "{}: dy {} has {} channels, which is not a multiple of x {}'s {} channels", op,
                       shape_str(dy.shape()), oc, shape_str(x.shape()), c);
  return {g.kernel_h, g.kernel_w, c, oc / c};
}

// ----------------------------------------------------------------------------- pooling

PoolShape pool_shape(const Tensor& x, const Pool2DGeometry& g, const char* op) {
  // Each padding below the pool size keeps at least one input position in every window.
  KERASCPP_CHECK_VALUE(!(g.pool_h < 1 || g.pool_w < 1 || g.stride_h < 1 || g.stride_w < 1 || g.pad_top < 0 ||
                         g.pad_left < 0 || g.pad_bottom < 0 || g.pad_right < 0 || g.pad_top >= g.pool_h ||
                         g.pad_bottom >= g.pool_h || g.pad_left >= g.pool_w || g.pad_right >= g.pool_w),
                       "{}: invalid geometry pool {}x{}, strides {}x{}, padding t{} l{} b{} r{}; pool size "
                       "and strides must be >= 1 and each padding in [0, pool size)",
                       op, g.pool_h, g.pool_w, g.stride_h, g.stride_w, g.pad_top, g.pad_left, g.pad_bottom,
                       g.pad_right);
  KERASCPP_CHECK_SHAPE(x.rank() == 4, "{}: x has shape {} but must be NHWC (batch, height, width, channels)", op,
                       shape_str(x.shape()));
  PoolShape s{x.dim(0), x.dim(1), x.dim(2), x.dim(3), 0, 0};
  std::int64_t span_h = s.ih + g.pad_top + g.pad_bottom - g.pool_h;
  std::int64_t span_w = s.iw + g.pad_left + g.pad_right - g.pool_w;
  KERASCPP_CHECK_SHAPE(span_h >= 0 && span_w >= 0,
                       "{}: a {}x{} pool does not fit the input {}; use \"same\" padding or a smaller pool", op,
                       g.pool_h, g.pool_w, shape_str(x.shape()));
  s.oh = span_h / g.stride_h + 1;
  s.ow = span_w / g.stride_w + 1;
  return s;
}

void check_pool_dy(const Tensor& dy, const Tensor& x, const PoolShape& s, const char* op) {
  KERASCPP_CHECK_SHAPE(has_shape(dy, {s.n, s.oh, s.ow, s.c}), "{}: dy has shape {} but pooling x {} gives {}", op,
                       shape_str(dy.shape()), shape_str(x.shape()), shape_str({s.n, s.oh, s.ow, s.c}));
}

void require_max_pooling(const Pool2DGeometry& g, const char* op) {
  KERASCPP_CHECK_VALUE(g.kind == PoolKind::max,
                       "{}: only a max pooling commutes with the ReLU; for an average pooling call "
                       "pool2d_forward, then activation_forward",
                       op);
}

// ------------------------------------------------------------------------- batch norm

std::int64_t channels_of(const Tensor& x, const char* op) {
  require_rank_at_least(x, 1, op, "x");
  return x.dim(-1);
}

void check_channel_vector(const Tensor& t, std::int64_t channels, const Tensor& x, const char* op, const char* arg) {
  KERASCPP_CHECK_SHAPE(has_shape(t, {channels}),
                       "{}: {} has shape {} but x {} has {} channels on its last axis; {} must be ({},)", op, arg,
                       shape_str(t.shape()), shape_str(x.shape()), channels, arg, channels);
}

// ------------------------------------------------------------------ losses and metrics

RowLayout class_rows_of(const Tensor& pred, const char* op) {
  KERASCPP_CHECK_SHAPE(pred.rank() >= 2, "{}: pred has shape {} but must be (batch, ..., classes)", op,
                       shape_str(pred.shape()));
  RowLayout l;
  l.examples = pred.dim(0);
  l.width = pred.dim(-1);
  KERASCPP_CHECK_SHAPE(l.width != 0, "{}: pred {} has zero classes", op, shape_str(pred.shape()));
  l.rows = pred.numel() / l.width;
  l.per_example = l.examples == 0 ? 0 : l.rows / l.examples;
  return l;
}

RowLayout element_rows_of(const Tensor& pred, const char* op) {
  KERASCPP_CHECK_SHAPE(pred.rank() >= 1, "{}: pred is a scalar but must have a batch axis", op);
  RowLayout l;
  l.examples = pred.dim(0);
  l.rows = l.examples;
  l.width = l.examples == 0 ? 0 : pred.numel() / l.examples;
  l.per_example = 1;
  return l;
}

void check_one_hot_target(const Tensor& target, const Tensor& pred, const char* op) {
  KERASCPP_CHECK_SHAPE(target.shape() == pred.shape(),
                       "{}: target has shape {} but pred has shape {}; one-hot targets must match pred (for "
                       "integer labels use sparse_categorical_crossentropy)",
                       op, shape_str(target.shape()), shape_str(pred.shape()));
}

void check_target_shape(const Tensor& target, const Tensor& pred, const char* op) {
  const Shape& a = target.shape();
  const Shape& b = pred.shape();
  auto drop_one = [](const Shape& s) { return (s.size() > 1 && s.back() == 1) ? Shape(s.begin(), s.end() - 1) : s; };
  bool ok = a == b || drop_one(a) == b || a == drop_one(b);
  KERASCPP_CHECK_SHAPE(ok, "{}: target has shape {} but pred has shape {}; they must match", op, shape_str(a),
                       shape_str(b));
}

void check_labels(const Tensor& labels, const Tensor& pred, std::int64_t rows, const char* op) {
  KERASCPP_CHECK_SHAPE(labels.dtype() != DType::float32,
                       "{}: labels {} are float32 but must be integer class ids; cast them to int "
                       "(int32, int64 or uint8) first",
                       op, shape_str(labels.shape()));
  bool rows_match = labels.numel() == rows && labels.rank() >= 1 && labels.dim(0) == pred.dim(0);
  KERASCPP_CHECK_SHAPE(rows_match,
                       "{}: labels have shape {} but pred has shape {}; expected one class id per row, "
                       "shape ({},) or ({}, 1)",
                       op, shape_str(labels.shape()), shape_str(pred.shape()), rows, rows);
}

void throw_label_out_of_range(std::int64_t value, std::int64_t index, std::int64_t classes, const Tensor& pred,
                              const char* op) {
  throw ValueError(
      fmt::format("{}: label {} at index {} is out of range for {} classes (pred shape {}); labels "
                  "must lie in [0, {}) — check the dataset or the layer's unit count",
                  op, value, index, classes, shape_str(pred.shape()), classes));
}

const char* row_loss_name(RowLoss kind) {
  switch (kind) {
    case RowLoss::mean_absolute_error:
      return "mean_absolute_error";
    case RowLoss::mean_absolute_percentage_error:
      return "mean_absolute_percentage_error";
    case RowLoss::mean_squared_logarithmic_error:
      return "mean_squared_logarithmic_error";
    case RowLoss::log_cosh:
      return "log_cosh";
    case RowLoss::poisson:
      return "poisson";
    case RowLoss::hinge:
      return "hinge";
    case RowLoss::squared_hinge:
      return "squared_hinge";
    case RowLoss::kl_divergence:
      return "kl_divergence";
    case RowLoss::binary_focal_crossentropy:
      return "binary_focal_crossentropy";
    case RowLoss::equal:
      return "accuracy";
    case RowLoss::cosine_similarity:
      return "cosine_similarity";
    case RowLoss::categorical_hinge:
      return "categorical_hinge";
    case RowLoss::categorical_focal_crossentropy:
      return "categorical_focal_crossentropy";
    case RowLoss::categorical_generalized_cross_entropy:
      return "categorical_generalized_cross_entropy";
    case RowLoss::top_k_categorical_hit:
      return "top_k_categorical_accuracy";
    case RowLoss::pearson_correlation:
      return "pearson_correlation";
    case RowLoss::concordance_correlation:
      return "concordance_correlation";
  }
  return "row_loss";
}

RowLayout row_loss_rows_of(RowLoss kind, const Tensor& pred, const Tensor& target, bool grad_wanted) {
  const char* op = row_loss_name(kind);
  KERASCPP_CHECK_VALUE(!grad_wanted || row_losses::has_gradient(kind),
                       "{}: a metric value without a gradient; call it with an undefined grad tensor", op);
  const bool elementwise = row_losses::is_elementwise(kind);
  KERASCPP_CHECK_VALUE(target.defined(), "{}: the target tensor is undefined", op);
  const RowLayout l = elementwise && pred.rank() < 2 ? element_rows_of(pred, op) : class_rows_of(pred, op);
  if (row_losses::takes_labels(kind)) check_labels(target, pred, l.rows, op);
  else if (elementwise) check_target_shape(target, pred, op);
  else check_one_hot_target(target, pred, op);
  return l;
}

}  // namespace kerascpp::op_shapes
