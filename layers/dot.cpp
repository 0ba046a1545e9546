// Dot: C[b] = op(A[b]) · op(B[b]) as one batched_matmul. Every supported case is a [B, M, K] by
// [B, K, N] product of the inputs viewed as rank 3 (a 2-D input is one row or one column), with
// a transpose flag where an input's dot axis is not already in place, so no copy is made.
#include "kerascpp/layers/dot.hpp"
#include "kerascpp/core/layer_config.hpp"

#include <algorithm>
#include <cmath>

#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {
namespace {

// Python's a % n for the negative axes, as Keras resolves them.
int py_mod(int a, int n) { return ((a % n) + n) % n; }

// One input as the rank-3 operand of the batched product, with its transpose flag.
struct Operand {
  Tensor t;
  bool transpose;
};

// Left operand [B, M, K]: a 2-D input is one row; a 3-D input is transposed when it dots over axis 1.
Operand left(const Tensor& x, int axis) {
  if (x.rank() == 2) return {x.reshape({x.dim(0), 1, x.dim(1)}), false};
  return {x, axis == 1};
}
// Right operand [B, K, N]: a 2-D input is one column; a 3-D input is transposed when it dots over axis 2.
Operand right(const Tensor& y, int axis) {
  if (y.rank() == 2) return {y.reshape({y.dim(0), y.dim(1), 1}), false};
  return {y, axis == 2};
}

// x viewed with its `axis` (1 or 2 of a rank-3 input, 1 of a rank-2 one) last, as [R, K].
Tensor axis_last(Backend& be, const Tensor& x, int axis) {
  if (x.rank() == 3 && axis == 1) {
    Tensor t;
    be.transpose(x, {0, 2, 1}, t);
    return t.reshape({-1, x.dim(1)});
  }
  return x.reshape({-1, x.dim(-1)});
}
// The inverse of axis_last: rows [R, K] back to x's shape.
Tensor axis_back(Backend& be, const Tensor& rows, const Tensor& like, int axis) {
  if (like.rank() == 3 && axis == 1) {
    Tensor t;
    be.transpose(rows.reshape({like.dim(0), like.dim(2), like.dim(1)}), {0, 2, 1}, t);
    return t;
  }
  return rows.reshape(like.shape());
}

// Keras' ops.normalize(order=2) along `axis`: each row of x·min(1/√Σx², 1/ε)
// (Backend::l2_normalize_rows), with the rows and inverse norms its backward reads.
struct Normalized {
  Tensor rows, inv, value;
};
Normalized normalize(Backend& be, const Tensor& x, int axis) {
  Normalized n;
  be.l2_normalize_rows(axis_last(be, x, axis), n.rows, n.inv);
  n.value = axis_back(be, n.rows, x, axis);
  return n;
}

// d(x̂)/dx applied to dx̂ (Backend::l2_normalize_rows_backward).
Tensor normalized_backward(Backend& be, const Normalized& n, const Tensor& x, const Tensor& dxn, int axis) {
  Tensor drows;
  be.l2_normalize_rows_backward(n.rows, axis_last(be, dxn, axis), n.inv, drows);
  return axis_back(be, drows, x, axis);
}

}  // namespace

DotLayer::DotLayer(int axes_a, int axes_b, bool single_int, DotOptions options)
    : Layer(std::move(options.name)), axes_{axes_a, axes_b}, single_int_(single_int), normalize_(options.normalize) {}

std::pair<int, int> DotLayer::resolve_axes(std::size_t rank_a, std::size_t rank_b) const {
  const std::size_t ranks[2] = {rank_a, rank_b};
  for (std::size_t r : ranks)
    KERASCPP_CHECK_SHAPE(r == 2 || r == 3,
                         "{}: supports 2-D and 3-D inputs (batch axis included), got inputs of rank {} and {}; reshape "
                         "the inputs to (batch, features) or (batch, steps, features)",
                         where(), rank_a, rank_b);
  int a[2];
  for (int i = 0; i < 2; ++i) {
    const int n = static_cast<int>(ranks[i]);
    a[i] = axes_[i] < 0 ? py_mod(axes_[i], n) : axes_[i];
    KERASCPP_CHECK_VALUE(
        a[i] >= 1 && a[i] < n,
        "{}: axes {} is out of range for input {} of rank {}; give an axis in 1..{} or -{}..-1 (axis 0 is "
        "the batch axis and cannot be summed over)",
        where(), axes_[i], i, n, n - 1, n - 1);
  }
  return {a[0], a[1]};
}

std::vector<Shape> DotLayer::compute_output_shapes(const std::vector<Shape>& in) {
  KERASCPP_CHECK_VALUE(in.size() == 2, "{}: a Dot layer should be called on a list of 2 inputs, got {}", where(),
                       in.size());
  auto [a0, a1] = resolve_axes(in[0].size() + 1, in[1].size() + 1);
  const std::int64_t d0 = in[0][static_cast<std::size_t>(a0 - 1)], d1 = in[1][static_cast<std::size_t>(a1 - 1)];
  KERASCPP_CHECK_SHAPE(
      d0 == d1,
      "{}: incompatible input shapes: axis values {} (at axis {}) != {} (at axis {}); full input shapes: "
      "{}, {}",
      where(), d0, a0, d1, a1, shape_str(detail::with_batch(-1, in[0])), shape_str(detail::with_batch(-1, in[1])));
  // Keras: the first shape less its dot axis, then the second less its batch and dot axes.
  Shape out;
  for (std::size_t d = 0; d < in[0].size(); ++d)
    if (static_cast<int>(d) != a0 - 1) out.push_back(in[0][d]);
  for (std::size_t d = 0; d < in[1].size(); ++d)
    if (static_cast<int>(d) != a1 - 1) out.push_back(in[1][d]);
  if (out.empty()) out.push_back(1);  // (batch,) becomes (batch, 1)
  return {out};
}

std::vector<Tensor> DotLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState&) {
  Backend& be = *ctx.backend;
  auto [a0, a1] = resolve_axes(static_cast<std::size_t>(in[0].rank()), static_cast<std::size_t>(in[1].rank()));
  Tensor x = normalize_ ? normalize(be, in[0], a0).value : in[0];
  Tensor y = normalize_ ? normalize(be, in[1], a1).value : in[1];
  Operand l = left(x, a0), r = right(y, a1);
  Tensor c;
  be.batched_matmul(l.t, l.transpose, r.t, r.transpose, c, false);
  Shape out = compute_output_shapes({Shape(in[0].shape().begin() + 1, in[0].shape().end()),
                                     Shape(in[1].shape().begin() + 1, in[1].shape().end())})[0];
  return {c.reshape(detail::with_batch(in[0].dim(0), out))};
}

std::vector<Tensor> DotLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>&,
                                       const std::vector<Tensor>& grads, LayerState&) {
  Backend& be = *ctx.backend;
  auto [a0, a1] = resolve_axes(static_cast<std::size_t>(in[0].rank()), static_cast<std::size_t>(in[1].rank()));
  // The normalized inputs are recomputed here (not kept from forward) and used twice: in the
  // products and in the normalization's own backward.
  Normalized nx, ny;
  if (normalize_) {
    nx = normalize(be, in[0], a0);
    ny = normalize(be, in[1], a1);
  }
  Tensor x = normalize_ ? nx.value : in[0];
  Tensor y = normalize_ ? ny.value : in[1];
  Operand l = left(x, a0), r = right(y, a1);
  const std::int64_t m = l.t.dim(l.transpose ? 2 : 1), n = r.t.dim(r.transpose ? 1 : 2);
  Tensor dc = grads[0].reshape({x.dim(0), m, n});
  // C = op(A)·op(B): dA_eff = dC·op(B)ᵀ, dB_eff = op(A)ᵀ·dC; a transposed operand gets the transpose back.
  Tensor da, db;
  if (l.transpose) be.batched_matmul(r.t, r.transpose, dc, true, da, false);
  else be.batched_matmul(dc, false, r.t, !r.transpose, da, false);
  if (r.transpose) be.batched_matmul(dc, true, l.t, l.transpose, db, false);
  else be.batched_matmul(l.t, !l.transpose, dc, false, db, false);
  Tensor dx = da.reshape(in[0].shape()), dy = db.reshape(in[1].shape());
  if (normalize_) {
    dx = normalized_backward(be, nx, in[0], dx, a0);
    dy = normalized_backward(be, ny, in[1], dy, a1);
  }
  return {dx, dy};
}

Json DotLayer::get_config() const {
  detail::Json axes = single_int_ ? detail::Json(axes_[0]) : detail::Json::array({axes_[0], axes_[1]});
  return detail::Json({{"name", name()}, {"axes", axes}, {"normalize", normalize_}});
}

LayerRef Dot(int axes, DotOptions options) { return std::make_shared<DotLayer>(axes, axes, true, std::move(options)); }
LayerRef Dot(std::pair<int, int> axes, DotOptions options) {
  return std::make_shared<DotLayer>(axes.first, axes.second, false, std::move(options));
}

KERASCPP_REGISTER_LAYER("Dot", [](const LayerConfig& c) {
  const Json* axes = c.find("axes");
  if (!axes) c.fail("its config has no 'axes'");
  layers::DotOptions o{.normalize = c.get("normalize", false), .name = c.name()};
  if (axes->is_number_integer()) return layers::Dot(axes->get<int>(), o);
  if (axes->is_array() && axes->size() == 2)
    return layers::Dot(std::pair<int, int>{(*axes)[0].get<int>(), (*axes)[1].get<int>()}, o);
  c.fail("'axes' is " + axes->dump() + ", not an integer or a pair");
});

}  // namespace kerascpp::layers
