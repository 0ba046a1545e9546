// The activations that work along an axis, over the [outer, classes, inner] view of
// softmax_axis_view.hpp: softmax (oneDNN's softmax, as before), log_softmax (oneDNN's
// logsoftmax), and glu and sparsemax, which oneDNN has no primitive for and are hand-written.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "backend/activation_formulas.hpp"
#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/dnnl_util.hpp"
#include "backend/cpu/parallel.hpp"
#include "check.hpp"

namespace kerascpp::cpu {

namespace {

struct LogSoftmaxEntry : CacheEntry {
  CachedPrimitive prim;
};

dnnl::logsoftmax_forward::primitive_desc log_softmax_pd(const op_shapes::SoftmaxAxisView& v,
                                                        const dnnl::primitive_attr& attr, const dnnl::engine& engine) {
  dnnl::logsoftmax_forward::desc desc(dnnl::prop_kind::forward_training,
                                      f32_md({v.outer, v.classes, v.inner}, tag::abc), 1);
  return {desc, attr, engine};
}

// Calls f(fibre base pointer offset, stride) for every fibre of the view, spread over threads.
template <class F>
void for_each_fibre(const op_shapes::SoftmaxAxisView& v, F&& f) {
  const std::int64_t fibres = v.outer * v.inner;
  parallel_for(fibres, std::max<std::int64_t>(1, kElementGrain / std::max<std::int64_t>(v.classes, 1)),
               [&](std::int64_t f0, std::int64_t f1) {
                 std::vector<float> scratch;
                 std::vector<std::int64_t> order;
                 for (std::int64_t fi = f0; fi < f1; ++fi)
                   f((fi / v.inner) * v.classes * v.inner + fi % v.inner, v.inner, scratch, order);
               });
}

// Keras 3's sparsemax threshold for one fibre z[0..n) (stride s): with z sorted descending and
// c its cumulative sums, the support is {j : z_(j) > (c_j - 1) / j} (k elements) and
// tau = (sum of c_j over the support - 1) / k. That is keras/src/backend/*/nn.py's formula (it
// sums the cumulative sums, where Martins & Astudillo's paper takes c_k); followed so that saved
// models predict what Keras predicts. `order` gets the fibre's indices sorted descending.
float sparsemax_tau(const float* z, std::int64_t n, std::int64_t s, std::vector<std::int64_t>& order, std::int64_t& k) {
  order.resize(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return z[a * s] > z[b * s]; });
  double cumsum = 0.0, support_sum = 0.0;
  k = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    const double zj = z[order[static_cast<std::size_t>(j)] * s];
    cumsum += zj;
    if (zj - (cumsum - 1.0) / static_cast<double>(j + 1) > 0.0) {
      ++k;
      support_sum += cumsum;
    }
  }
  return k > 0 ? static_cast<float>((support_sum - 1.0) / static_cast<double>(k)) : 0.f;
}

}  // namespace

void CpuBackend::log_softmax_fibres(const float* x, float* y, const op_shapes::SoftmaxAxisView& v) {
  if (v.outer * v.classes * v.inner == 0) return;
  cache_.key("log_softmax_fwd");
  cache_.append(v.outer, v.classes, v.inner);
  auto& e = cache_.get<LogSoftmaxEntry>([&] {
    return guarded_build("log_softmax", cache_.current_key(), [&] {
      auto entry = std::make_unique<LogSoftmaxEntry>();
      entry->prim = make_primitive(log_softmax_pd(v, base_attr(), engine_), {DNNL_ARG_SRC, DNNL_ARG_DST});
      return entry;
    });
  });
  e.prim.bind(DNNL_ARG_SRC, x);
  e.prim.bind(DNNL_ARG_DST, y);
  run(e.prim);
}

void CpuBackend::sparsemax_fibres(const float* x, float* y, const op_shapes::SoftmaxAxisView& v) {
  fit_threads(v.outer * v.classes * v.inner, kSerialElements);
  for_each_fibre(v, [&](std::int64_t base, std::int64_t s, std::vector<float>&, std::vector<std::int64_t>& order) {
    std::int64_t k = 0;
    const float tau = sparsemax_tau(x + base, v.classes, s, order, k);
    for (std::int64_t j = 0; j < v.classes; ++j) {
      const float d = x[base + j * s] - tau;
      y[base + j * s] = d < 0.f ? 0.f : d;  // NaN stays NaN
    }
  });
}

void CpuBackend::activation_along_axis(const ActivationFn& act, const Tensor& x, Tensor& y) {
  const char* op = "activation_forward";
  require_float(x, op, "x");
  const auto v = op_shapes::softmax_axis_view(x, act.axis, op);
  if (act.kind == ActivationKind::softmax) {
    if (v.inner != 1) return softmax_axis_forward(x, act.axis, y);
    prepare_output(y, x.shape(), op, "y");
    return softmax_rows(x.data<float>(), y.data<float>(), v.outer, v.classes);
  }
  if (act.kind == ActivationKind::glu) {
    KERASCPP_CHECK_SHAPE(v.classes % 2 == 0,
                         "{}: glu splits axis {} in two halves, so its size must be even; got shape {}", op, act.axis,
                         shape_str(x.shape()));
    Shape out = x.shape();
    out[static_cast<std::size_t>(op_shapes::normalize_axis(act.axis, x.rank(), op, x.shape()))] = v.classes / 2;
    prepare_output(y, out, op, "y");
    KERASCPP_CHECK_VALUE(y.raw() != x.raw(), "{}: glu halves its axis, so y cannot alias x", op);
    const float* px = x.data<float>();
    float* py = y.data<float>();
    const std::int64_t half = v.classes / 2;
    for (std::int64_t o = 0; o < v.outer; ++o)
      for (std::int64_t j = 0; j < half; ++j)
        for (std::int64_t i = 0; i < v.inner; ++i) {
          const float a = px[(o * v.classes + j) * v.inner + i], b = px[(o * v.classes + j + half) * v.inner + i];
          py[(o * half + j) * v.inner + i] = a * act_formula::sigmoid(b);
        }
    return;
  }
  prepare_output(y, x.shape(), op, "y");
  if (act.kind == ActivationKind::log_softmax) return log_softmax_fibres(x.data<float>(), y.data<float>(), v);
  sparsemax_fibres(x.data<float>(), y.data<float>(), v);
}

void CpuBackend::activation_backward_along_axis(const ActivationFn& act, const Tensor& x, const Tensor& y,
                                                const Tensor& dy, Tensor& dx) {
  const char* op = "activation_backward";
  if (act.kind == ActivationKind::softmax) return softmax_axis_backward(y, dy, act.axis, dx);
  require_float(dy, op, "dy");
  if (act.kind == ActivationKind::log_softmax) {
    require_float(y, op, "y");
    require_same_shape(dy, "dy", y, "y", op);
    const auto v = op_shapes::softmax_axis_view(y, act.axis, op);
    prepare_output(dx, y.shape(), op, "dx");
    if (y.numel() == 0) return;
    cache_.key("log_softmax_bwd");
    cache_.append(v.outer, v.classes, v.inner);
    auto& e = cache_.get<LogSoftmaxEntry>([&] {
      return guarded_build(op, cache_.current_key(), [&] {
        auto hint = log_softmax_pd(v, base_attr(), engine_);
        auto md = f32_md({v.outer, v.classes, v.inner}, tag::abc);
        dnnl::logsoftmax_backward::desc desc(md, md, 1);
        dnnl::logsoftmax_backward::primitive_desc pd(desc, base_attr(), engine_, hint);
        auto entry = std::make_unique<LogSoftmaxEntry>();
        entry->prim = make_primitive(pd, {DNNL_ARG_DST, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC});
        return entry;
      });
    });
    e.prim.bind(DNNL_ARG_DST, y.raw());
    e.prim.bind(DNNL_ARG_DIFF_DST, dy.raw());
    e.prim.bind(DNNL_ARG_DIFF_SRC, dx.raw());
    run(e.prim);
    return;
  }
  require_float(x, op, "x");
  const auto v = op_shapes::softmax_axis_view(x, act.axis, op);
  if (act.kind == ActivationKind::glu) {
    Shape out = x.shape();
    out[static_cast<std::size_t>(op_shapes::normalize_axis(act.axis, x.rank(), op, x.shape()))] = v.classes / 2;
    KERASCPP_CHECK_SHAPE(dy.shape() == out, "{}: glu's dy must have shape {} (x {} with axis {} halved), got {}", op,
                         shape_str(out), shape_str(x.shape()), act.axis, shape_str(dy.shape()));
    prepare_output(dx, x.shape(), op, "dx");
    KERASCPP_CHECK_VALUE(dx.raw() != dy.raw(), "{}: glu halves its axis, so dx cannot alias dy", op);
    const float* px = x.data<float>();
    const float* pdy = dy.data<float>();
    float* pdx = dx.data<float>();
    const std::int64_t half = v.classes / 2;
    for (std::int64_t o = 0; o < v.outer; ++o)
      for (std::int64_t j = 0; j < half; ++j)
        for (std::int64_t i = 0; i < v.inner; ++i) {
          const std::int64_t ia = (o * v.classes + j) * v.inner + i, ib = (o * v.classes + j + half) * v.inner + i;
          const float s = act_formula::sigmoid(px[ib]), g = pdy[(o * half + j) * v.inner + i];
          pdx[ia] = g * s;
          pdx[ib] = g * px[ia] * s * (1.f - s);
        }
    return;
  }
  // sparsemax: y_i = max(x_i - tau, 0) with tau as in sparsemax_tau, whose derivative in the
  // element of sorted rank j (1-based) is (k - j + 1) / k inside the support, 0 outside. So
  // dx_i = [y_i > 0] dy_i - (k - rank_i + 1) / k * sum over {y > 0} of dy.
  require_same_shape(dy, "dy", x, "x", op);
  prepare_output(dx, x.shape(), op, "dx");
  const float* px = x.data<float>();
  const float* pdy = dy.data<float>();
  float* pdx = dx.data<float>();
  fit_threads(x.numel(), kSerialElements);
  for_each_fibre(v, [&](std::int64_t base, std::int64_t s, std::vector<float>& g, std::vector<std::int64_t>& order) {
    std::int64_t k = 0;
    const float tau = sparsemax_tau(px + base, v.classes, s, order, k);
    double active_sum = 0.0;
    g.resize(static_cast<std::size_t>(v.classes));
    for (std::int64_t j = 0; j < v.classes; ++j) {
      const bool active = px[base + j * s] - tau > 0.f;
      g[static_cast<std::size_t>(j)] = active ? pdy[base + j * s] : 0.f;
      if (active) active_sum += pdy[base + j * s];
    }
    for (std::int64_t j = 0; j < v.classes; ++j) pdx[base + j * s] = g[static_cast<std::size_t>(j)];  // dx may alias dy
    for (std::int64_t r = 0; r < k; ++r)
      pdx[base + order[static_cast<std::size_t>(r)] * s] -=
          static_cast<float>(static_cast<double>(k - r) / static_cast<double>(k) * active_sum);
  });
}

}  // namespace kerascpp::cpu
