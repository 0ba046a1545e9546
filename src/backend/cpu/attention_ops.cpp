// The ops attention is made of: batched matmul (oneDNN matmul over rank-3 tensors, transposes
// as strides), an axis permutation (a oneDNN reorder from permuted strides) and masked_fill.
#include <fmt/format.h>

#include <cstring>

#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/dnnl_util.hpp"
#include "backend/cpu/parallel.hpp"
#include "check.hpp"

namespace kerascpp::cpu {

namespace {

struct BatchedMatmulEntry : CacheEntry {
  CachedPrimitive mm;
};

struct TransposeEntry : CacheEntry {
  CachedPrimitive reorder;
};

}  // namespace

void CpuBackend::batched_matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
                                bool accumulate) {
  enter();
  const char* op = "batched_matmul";
  require_float(a, op, "a");
  require_float(b, op, "b");
  const op_shapes::BatchedMatmulDims d = op_shapes::batched_matmul_dims(a, transpose_a, b, transpose_b, op);
  const std::int64_t B = d.B, M = d.M, K = d.K, N = d.N;
  if (!c.defined()) {
    c = Tensor::zeros({B, M, N}, DType::float32, Device{});
    accumulate = false;
  } else {
    require_float(c, op, "c");
    op_shapes::require_output_shape(c, {B, M, N}, op, "c");
  }
  if (B == 0 || M == 0 || N == 0) return;
  if (K == 0) {
    if (!accumulate) std::memset(c.raw(), 0, c.nbytes());
    return;
  }
  fit_threads(B * M * N * K, kSerialMacs);
  const ComputeOperands operands = compute_operands(a, b);
  cache_.key(op);
  cache_.append(B, M, K, N, transpose_a, transpose_b, accumulate, static_cast<int>(operands.dt));
  auto& e = cache_.get<BatchedMatmulEntry>([&] {
    return guarded_build(op, cache_.current_key(), [&] {
      auto attr = base_attr();
      if (accumulate) {
        dnnl::post_ops po;
        po.append_sum(1.f);
        attr.set_post_ops(po);
      }
      // A transposed slice is the same buffer read with its two inner strides swapped.
      const auto dt = operands.dt;
      auto src = transpose_a ? typed_strided_md({B, M, K}, dt, {M * K, 1, M}) : typed_md({B, M, K}, dt, tag::abc);
      auto wei = transpose_b ? typed_strided_md({B, K, N}, dt, {K * N, 1, K}) : typed_md({B, K, N}, dt, tag::abc);
      auto dst = f32_md({B, M, N}, tag::abc);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, wei, dst), attr, engine_);
      auto entry = std::make_unique<BatchedMatmulEntry>();
      entry->mm = make_primitive(pd, {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST});
      return entry;
    });
  });
  e.mm.bind(DNNL_ARG_SRC, operands.a);
  e.mm.bind(DNNL_ARG_WEIGHTS, operands.b);
  e.mm.bind(DNNL_ARG_DST, c.raw());
  run(e.mm);
}

void CpuBackend::transpose(const Tensor& x, const std::vector<int>& perm, Tensor& y) {
  enter();
  const char* op = "transpose";
  require_float(x, op, "x");
  const Shape out = op_shapes::transposed_shape(x, perm, op);
  prepare_output(y, out, op, "y");
  if (x.numel() == 0) return;
  // x's strides, row-major; output axis i reads x's axis perm[i].
  dims x_strides(static_cast<std::size_t>(x.rank()));
  std::int64_t stride = 1;
  for (int i = x.rank() - 1; i >= 0; --i) {
    x_strides[static_cast<std::size_t>(i)] = stride;
    stride *= x.dim(i);
  }
  dims out_dims(out.begin(), out.end()), src_strides, dst_strides(out.size());
  for (int p : perm) src_strides.push_back(x_strides[static_cast<std::size_t>(p)]);
  stride = 1;
  for (int i = static_cast<int>(out.size()) - 1; i >= 0; --i) {
    dst_strides[static_cast<std::size_t>(i)] = stride;
    stride *= out[static_cast<std::size_t>(i)];
  }
  fit_threads(x.numel(), kSerialElements);
  cache_.key(op);
  for (std::int64_t v : out_dims) cache_.append(v);
  for (int p : perm) cache_.append(p);
  auto& e = cache_.get<TransposeEntry>([&] {
    return guarded_build(op, cache_.current_key(), [&] {
      dnnl::reorder::primitive_desc pd(engine_, f32_strided_md(out_dims, src_strides), engine_,
                                       f32_strided_md(out_dims, dst_strides));
      auto entry = std::make_unique<TransposeEntry>();
      entry->reorder = make_primitive(pd, {DNNL_ARG_FROM, DNNL_ARG_TO});
      return entry;
    });
  });
  e.reorder.bind(DNNL_ARG_FROM, x.raw());
  e.reorder.bind(DNNL_ARG_TO, y.raw());
  run(e.reorder);
}

void CpuBackend::masked_fill(Tensor& x, const Tensor& mask, float value) {
  enter();
  const char* op = "masked_fill";
  require_float(x, op, "x");
  KERASCPP_CHECK_DEVICE(mask.device() == Device{}, "{}: mask is on {} but this backend computes on the host", op,
                        mask.device().str());
  const op_shapes::MaskedFillDims d = op_shapes::masked_fill_dims(x, mask, op);
  float* px = x.data<float>();
  const auto* pm = static_cast<const std::uint8_t*>(mask.raw());
  parallel_for(d.B * d.G, 1, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      const std::uint8_t* m = pm + (r / d.G) * d.L;
      float* row = px + r * d.L;
      for (std::int64_t l = 0; l < d.L; ++l)
        if (m[l] == 0) row[l] = value;
    }
  });
}

void CpuBackend::mask_and(const Tensor& a, const Tensor& b, Tensor& out) {
  enter();
  const char* op = "mask_and";
  KERASCPP_CHECK_DEVICE(a.device() == Device{} && b.device() == Device{},
                        "{}: masks must be on the host for this backend", op);
  op_shapes::check_mask_pair(a, b, op);
  if (!out.defined()) out = Tensor(a.shape(), DType::uint8, Device{});
  op_shapes::check_mask_pair(a, out, op);
  const auto* pa = static_cast<const std::uint8_t*>(a.raw());
  const auto* pb = static_cast<const std::uint8_t*>(b.raw());
  auto* po = static_cast<std::uint8_t*>(out.raw());
  for (std::int64_t i = 0; i < a.numel(); ++i) po[i] = (pa[i] != 0 && pb[i] != 0) ? 1 : 0;
}

void CpuBackend::mask_not_equal(const Tensor& x, float value, Tensor& mask) {
  enter();
  const char* op = "mask_not_equal";
  require_float(x, op, "x");
  const std::int64_t K = op_shapes::prepare_mask_not_equal(x, mask, Device{}, op);
  const float* px = x.data<float>();
  auto* pm = static_cast<std::uint8_t*>(mask.raw());
  parallel_for(mask.numel(), 256, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      const float* row = px + r * K;
      bool any = false;
      for (std::int64_t k = 0; k < K && !any; ++k) any = !(row[k] == value);  // NaN: not equal
      pm[r] = any ? 1 : 0;
    }
  });
}

void CpuBackend::attention_mask(const Tensor& query_mask, const Tensor& value_mask, const Tensor& explicit_mask,
                                bool causal, Tensor& out) {
  enter();
  const char* op = "attention_mask";
  for (const Tensor* m : {&query_mask, &value_mask, &explicit_mask, static_cast<const Tensor*>(&out)})
    KERASCPP_CHECK_DEVICE(!m->defined() || m->device() == Device{}, "{}: masks must be on the host for this backend",
                          op);
  op_shapes::check_attention_masks(query_mask, value_mask, explicit_mask, out, op);
  const std::int64_t B = out.dim(0), T = out.dim(1), S = out.dim(2);
  auto u8 = [](const Tensor& t) { return t.defined() ? static_cast<const std::uint8_t*>(t.raw()) : nullptr; };
  const std::uint8_t *q = u8(query_mask), *v = u8(value_mask), *e = u8(explicit_mask);
  auto* o = static_cast<std::uint8_t*>(out.raw());
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t s = 0; s < S; ++s) {
        const std::int64_t i = (b * T + t) * S + s;
        const bool keep = (!q || q[b * T + t]) && (!v || v[b * S + s]) && (!e || e[i]) && (!causal || s <= t);
        o[i] = keep ? 1 : 0;
      }
}

}  // namespace kerascpp::cpu
