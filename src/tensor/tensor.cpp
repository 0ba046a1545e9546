#include "kerascpp/tensor/tensor.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <cstring>
#include <limits>
#include <new>

#include "backend/device_memory.hpp"
#include "check.hpp"
#include "tensor/host_allocator.hpp"
#include "tensor/low_precision.hpp"

namespace kerascpp {

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::float32:
      return 4;
    case DType::int32:
      return 4;
    case DType::int64:
      return 8;
    case DType::uint8:
      return 1;
    case DType::bfloat16:
    case DType::float16:
      return 2;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::float32:
      return "float32";
    case DType::int32:
      return "int32";
    case DType::int64:
      return "int64";
    case DType::uint8:
      return "uint8";
    case DType::bfloat16:
      return "bfloat16";
    case DType::float16:
      return "float16";
  }
  return "?";
}

std::string shape_str(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    // -1 is Keras' unknown (batch) dimension; any other negative is a bug and must show as itself.
    s += shape[i] == -1 ? std::string("None") : std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::int64_t shape_numel(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape)
    KERASCPP_CHECK_VALUE(!__builtin_mul_overflow(n, d, &n),
                         "shape {} has more elements than int64 can count; use a smaller shape", shape_str(shape));
  return n;
}

std::string Device::str() const { return fmt::format("{}:{}", kind == Kind::cpu ? "cpu" : "gpu", index); }

Device Device::parse(const std::string& name) {
  std::string s = name;
  if (!s.empty() && s[0] == '/') s = s.substr(1);
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (s.rfind("device:", 0) == 0) s = s.substr(7);
  Device d;
  std::string kind = s.substr(0, s.find(':'));
  if (kind == "cpu") d.kind = Kind::cpu;
  else if (kind == "gpu" || kind == "cuda") d.kind = Kind::gpu;
  else throw ValueError(fmt::format("unknown device '{}': use \"cpu:N\" or \"gpu:N\"", name));
  auto colon = s.find(':');
  if (colon != std::string::npos) {
    try {
      std::size_t used = 0;
      d.index = std::stoi(s.substr(colon + 1), &used);
      if (used != s.size() - colon - 1 || d.index < 0) throw std::invalid_argument("index");
    } catch (const std::exception&) {
      throw ValueError(fmt::format("bad device index in '{}': use \"cpu:N\" or \"gpu:N\"", name));
    }
  }
  return d;
}

namespace {

thread_local Device current_default_device;

const detail::DeviceMemoryOps& gpu_ops(Device d) {
  const detail::DeviceMemoryOps* ops = detail::gpu_memory_ops();
  KERASCPP_CHECK_DEVICE(ops, "cannot place a tensor on {}: {}", d.str(), detail::gpu_availability().reason);
  return *ops;
}

// Copies bytes between tensors on any devices; plain memmove when both are on the host.
void copy_bytes(void* dst, Device dst_dev, const void* src, Device src_dev, std::size_t n) {
  if (n == 0) return;
  if (dst_dev.kind == Device::Kind::cpu && src_dev.kind == Device::Kind::cpu) std::memmove(dst, src, n);
  else gpu_ops(dst_dev.kind == Device::Kind::gpu ? dst_dev : src_dev).copy(dst, dst_dev, src, src_dev, n);
}

}  // namespace

Device default_device() { return current_default_device; }
DeviceScope::DeviceScope(Device device) : previous_(current_default_device) { current_default_device = device; }
DeviceScope::~DeviceScope() { current_default_device = previous_; }

Storage::Storage(std::size_t n, Device dev) : nbytes(n), device(dev) {
  data = dev.kind == Device::Kind::cpu ? detail::host_allocate(n) : gpu_ops(dev).allocate(dev, n);
}

Storage::~Storage() {
  if (device.kind == Device::Kind::cpu) detail::host_release(data, nbytes);
  else detail::gpu_memory_ops()->release(device, data, nbytes);  // allocated through it, so it exists
}

namespace {

// Physical memory of this machine: a host tensor larger than it can never be used (and a huge
// request could abort sanitizer builds or be granted by overcommit and OOM-kill the process later).
std::uint64_t physical_memory_bytes() {
  // Asked once: sysconf(_SC_PHYS_PAGES) is a syscall, and tensors are made on every step.
  static const std::uint64_t bytes = [] {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return std::numeric_limits<std::uint64_t>::max();
    return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
  }();
  return bytes;
}

[[noreturn]] void throw_too_large(const Shape& shape, DType dtype, const std::string& bytes, const std::string& why) {
  throw ValueError(fmt::format("Tensor: shape {} of {} needs {} bytes, {}; use a smaller shape or batch size",
                               shape_str(shape), dtype_name(dtype), bytes, why));
}

}  // namespace

Tensor::Tensor(Shape shape, DType dtype, Device device) : shape_(std::move(shape)), dtype_(dtype) {
  for (auto d : shape_)
    KERASCPP_CHECK_VALUE(d >= 0,
                         "Tensor: shape {} of {} has a negative dimension; every dimension must be >= 0 "
                         "(-1 means unknown only in Input/Reshape shapes, not in a tensor)",
                         shape_str(shape_), dtype_name(dtype_));
  // Checked products: a shape like (1e10, 1e10) must be refused, not wrap around to a small size.
  std::int64_t count = 1;
  std::uint64_t bytes = 0;
  bool overflow = false;
  for (auto d : shape_) overflow = overflow || __builtin_mul_overflow(count, d, &count);
  overflow = overflow || __builtin_mul_overflow(static_cast<std::uint64_t>(count), dtype_size(dtype_), &bytes) ||
             bytes > static_cast<std::uint64_t>(std::numeric_limits<std::ptrdiff_t>::max());
  if (overflow) throw_too_large(shape_, dtype_, "more", "more than a 64-bit size can count");
  if (device.kind == Device::Kind::cpu && bytes > physical_memory_bytes())
    throw_too_large(shape_, dtype_, std::to_string(bytes),
                    fmt::format("more than this machine's {} bytes of memory", physical_memory_bytes()));
  try {
    storage_ = std::make_shared<Storage>(static_cast<std::size_t>(bytes), device);
  } catch (const std::bad_alloc&) {
    throw_too_large(shape_, dtype_, std::to_string(bytes), "which the host cannot allocate now");
  }
}

void Tensor::throw_empty(const char* op) {
  throw StateError(
      fmt::format("Tensor::{}: the tensor is empty (default-constructed); give it a shape and "
                  "contents first (Tensor(shape), Tensor::zeros, Tensor::from_vector) or check "
                  "defined() before using it",
                  op));
}

Tensor Tensor::zeros(Shape shape, DType dtype, Device device) {
  Tensor t(std::move(shape), dtype, device);
  if (t.on_host()) std::memset(t.raw(), 0, t.nbytes());
  else if (t.nbytes()) gpu_ops(device).zero(device, t.raw(), t.nbytes());
  return t;
}

Tensor Tensor::full(Shape shape, float value) {
  Tensor t(std::move(shape), DType::float32, Device{});
  t.fill(value);
  return t;
}

namespace {
template <class T>
Tensor from_values(Shape shape, const std::vector<T>& values) {
  KERASCPP_CHECK_SHAPE(shape_numel(shape) == static_cast<std::int64_t>(values.size()),
                       "Tensor::from_vector: shape {} holds {} values but {} were given", shape_str(shape),
                       shape_numel(shape), values.size());
  Tensor t(std::move(shape), dtype_of<T>::value, Device{});
  if (!values.empty()) std::memcpy(t.raw(), values.data(), values.size() * sizeof(T));
  return t;
}
}  // namespace

Tensor Tensor::from_vector(Shape s, const std::vector<float>& v) { return from_values(std::move(s), v); }
Tensor Tensor::from_vector(Shape s, const std::vector<std::int32_t>& v) { return from_values(std::move(s), v); }
Tensor Tensor::from_vector(Shape s, const std::vector<std::int64_t>& v) { return from_values(std::move(s), v); }
Tensor Tensor::from_vector(Shape s, const std::vector<std::uint8_t>& v) { return from_values(std::move(s), v); }
Tensor Tensor::from_vector(Shape s, std::initializer_list<float> v) {
  return from_values(std::move(s), std::vector<float>(v));
}
Tensor Tensor::from_vector(Shape s, std::initializer_list<double> v) {
  return from_values(std::move(s), std::vector<float>(v.begin(), v.end()));
}
Tensor Tensor::from_vector(Shape s, std::initializer_list<int> v) {
  return from_values(std::move(s), std::vector<std::int32_t>(v.begin(), v.end()));
}

std::int64_t Tensor::dim(int axis) const {
  require_defined("dim");
  int r = rank();
  int a = axis < 0 ? axis + r : axis;
  KERASCPP_CHECK_VALUE(a >= 0 && a < r, "Tensor::dim: axis {} out of range for shape {}", axis, shape_str(shape_));
  return shape_[a];
}

std::vector<float> Tensor::to_vector() const {
  require_defined("to_vector");
  if (!on_host()) return to(Device{}).to_vector();
  std::vector<float> out(static_cast<std::size_t>(numel()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    switch (dtype_) {
      case DType::float32:
        out[i] = static_cast<const float*>(raw())[i];
        break;
      case DType::int32:
        out[i] = static_cast<float>(static_cast<const std::int32_t*>(raw())[i]);
        break;
      case DType::int64:
        out[i] = static_cast<float>(static_cast<const std::int64_t*>(raw())[i]);
        break;
      case DType::uint8:
        out[i] = static_cast<const std::uint8_t*>(raw())[i];
        break;
      case DType::bfloat16:
        out[i] = low_precision::bfloat16_to_float(static_cast<const std::uint16_t*>(raw())[i]);
        break;
      case DType::float16:
        out[i] = low_precision::half_to_float(static_cast<const std::uint16_t*>(raw())[i]);
        break;
    }
  }
  return out;
}

Tensor Tensor::reshape(Shape shape) const {
  require_defined("reshape");
  int infer = -1;
  std::int64_t known = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    KERASCPP_CHECK_VALUE(shape[i] >= -1,
                         "Tensor::reshape: target shape {} has a negative dimension; use sizes >= 0 "
                         "and at most one -1 (inferred)",
                         shape_str(shape));
    if (shape[i] == -1) {
      KERASCPP_CHECK_VALUE(infer < 0, "Tensor::reshape: only one dimension may be -1");
      infer = static_cast<int>(i);
    } else {
      KERASCPP_CHECK_VALUE(!__builtin_mul_overflow(known, shape[i], &known),
                           "Tensor::reshape: target shape {} has more elements than int64 can count", shape_str(shape));
    }
  }
  if (infer >= 0 && known > 0) shape[infer] = numel() / known;
  KERASCPP_CHECK_SHAPE(shape_numel(shape) == numel(), "Tensor::reshape: cannot reshape {} ({} values) to {}",
                       shape_str(shape_), numel(), shape_str(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::slice(std::int64_t begin, std::int64_t end) const {
  require_defined("slice");
  KERASCPP_CHECK_VALUE(!(rank() == 0 || begin < 0 || end < begin || end > shape_[0]),
                       "Tensor::slice: rows [{}, {}) out of range for shape {}", begin, end, shape_str(shape_));
  Tensor t = *this;
  std::int64_t row = shape_[0] == 0 ? 0 : numel() / shape_[0];
  t.offset_ += static_cast<std::size_t>(begin * row) * dtype_size(dtype_);
  t.shape_[0] = end - begin;
  return t;
}

Tensor Tensor::clone() const {
  if (!defined()) return {};
  Tensor t(shape_, dtype_, device());
  copy_bytes(t.raw(), t.device(), raw(), device(), nbytes());
  return t;
}

Tensor Tensor::to(Device target) const {
  if (!defined() || device() == target) return *this;
  Tensor t(shape_, dtype_, target);
  copy_bytes(t.raw(), target, raw(), device(), nbytes());
  return t;
}

void Tensor::copy_from(const Tensor& src) {
  require_defined("copy_from");
  src.require_defined("copy_from (source)");
  KERASCPP_CHECK_SHAPE(src.shape_ == shape_ && src.dtype_ == dtype_,
                       "Tensor::copy_from: destination {} {} but source {} {}", shape_str(shape_), dtype_name(dtype_),
                       shape_str(src.shape_), dtype_name(src.dtype_));
  copy_bytes(raw(), device(), src.raw(), src.device(), nbytes());
}

void Tensor::fill(float value) {
  require_defined("fill");
  if (!on_host()) {
    if (value == 0.f) gpu_ops(device()).zero(device(), raw(), nbytes());  // all four dtypes: zero bits
    else {
      Tensor host(shape_, dtype_, Device{});
      host.fill(value);
      copy_from(host);
    }
    return;
  }
  auto n = numel();
  switch (dtype_) {
    case DType::float32: {
      auto* p = data<float>();
      for (std::int64_t i = 0; i < n; ++i) p[i] = value;
      break;
    }
    case DType::int32: {
      auto* p = data<std::int32_t>();
      for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<std::int32_t>(value);
      break;
    }
    case DType::int64: {
      auto* p = data<std::int64_t>();
      for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<std::int64_t>(value);
      break;
    }
    case DType::uint8: {
      auto* p = data<std::uint8_t>();
      for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(value);
      break;
    }
    case DType::bfloat16:
    case DType::float16: {
      const std::uint16_t bits =
          dtype_ == DType::bfloat16 ? low_precision::float_to_bfloat16(value) : low_precision::float_to_half(value);
      auto* p = static_cast<std::uint16_t*>(raw());
      for (std::int64_t i = 0; i < n; ++i) p[i] = bits;
      break;
    }
  }
}

}  // namespace kerascpp
