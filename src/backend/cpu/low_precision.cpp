// Mixed precision on the CPU: casts between float32 and the 16-bit floats, and the operands of
// matmuls and convolutions in the compute dtype. oneDNN runs bf16 natively where that pays
// (bf16_kernel_choice.hpp: AMX, AMD's AVX512-BF16); where it has no kernel (AVX2, and float16 on
// most processors) or only kernels slower than float32 ones (plain AVX-512, Intel's AVX512-BF16
// without AMX), the operands are rounded to 16 bits and computed by the float32 kernels, which
// gives the same products (16-bit by 16-bit fits float32 exactly) at float32 speed.
#include <fmt/format.h>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "backend/cpu/bf16_kernel_choice.hpp"
#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/dnnl_util.hpp"
#include "backend/cpu/low_precision_conversions.hpp"
#include "backend/cpu/parallel.hpp"
#include "check.hpp"
#include "core/knobs.hpp"

namespace kerascpp::cpu {

namespace {

// Converts n elements from `from` to `to` (float32 <-> bfloat16/float16, between the two 16-bit
// types through float32, or the same dtype).
void convert(const void* src, DType from, void* dst, DType to, std::int64_t n) {
  const auto* s16 = static_cast<const std::uint16_t*>(src);
  auto* d16 = static_cast<std::uint16_t*>(dst);
  parallel_for(n, kElementGrain, [&](std::int64_t b, std::int64_t e) {
    if (from == to) {
      const std::size_t width = dtype_size(to), first = static_cast<std::size_t>(b) * width;
      std::memcpy(static_cast<char*>(dst) + first, static_cast<const char*>(src) + first,
                  static_cast<std::size_t>(e - b) * width);
    } else if (from == DType::float32) {
      narrow_floats(static_cast<const float*>(src) + b, d16 + b, to, e - b);
    } else if (to == DType::float32) {
      widen_floats(s16 + b, from, static_cast<float*>(dst) + b, e - b);
    } else {
      float wide[256];
      for (std::int64_t i = b; i < e; i += 256) {
        const std::int64_t m = std::min<std::int64_t>(256, e - i);
        widen_floats(s16 + i, from, wide, m);
        narrow_floats(wide, d16 + i, to, m);
      }
    }
  });
}

// dst = src rounded to `dtype` (bfloat16 or float16), kept as float32.
void round_to(const float* src, float* dst, DType dtype, std::int64_t n) {
  parallel_for(n, kElementGrain, [&](std::int64_t b, std::int64_t e) { round_floats(src + b, dst + b, dtype, e - b); });
}

// KERASCPP_BF16_ONEDNN_EMULATION=1 takes oneDNN's bf16 kernels wherever choose_bf16_kernels
// would not (slower than float32; without bfloat16 instructions they emulate them; it lets the
// tests run oneDNN's bf16 and the 16-bit activation paths on such processors). Read once per
// process; any other value leaves the default.
bool onednn_bf16_emulation_asked() {
  static const bool asked = [] {
    const char* v = ::kerascpp::detail::knob("KERASCPP_BF16_ONEDNN_EMULATION");
    return v && std::string(v) == "1";
  }();
  return asked;
}

// Whether oneDNN has real (not reference) kernels for what 16-bit activations add to
// native_compute's probe: matmul and convolution writing `dt`, the convolution's backward data
// pass writing it, and max pooling both ways in it.
bool native_activation_kernels(dnnl::memory::data_type dt, const dnnl::engine& engine) {
  using dnnl::algorithm;
  using dnnl::prop_kind;
  try {
    const dnnl::memory::desc a({256, 256}, dt, tag::ab);
    dnnl::matmul::primitive_desc mm(dnnl::matmul::desc(a, a, a), engine);
    const dnnl::memory::desc src({32, 16, 14, 14}, dt, tag::nhwc), wei({16, 16, 3, 3}, dt, tag::any),
        dst({32, 16, 12, 12}, dt, tag::nhwc), pooled({32, 16, 7, 7}, dt, tag::nhwc);
    const dnnl::memory::dims one{1, 1}, zero{0, 0}, two{2, 2};
    dnnl::convolution_forward::primitive_desc fwd(
        dnnl::convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct, src, wei, dst, one,
                                        zero, zero),
        engine);
    dnnl::convolution_backward_data::primitive_desc bwd(
        dnnl::convolution_backward_data::desc(algorithm::convolution_direct, src, wei, dst, one, zero, zero), engine,
        fwd);
    dnnl::pooling_forward::primitive_desc pool(
        dnnl::pooling_forward::desc(prop_kind::forward_training, algorithm::pooling_max, src, pooled, two, two, zero,
                                    zero),
        engine);
    dnnl::pooling_backward::primitive_desc pool_bwd(
        dnnl::pooling_backward::desc(algorithm::pooling_max, src, pooled, two, two, zero, zero), engine, pool);
    for (std::string_view impl :
         {mm.impl_info_str(), fwd.impl_info_str(), bwd.impl_info_str(), pool.impl_info_str(), pool_bwd.impl_info_str()})
      if (impl.find("ref") != std::string::npos) return false;
    return true;
  } catch (const dnnl::error&) { return false; }
}

}  // namespace

void CpuBackend::cast(const Tensor& x, DType dtype, Tensor& y) {
  enter();
  const char* op = "cast";
  KERASCPP_CHECK_VALUE(!(!x.defined() || !x.on_host() || !is_float(x.dtype()) || !is_float(dtype)),
                       "{}: casts a host float32/bfloat16/float16 tensor to one of those; got {} to {}", op,
                       x.defined() ? dtype_name(x.dtype()) : "an undefined tensor", dtype_name(dtype));
  if (!y.defined()) y = Tensor(x.shape(), dtype, Device{});
  KERASCPP_CHECK_SHAPE(y.dtype() == dtype && y.shape() == x.shape() && y.on_host(),
                       "{}: y must be a host {} tensor of shape {}, got {} {}", op, dtype_name(dtype),
                       shape_str(x.shape()), dtype_name(y.dtype()), shape_str(y.shape()));
  fit_threads(x.numel(), kSerialElements);
  convert(x.raw(), x.dtype(), y.raw(), dtype, x.numel());
}

bool CpuBackend::native_compute(DType dtype) {
  int& known = dtype == DType::bfloat16 ? native_bf16_ : native_f16_;
  std::string& kernel = dtype == DType::bfloat16 ? native_bf16_kernel_ : native_f16_kernel_;
  if (known < 0) {
    // A training-sized matmul and convolution: oneDNN either has a kernel for them in this dtype
    // on this processor or answers with its slow reference code (or refuses).
    known = 0;
    if (dtype == DType::bfloat16 && !onednn_bf16_emulation_asked()) {
      Bf16KernelChoice choice = choose_bf16_kernels_here();
      if (!choice.onednn_bf16) {
        kernel = std::move(choice.why);
        return false;
      }
    }
    try {
      const auto dt = dnnl_type_of(dtype);
      const dnnl::memory::desc a({256, 256}, dt, tag::ab), c({256, 256}, dnnl::memory::data_type::f32, tag::ab);
      dnnl::matmul::primitive_desc mm(dnnl::matmul::desc(a, a, c), engine_);
      const dnnl::memory::desc src({32, 16, 14, 14}, dt, tag::nhwc), wei({16, 16, 3, 3}, dt, tag::any),
          dst({32, 16, 12, 12}, dnnl::memory::data_type::f32, tag::nhwc);
      dnnl::convolution_forward::primitive_desc conv(
          dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, src,
                                          wei, dst, {1, 1}, {0, 0}, {0, 0}),
          engine_);
      const std::string mm_impl = mm.impl_info_str(), conv_impl = conv.impl_info_str();
      if (mm_impl.find("ref") == std::string::npos && conv_impl.find("ref") == std::string::npos) {
        known = 1;
        kernel = fmt::format("matmul {}, convolution {}", mm_impl, conv_impl);
      } else {
        kernel =
            fmt::format("oneDNN offers only reference kernels here: matmul {}, convolution {}", mm_impl, conv_impl);
      }
    } catch (const dnnl::error&) { kernel = "oneDNN has no kernel for it on this processor"; }
  }
  return known == 1;
}

std::string CpuBackend::compute_path(DType dtype) {
  enter();
  if (dtype == DType::float32) return "float32";
  KERASCPP_CHECK_VALUE(is_low_precision(dtype), "compute_path: {} is not a compute dtype (float32, bfloat16, float16)",
                       dtype_name(dtype));
  const bool native = native_compute(dtype);
  return fmt::format("{} ({})", native ? "native" : "emulated",
                     dtype == DType::bfloat16 ? native_bf16_kernel_ : native_f16_kernel_);
}

bool CpuBackend::low_precision_activations(DType dtype) {
  // KERASCPP_LOW_PRECISION_ACTIVATIONS=0 keeps float32 between layers (for comparisons); read
  // once per process, any other value leaves the default.
  static const bool allowed = [] {
    const char* v = ::kerascpp::detail::knob("KERASCPP_LOW_PRECISION_ACTIVATIONS");
    return !(v && std::string(v) == "0");
  }();
  // Emulated 16-bit compute runs float32 kernels, which would need every activation widened again.
  if (!allowed || !is_low_precision(dtype) || !native_compute(dtype)) return false;
  int& known = dtype == DType::bfloat16 ? native_bf16_activations_ : native_f16_activations_;
  if (known < 0) known = native_activation_kernels(dnnl_type_of(dtype), engine_) ? 1 : 0;
  return known == 1;
}

void CpuBackend::require_activation(const Tensor& t, const char* op, const char* arg) {
  if (!t.defined() || t.dtype() == DType::float32) return require_float(t, op, arg);
  KERASCPP_CHECK_SHAPE(t.dtype() == compute_dtype_ && low_precision_activations(t.dtype()),
                       "{}: `{}` {} is {}; this op takes float32{}; cast it first", op, arg, shape_str(t.shape()),
                       dtype_name(t.dtype()),
                       is_low_precision(compute_dtype_) && low_precision_activations(compute_dtype_)
                           ? fmt::format(" or {} (the compute dtype)", dtype_name(compute_dtype_))
                           : std::string());
  KERASCPP_CHECK_DEVICE(t.on_host(), "{}: `{}` lives on {} but this is the CPU backend; copy it to the host first", op,
                        arg, t.device().str());
}

void CpuBackend::prepare_activation(Tensor& t, const Shape& shape, DType dtype, const char* op, const char* arg) {
  if (!t.defined()) t = Tensor(shape, dtype, Device{});
  if (t.dtype() == DType::float32) return prepare_output(t, shape, op, arg);
  require_activation(t, op, arg);
  op_shapes::require_output_shape(t, shape, op, arg);
}

CpuBackend::ComputeOperands CpuBackend::compute_operands(const Tensor& a, const Tensor& b) {
  return {compute_operand(a, operand_a_), compute_operand(b, operand_b_), compute_data_type()};
}

dnnl::memory::data_type CpuBackend::compute_data_type() {
  const DType dtype = compute_dtype_;
  return dtype != DType::float32 && native_compute(dtype) ? dnnl_type_of(dtype) : dnnl::memory::data_type::f32;
}

const void* CpuBackend::compute_operand(const Tensor& t, ScratchBuffer& buffer) {
  const DType dtype = compute_dtype_;
  if (dtype == DType::float32 || t.dtype() == dtype) return t.raw();  // require_activation let a 16-bit t in
  const std::int64_t n = t.numel();
  if (native_compute(dtype)) {
    void* p = buffer.bytes(static_cast<std::size_t>(n) * 2);
    convert(t.raw(), DType::float32, p, dtype, n);
    return p;
  }
  // Emulated: a float32 copy holding the 16-bit values.
  float* p = buffer.floats(n);
  round_to(t.data<float>(), p, dtype, n);
  return p;
}

}  // namespace kerascpp::cpu
