// operator<< for Shape, DType, Device and Tensor: numpy-like text for logs and test failures.
#include <fmt/format.h>

#include <ostream>

#include "kerascpp/tensor/tensor.hpp"
#include "tensor/low_precision.hpp"

namespace kerascpp {
namespace {

// numpy's threshold and edge items: above 1000 elements each axis shows its first and last 3.
constexpr std::int64_t kElideAbove = 1000;
constexpr std::int64_t kEdgeItems = 3;

std::string element(const Tensor& host, std::int64_t i) {
  switch (host.dtype()) {
    case DType::float32:
      return fmt::format("{:.6g}", host.data<float>()[i]);
    case DType::int32:
      return fmt::format("{}", host.data<std::int32_t>()[i]);
    case DType::int64:
      return fmt::format("{}", host.data<std::int64_t>()[i]);
    case DType::uint8:
      return fmt::format("{}", int{host.data<std::uint8_t>()[i]});
    case DType::bfloat16:
      return fmt::format("{:.4g}", low_precision::bfloat16_to_float(static_cast<const std::uint16_t*>(host.raw())[i]));
    case DType::float16:
      return fmt::format("{:.4g}", low_precision::half_to_float(static_cast<const std::uint16_t*>(host.raw())[i]));
  }
  return "?";
}

// Axis `axis` of the block starting at flat index `base`; `indent` is the column of its '['.
void print_axis(std::ostream& os, const Tensor& host, int axis, std::int64_t base, std::size_t indent, bool elide) {
  const Shape& shape = host.shape();
  const std::int64_t n = shape[static_cast<std::size_t>(axis)];
  std::int64_t stride = 1;
  for (std::size_t a = static_cast<std::size_t>(axis) + 1; a < shape.size(); ++a) stride *= shape[a];
  const bool last = axis + 1 == host.rank();
  os << '[';
  for (std::int64_t i = 0; i < n; ++i) {
    if (elide && n > 2 * kEdgeItems && i == kEdgeItems) {
      os << "...";
      i = n - kEdgeItems;
      os << (last ? ", " : ",\n" + std::string(indent + 1, ' '));
    }
    if (last) os << element(host, base + i);
    else print_axis(os, host, axis + 1, base + i * stride, indent + 1, elide);
    if (i + 1 < n) {
      if (last) os << ", ";
      else
        os << ",\n"
           << std::string(static_cast<std::size_t>(host.rank() - axis - 2), '\n') << std::string(indent + 1, ' ');
    }
  }
  os << ']';
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Shape& shape) { return os << shape_str(shape); }
std::ostream& operator<<(std::ostream& os, DType dtype) { return os << dtype_name(dtype); }
std::ostream& operator<<(std::ostream& os, const Device& device) { return os << device.str(); }

std::ostream& operator<<(std::ostream& os, const Tensor& tensor) {
  if (!tensor.defined()) return os << "Tensor(undefined)";
  const Tensor host = tensor.to(Device{});
  os << "Tensor(";
  if (host.rank() == 0) os << element(host, 0);
  else print_axis(os, host, 0, 0, 7, host.numel() > kElideAbove);
  os << ", shape=" << shape_str(tensor.shape()) << ", dtype=" << dtype_name(tensor.dtype());
  if (!tensor.on_host()) os << ", device=" << tensor.device().str();
  return os << ')';
}

}  // namespace kerascpp
