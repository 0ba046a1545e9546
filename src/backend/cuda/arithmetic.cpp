// CudaBackend's elementwise ops, concat/split, dropout and bias sums, on the hand-written
// kernels of kernels/*.cu. Everything is queued on the backend's stream; only copies that touch
// host memory wait for it.
#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/cuda/kernel_common.hpp"
#include "check.hpp"

namespace kerascpp::cuda {

using ops::require_rank_at_least;
using ops::require_same_shape;

namespace {

bool overlaps(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const char* pa = static_cast<const char*>(a);
  const char* pb = static_cast<const char*>(b);
  return pa < pb + b_bytes && pb < pa + a_bytes;
}

// Axis and part-shape checks are shared with the CPU backend (backend/op_shapes.*).
using op_shapes::check_parts;
using op_shapes::normalize_axis;
using op_shapes::outer_count;

// Copies between the whole tensor [outer, whole_row] and its parts, kMaxConcatParts per launch.
void move_rows(const std::vector<Tensor>& parts, float* whole, std::int64_t outer, std::int64_t whole_row,
               bool to_whole, cudaStream_t stream) {
  std::int64_t offset = 0;
  for (std::size_t first = 0; first < parts.size(); first += kern::kMaxConcatParts) {
    kern::ConcatParts pack{};
    for (std::size_t k = first; k < parts.size() && pack.count < kern::kMaxConcatParts; ++k) {
      const std::int64_t row = parts[k].numel() / outer;
      pack.data[pack.count] = static_cast<float*>(const_cast<void*>(parts[k].raw()));
      pack.row[pack.count] = row;
      pack.offset[pack.count] = offset;
      ++pack.count;
      offset += row;
    }
    kern::concat_rows(pack, whole, outer, whole_row, to_whole, stream);
    KCPP_CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace

// ------------------------------------------------------------------------------- bias sums

void CudaBackend::sum_to_last_axis(const Tensor& x, Tensor& out, bool accumulate) {
  DeviceGuard guard(device_);
  const char* op = "sum_to_last_axis";
  require_float_on(x, device(), op, "x");
  require_rank_at_least(x, 1, op, "x");
  const std::int64_t C = x.dim(-1), rows = ops::rows_of(x);
  const bool fresh = !out.defined();  // a new output starts from zero: accumulate adds nothing
  prepare_output_on(out, {C}, device(), op, "out");
  if (C == 0) return;
  double* scratch = kernels_->scratch_doubles(kern::column_sums_scratch(rows, C, kern::kColumnSum));
  kern::column_sums(kern::kColumnSum, x.data<float>(), nullptr, nullptr, rows, C, scratch, out.data<float>(), nullptr,
                    accumulate && !fresh, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

// ------------------------------------------------------------------------------ elementwise

void CudaBackend::add(const std::vector<Tensor>& xs, Tensor& y) {
  DeviceGuard guard(device_);
  const char* op = "add";
  KERASCPP_CHECK_VALUE(!xs.empty(), "add: no inputs given; pass at least one tensor");
  for (std::size_t i = 0; i < xs.size(); ++i) {
    require_float_on(xs[i], device(), op, "xs[i]");
    KERASCPP_CHECK_SHAPE(xs[i].shape() == xs[0].shape(),
                         "add: input {} has shape {} but input 0 has shape {}; all inputs must match", i,
                         shape_str(xs[i].shape()), shape_str(xs[0].shape()));
  }
  prepare_output_on(y, xs[0].shape(), device(), op, "y");
  const std::int64_t n = y.numel();
  if (n == 0) return;
  const std::size_t bytes = y.nbytes();
  if (xs.size() == 1) {
    if (xs[0].raw() != y.raw())
      KCPP_CUDA_CHECK(cudaMemcpyAsync(y.raw(), xs[0].raw(), bytes, cudaMemcpyDeviceToDevice, stream_));
    return;
  }
  // Up to kMaxAddInputs inputs per launch; later launches add into the running result. When y
  // is one of the inputs of a later launch it would be overwritten before being read, so the
  // result is then built in scratch and copied over.
  float* target = y.data<float>();
  if (xs.size() > static_cast<std::size_t>(kern::kMaxAddInputs)) {
    for (std::size_t i = kern::kMaxAddInputs; i < xs.size(); ++i)
      if (overlaps(xs[i].raw(), bytes, y.raw(), bytes)) {
        target = static_cast<float*>(kernels_->scratch(bytes));
        break;
      }
  }
  const float* pack[kern::kMaxAddInputs];
  std::size_t next = 0;
  bool first = true;
  while (next < xs.size()) {
    int count = 0;
    if (!first) pack[count++] = target;
    while (count < kern::kMaxAddInputs && next < xs.size()) pack[count++] = xs[next++].data<float>();
    kern::add_n(pack, count, target, n, stream_);
    KCPP_CUDA_CHECK(cudaGetLastError());
    first = false;
  }
  if (target != y.data<float>())
    KCPP_CUDA_CHECK(cudaMemcpyAsync(y.raw(), target, bytes, cudaMemcpyDeviceToDevice, stream_));
}

void CudaBackend::add_inplace(Tensor& y, const Tensor& x) {
  DeviceGuard guard(device_);
  const char* op = "add_inplace";
  require_float_on(y, device(), op, "y");
  require_float_on(x, device(), op, "x");
  require_same_shape(x, "x", y, "y", op);
  const float* pack[2] = {y.data<float>(), x.data<float>()};
  kern::add_n(pack, 2, y.data<float>(), y.numel(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

namespace {

kern::FloatType float_type(DType d) {
  return d == DType::bfloat16 ? kern::kBfloat16 : d == DType::float16 ? kern::kFloat16 : kern::kFloat32;
}

}  // namespace

void CudaBackend::cast(const Tensor& x, DType dtype, Tensor& y) {
  DeviceGuard guard(device_);
  const char* op = "cast";
  KERASCPP_CHECK_VALUE(!(!x.defined() || x.device() != device() || !is_float(x.dtype()) || !is_float(dtype)),
                       "{}: casts a {} float32/bfloat16/float16 tensor to one of those; got {} to {}", op,
                       device().str(), x.defined() ? dtype_name(x.dtype()) : "an undefined tensor", dtype_name(dtype));
  if (!y.defined()) y = Tensor(x.shape(), dtype, device());
  KERASCPP_CHECK_SHAPE(y.dtype() == dtype && y.shape() == x.shape() && y.device() == device(),
                       "{}: y must be a {} {} tensor of shape {}, got {} {}", op, device().str(), dtype_name(dtype),
                       shape_str(x.shape()), dtype_name(y.dtype()), shape_str(y.shape()));
  kern::cast(x.raw(), float_type(x.dtype()), y.raw(), float_type(dtype), x.numel(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::scale(Tensor& x, float factor) {
  DeviceGuard guard(device_);
  require_float_on(x, device(), "scale", "x");
  kern::scale(x.data<float>(), factor, x.numel(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::multiply(const Tensor& a, const Tensor& b, Tensor& y) {
  DeviceGuard guard(device_);
  const char* op = "multiply";
  require_float_on(a, device(), op, "a");
  require_float_on(b, device(), op, "b");
  require_same_shape(b, "b", a, "a", op);
  prepare_output_on(y, a.shape(), device(), op, "y");
  kern::multiply(a.data<float>(), b.data<float>(), y.data<float>(), y.numel(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::scale_rows(Tensor& x, const Tensor& w) {
  DeviceGuard guard(device_);
  const char* op = "scale_rows";
  require_float_on(x, device(), op, "x");
  require_float_on(w, device(), op, "w");
  const std::int64_t rows = w.numel();
  KERASCPP_CHECK_SHAPE(rows != 0 && x.numel() % rows == 0, "{}: x {} has no rows of w's {} examples", op,
                       shape_str(x.shape()), rows);
  kern::scale_rows(x.data<float>(), w.data<float>(), rows, x.numel() / rows, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::l2_normalize_rows(const Tensor& x, Tensor& y, Tensor& inv) {
  DeviceGuard guard(device_);
  const char* op = "l2_normalize_rows";
  require_float_on(x, device(), op, "x");
  KERASCPP_CHECK_SHAPE(x.rank() == 2, "{}: x must be [rows, features], got {}", op, shape_str(x.shape()));
  prepare_output_on(y, x.shape(), device(), op, "y");
  prepare_output_on(inv, {x.dim(0)}, device(), op, "inv");
  kern::l2_normalize_rows(x.data<float>(), x.dim(0), x.dim(1), y.data<float>(), inv.data<float>(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::l2_normalize_rows_backward(const Tensor& y, const Tensor& dy, const Tensor& inv, Tensor& dx) {
  DeviceGuard guard(device_);
  const char* op = "l2_normalize_rows_backward";
  require_float_on(y, device(), op, "y");
  require_float_on(dy, device(), op, "dy");
  require_float_on(inv, device(), op, "inv");
  KERASCPP_CHECK_SHAPE(y.rank() == 2 && dy.shape() == y.shape() && inv.numel() == y.dim(0),
                       "{}: y {} and dy {} must be the same [rows, features], inv [rows], got inv {}", op,
                       shape_str(y.shape()), shape_str(dy.shape()), shape_str(inv.shape()));
  prepare_output_on(dx, y.shape(), device(), op, "dx");
  kern::l2_normalize_rows_backward(y.data<float>(), dy.data<float>(), inv.data<float>(), y.dim(0), y.dim(1),
                                   dx.data<float>(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

// Byte copy of any dtype. Either side may also be a host tensor (predict gathers replica
// outputs into a host batch this way); the call then waits for the copy.
void CudaBackend::copy(const Tensor& src, Tensor& dst) {
  DeviceGuard guard(device_);
  const char* op = "copy";
  KERASCPP_CHECK_STATE(src.defined(), "copy: src is an undefined tensor");
  if (!dst.defined()) dst = Tensor(src.shape(), src.dtype(), device());
  KERASCPP_CHECK_SHAPE(src.numel() == dst.numel() && src.dtype() == dst.dtype(),
                       "copy: src {} {} and dst {} {} differ in size or dtype; they need the same number of "
                       "elements and the same dtype",
                       shape_str(src.shape()), dtype_name(src.dtype()), shape_str(dst.shape()),
                       dtype_name(dst.dtype()));
  for (const Tensor* t : {&src, static_cast<const Tensor*>(&dst)}) {
    const Device d = t->device();
    KERASCPP_CHECK_DEVICE(d.kind == Device::Kind::cpu || d == device(),
                          "{}: {} is on {} but this backend runs on {}; copy between GPUs with tensor.to()", op,
                          t == &src ? "src" : "dst", d.str(), device().str());
  }
  const std::size_t bytes = src.nbytes();
  if (bytes == 0 || src.raw() == dst.raw()) return;
  const bool src_host = src.on_host(), dst_host = dst.on_host();
  if (src_host && dst_host) {
    std::memmove(dst.raw(), src.raw(), bytes);
    return;
  }
  if (!src_host && !dst_host && overlaps(src.raw(), bytes, dst.raw(), bytes)) {
    // Overlapping views of one block: cudaMemcpy's result is undefined there; go through scratch.
    void* tmp = kernels_->scratch(bytes);
    KCPP_CUDA_CHECK(cudaMemcpyAsync(tmp, src.raw(), bytes, cudaMemcpyDeviceToDevice, stream_));
    KCPP_CUDA_CHECK(cudaMemcpyAsync(dst.raw(), tmp, bytes, cudaMemcpyDeviceToDevice, stream_));
    return;
  }
  KCPP_CUDA_CHECK(cudaMemcpyAsync(dst.raw(), src.raw(), bytes, cudaMemcpyDefault, stream_));
  // The host side may be read or reused as soon as this returns.
  if (src_host || dst_host) KCPP_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

// --------------------------------------------------------------------------- concat / split

void CudaBackend::concat(const std::vector<Tensor>& xs, int axis, Tensor& y) {
  DeviceGuard guard(device_);
  const char* op = "concat";
  KERASCPP_CHECK_VALUE(!xs.empty(), "concat: no inputs given; pass at least one tensor");
  for (const auto& x : xs) require_float_on(x, device(), op, "xs[i]");
  const int a = normalize_axis(axis, xs[0].rank(), op, xs[0].shape());
  Shape shape = xs[0].shape();
  shape[static_cast<std::size_t>(a)] = 0;
  for (const auto& x : xs) shape[static_cast<std::size_t>(a)] += x.rank() == xs[0].rank() ? x.dim(a) : 0;
  prepare_output_on(y, shape, device(), op, "y");
  check_parts(xs, y, a, op);
  if (y.numel() == 0) return;
  const std::int64_t outer = outer_count(shape, a);
  move_rows(xs, y.data<float>(), outer, y.numel() / outer, true, stream_);
}

void CudaBackend::split(const Tensor& y, int axis, std::vector<Tensor>& xs) {
  DeviceGuard guard(device_);
  const char* op = "split";
  require_float_on(y, device(), op, "y");
  KERASCPP_CHECK_VALUE(!xs.empty(), "split: no outputs given; preallocate xs with the part shapes");
  for (const auto& x : xs) require_float_on(x, device(), op, "xs[i] (preallocate every part)");
  const int a = normalize_axis(axis, y.rank(), op, y.shape());
  check_parts(xs, y, a, op);
  if (y.numel() == 0) return;
  const std::int64_t outer = outer_count(y.shape(), a);
  move_rows(xs, const_cast<float*>(y.data<float>()), outer, y.numel() / outer, false, stream_);
}

// ---------------------------------------------------------------------------------- dropout

void CudaBackend::dropout_forward(const Tensor& x, float rate, std::uint64_t seed, Tensor& y, Tensor& mask) {
  DeviceGuard guard(device_);
  const char* op = "dropout_forward";
  require_float_on(x, device(), op, "x");
  KERASCPP_CHECK_VALUE(rate >= 0.f && rate < 1.f,
                       "{}: rate {} is outside [0, 1); Dropout's rate is the fraction of inputs to drop", op, rate);
  prepare_output_on(y, x.shape(), device(), op, "y");
  prepare_output_on(mask, x.shape(), device(), op, "mask");
  // Same constants as backend/cpu/dropout.cpp: the masks are equal bit for bit.
  const float keep_scale = 1.f / (1.f - rate);
  const std::uint64_t threshold = static_cast<std::uint64_t>(static_cast<double>(rate) * 16777216.0);
  std::uint64_t base = seed + 0x9e3779b97f4a7c15ULL;
  base = (base ^ (base >> 30)) * 0xbf58476d1ce4e5b9ULL;
  base = (base ^ (base >> 27)) * 0x94d049bb133111ebULL;
  base = base ^ (base >> 31);
  kern::dropout(x.data<float>(), y.data<float>(), mask.data<float>(), x.numel(), base, threshold, keep_scale, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::random_normal(std::uint64_t seed, float mean, float stddev, Tensor& y) {
  DeviceGuard guard(device_);
  const char* op = "random_normal";
  KERASCPP_CHECK_VALUE(y.defined(), "{}: y must be allocated with the shape of the draws", op);
  require_float_on(y, device(), op, "y");
  kern::random_normal(y.data<float>(), y.numel(), seed, mean, stddev, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

}  // namespace kerascpp::cuda
