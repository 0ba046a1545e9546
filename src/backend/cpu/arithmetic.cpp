// Elementwise arithmetic: n-ary add on oneDNN's sum primitive, in-place add, bias add and
// multiply on its binary primitive, and hand loops for scale and copy (memory-bound either way).
#include <fmt/format.h>

#include <cstring>

#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/dnnl_util.hpp"
#include "backend/cpu/parallel.hpp"
#include "check.hpp"

namespace kerascpp::cpu {

namespace {

struct ArithmeticEntry : CacheEntry {
  CachedPrimitive prim;
};

}  // namespace

void CpuBackend::add(const std::vector<Tensor>& xs, Tensor& y) {
  enter();
  const char* op = "add";
  KERASCPP_CHECK_VALUE(!xs.empty(), "add: no inputs given; pass at least one tensor");
  for (std::size_t i = 0; i < xs.size(); ++i) {
    require_float(xs[i], op, "xs[i]");
    KERASCPP_CHECK_SHAPE(xs[i].shape() == xs[0].shape(),
                         "add: input {} has shape {} but input 0 has shape {}; all inputs must match", i,
                         shape_str(xs[i].shape()), shape_str(xs[0].shape()));
  }
  prepare_output(y, xs[0].shape(), op, "y");
  const std::int64_t n = y.numel();
  if (n == 0) return;
  if (xs.size() == 1) {
    if (xs[0].raw() != y.raw()) std::memcpy(y.raw(), xs[0].raw(), y.nbytes());
    return;
  }
  const int count = static_cast<int>(xs.size());
  fit_threads(n * count, kSerialElements);
  cache_.key("add");
  cache_.append(count, n);
  auto& e = cache_.get<ArithmeticEntry>([&] {
    return guarded_build(op, cache_.current_key(), [&] {
      auto md = f32_md({n}, tag::a);
      std::vector<float> scales(xs.size(), 1.f);
      std::vector<dnnl::memory::desc> srcs(xs.size(), md);
      dnnl::sum::primitive_desc pd(md, scales, srcs, engine_, base_attr());
      auto entry = std::make_unique<ArithmeticEntry>();
      entry->prim = make_primitive(pd, {DNNL_ARG_DST});
      for (int i = 0; i < count; ++i) entry->prim.add_arg(DNNL_ARG_MULTIPLE_SRC + i, md, engine_);
      return entry;
    });
  });
  for (int i = 0; i < count; ++i) e.prim.bind(DNNL_ARG_MULTIPLE_SRC + i, xs[i].raw());
  e.prim.bind(DNNL_ARG_DST, y.raw());
  run(e.prim);
}

void CpuBackend::add_inplace(Tensor& y, const Tensor& x) {
  enter();
  const char* op = "add_inplace";
  require_float(y, op, "y");
  require_float(x, op, "x");
  require_same_shape(x, "x", y, "y", op);
  const std::int64_t n = y.numel();
  if (n == 0) return;
  fit_threads(n, kSerialElements);
  cache_.key("binary_add");
  cache_.append(n);
  auto& e = cache_.get<ArithmeticEntry>([&] {
    return guarded_build(op, cache_.current_key(), [&] {
      auto md = f32_md({n}, tag::a);
      dnnl::binary::primitive_desc pd(dnnl::binary::desc(dnnl::algorithm::binary_add, md, md, md), base_attr(),
                                      engine_);
      auto entry = std::make_unique<ArithmeticEntry>();
      entry->prim = make_primitive(pd, {DNNL_ARG_SRC_0, DNNL_ARG_SRC_1, DNNL_ARG_DST});
      return entry;
    });
  });
  e.prim.bind(DNNL_ARG_SRC_0, y.raw());
  e.prim.bind(DNNL_ARG_SRC_1, x.raw());
  e.prim.bind(DNNL_ARG_DST, y.raw());
  run(e.prim);
}

void CpuBackend::bias_add(Tensor& y, const Tensor& b) {
  enter();
  const char* op = "bias_add";
  require_float(y, op, "y");
  require_float(b, op, "b");
  require_rank_at_least(y, 1, op, "y");
  const std::int64_t c = y.dim(-1), rows = op_shapes::leading(y);
  KERASCPP_CHECK_SHAPE(has_shape(b, {c}), "bias_add: b has shape {} but y {} has {} channels; b must be ({},)",
                       shape_str(b.shape()), shape_str(y.shape()), c, c);
  if (y.numel() == 0) return;
  cache_.key("bias_add");
  cache_.append(rows, c);
  auto& e = cache_.get<ArithmeticEntry>([&] {
    return guarded_build(op, cache_.current_key(), [&] {
      // y viewed as [rows, C] plus b as [1, C], broadcast over the rows.
      auto md = f32_md({rows, c}, tag::ab);
      dnnl::binary::primitive_desc pd(dnnl::binary::desc(dnnl::algorithm::binary_add, md, f32_md({1, c}, tag::ab), md),
                                      base_attr(), engine_);
      auto entry = std::make_unique<ArithmeticEntry>();
      entry->prim = make_primitive(pd, {DNNL_ARG_SRC_0, DNNL_ARG_SRC_1, DNNL_ARG_DST});
      return entry;
    });
  });
  e.prim.bind(DNNL_ARG_SRC_0, y.raw());
  e.prim.bind(DNNL_ARG_SRC_1, b.raw());
  e.prim.bind(DNNL_ARG_DST, y.raw());
  run(e.prim);
}

void CpuBackend::multiply(const Tensor& a, const Tensor& b, Tensor& y) {
  enter();
  const char* op = "multiply";
  require_float(a, op, "a");
  require_float(b, op, "b");
  require_same_shape(b, "b", a, "a", op);
  prepare_output(y, a.shape(), op, "y");
  const std::int64_t n = y.numel();
  if (n == 0) return;
  fit_threads(n, kSerialElements);
  cache_.key("binary_mul");
  cache_.append(n);
  auto& e = cache_.get<ArithmeticEntry>([&] {
    return guarded_build(op, cache_.current_key(), [&] {
      auto md = f32_md({n}, tag::a);
      dnnl::binary::primitive_desc pd(dnnl::binary::desc(dnnl::algorithm::binary_mul, md, md, md), base_attr(),
                                      engine_);
      auto entry = std::make_unique<ArithmeticEntry>();
      entry->prim = make_primitive(pd, {DNNL_ARG_SRC_0, DNNL_ARG_SRC_1, DNNL_ARG_DST});
      return entry;
    });
  });
  e.prim.bind(DNNL_ARG_SRC_0, a.raw());
  e.prim.bind(DNNL_ARG_SRC_1, b.raw());
  e.prim.bind(DNNL_ARG_DST, y.raw());
  run(e.prim);
}

void CpuBackend::scale(Tensor& x, float factor) {
  enter();
  require_float(x, "scale", "x");
  float* p = x.data<float>();
  parallel_for(x.numel(), kElementGrain, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) p[i] *= factor;
  });
}

void CpuBackend::scale_rows(Tensor& x, const Tensor& w) {
  enter();
  const char* op = "scale_rows";
  require_float(x, op, "x");
  require_float(w, op, "w");
  const std::int64_t rows = w.numel();
  KERASCPP_CHECK_SHAPE(rows != 0 && x.numel() % rows == 0, "{}: x {} has no rows of w's {} examples", op,
                       shape_str(x.shape()), rows);
  const std::int64_t cols = x.numel() / rows;
  float* p = x.data<float>();
  const float* wp = w.data<float>();
  parallel_for(x.numel(), kElementGrain, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) p[i] *= wp[i / cols];
  });
}

void CpuBackend::copy(const Tensor& src, Tensor& dst) {
  enter();
  KERASCPP_CHECK_STATE(src.defined(), "copy: src is an undefined tensor");
  if (!dst.defined()) dst = Tensor(src.shape(), src.dtype(), Device{});
  KERASCPP_CHECK_SHAPE(src.numel() == dst.numel() && src.dtype() == dst.dtype(),
                       "copy: src {} {} and dst {} {} differ in size or dtype; they need the same number of "
                       "elements and the same dtype",
                       shape_str(src.shape()), dtype_name(src.dtype()), shape_str(dst.shape()),
                       dtype_name(dst.dtype()));
  KERASCPP_CHECK_DEVICE(src.device().kind == Device::Kind::cpu && dst.device().kind == Device::Kind::cpu,
                        "copy: src on {} and dst on {}; the CPU backend copies host tensors only", src.device().str(),
                        dst.device().str());
  if (src.raw() == dst.raw() || src.nbytes() == 0) return;
  const char* s = static_cast<const char*>(src.raw());
  char* d = static_cast<char*>(dst.raw());
  const std::int64_t bytes = static_cast<std::int64_t>(src.nbytes());
  if (s < d + bytes && d < s + bytes) {  // overlapping views of one storage: one ordered move
    std::memmove(d, s, static_cast<std::size_t>(bytes));
    return;
  }
  parallel_for(bytes, kElementGrain * 16,
               [&](std::int64_t b, std::int64_t e) { std::memmove(d + b, s + b, static_cast<std::size_t>(e - b)); });
}

}  // namespace kerascpp::cpu
