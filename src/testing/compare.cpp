// allclose/equal for tests: one pass over both tensors in double, remembering the element that
// breaks its tolerance by the most, so a failure names it instead of printing two whole tensors.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "check.hpp"
#include "kerascpp/testing.hpp"

namespace kerascpp::testing {
namespace {

// The values of any dtype as doubles, read through a host copy (GPU tensors included).
std::vector<double> host_values(const Tensor& t) {
  const Tensor host = t.to(Device{});
  const std::size_t n = static_cast<std::size_t>(host.numel());
  std::vector<double> out(n);
  switch (host.dtype()) {
    case DType::float32:
      for (std::size_t i = 0; i < n; ++i) out[i] = host.data<float>()[i];
      break;
    case DType::int32:
      for (std::size_t i = 0; i < n; ++i) out[i] = host.data<std::int32_t>()[i];
      break;
    case DType::int64:
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<double>(host.data<std::int64_t>()[i]);
      break;
    case DType::uint8:
      for (std::size_t i = 0; i < n; ++i) out[i] = host.data<std::uint8_t>()[i];
      break;
    case DType::bfloat16:
    case DType::float16: {
      const std::vector<float> widened = host.to_vector();
      out.assign(widened.begin(), widened.end());
      break;
    }
  }
  return out;
}

// "[1, 0, 2]": the position of flat index `flat` in a row-major tensor of `shape`.
std::string index_str(const Shape& shape, std::int64_t flat) {
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] > 0 ? flat % shape[d] : 0;
    flat = shape[d] > 0 ? flat / shape[d] : 0;
  }
  return fmt::format("[{}]", fmt::join(index, ", "));
}

// Shape, dtype and definedness: what must agree before values are compared ("" when it does).
std::string structural_mismatch(const char* what, const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined())
    return fmt::format("{}: {} an undefined (default-constructed) Tensor; compare tensors that hold values", what,
                       !a.defined() && !b.defined() ? "actual and expected are each"
                       : !a.defined()               ? "actual is"
                                                    : "expected is");
  if (a.shape() != b.shape())
    return fmt::format("{}: shapes differ: actual {} vs expected {}", what, shape_str(a.shape()), shape_str(b.shape()));
  if (a.dtype() != b.dtype())
    return fmt::format("{}: dtypes differ: actual {} vs expected {}; convert one side first (int_tensor() makes int32)",
                       what, dtype_name(a.dtype()), dtype_name(b.dtype()));
  return "";
}

struct Tolerance {
  double rtol = 0, atol = 0;
  bool equal_nan = false;
  double at(double expected) const { return atol + rtol * std::fabs(expected); }
};

// By how much actual breaks the tolerance around expected: <= 0 when it is within it, +inf for a
// NaN or an infinity that does not match.
double excess(double actual, double expected, const Tolerance& tol) {
  const bool nan_a = std::isnan(actual), nan_b = std::isnan(expected);
  if (nan_a || nan_b) return nan_a && nan_b && tol.equal_nan ? 0.0 : std::numeric_limits<double>::infinity();
  if (std::isinf(actual) || std::isinf(expected))
    return actual == expected ? 0.0 : std::numeric_limits<double>::infinity();
  return std::fabs(actual - expected) - tol.at(expected);
}

Comparison compare(const char* what, const Tensor& a, const Tensor& b, const Tolerance& tol,
                   const std::string& tolerance_text) {
  if (std::string bad = structural_mismatch(what, a, b); !bad.empty()) return {false, bad};
  const std::vector<double> va = host_values(a), vb = host_values(b);
  std::int64_t differ = 0, worst = -1;
  double worst_excess = 0;
  for (std::size_t i = 0; i < va.size(); ++i) {
    const double e = excess(va[i], vb[i], tol);
    if (e <= 0) continue;
    ++differ;
    if (worst < 0 || e > worst_excess) {
      worst = static_cast<std::int64_t>(i);
      worst_excess = e;
    }
  }
  const std::string suffix = tolerance_text.empty() ? "" : " (" + tolerance_text + ")";
  if (differ == 0) return {true, fmt::format("{}: {} elements match{}", what, va.size(), suffix)};
  const double x = va[static_cast<std::size_t>(worst)], y = vb[static_cast<std::size_t>(worst)];
  std::string worst_text =
      fmt::format("worst at {}: actual {:.9g}, expected {:.9g}", index_str(a.shape(), worst), x, y);
  if (std::isfinite(x) && std::isfinite(y))
    worst_text += tolerance_text.empty()
                      ? fmt::format(", |actual - expected| {:.6g}", std::fabs(x - y))
                      : fmt::format(", |actual - expected| {:.6g} > tolerance {:.6g}", std::fabs(x - y), tol.at(y));
  return {false,
          fmt::format("{}: {} of {} elements differ{}; {}", what, differ, va.size(), suffix, std::move(worst_text))};
}

// Appends the elements of dimension `dim` starting at `offset` as nested [..] lists.
void append_values(std::string& out, const std::vector<double>& v, const Shape& shape, std::size_t dim,
                   std::int64_t offset, std::int64_t max_elements, std::int64_t& printed) {
  if (dim == shape.size()) {
    out += fmt::format("{:.7g}", v[static_cast<std::size_t>(offset)]);
    ++printed;
    return;
  }
  std::int64_t stride = 1;
  for (std::size_t d = dim + 1; d < shape.size(); ++d) stride *= shape[d];
  out += '[';
  for (std::int64_t i = 0; i < shape[dim]; ++i) {
    if (i > 0) out += ", ";
    if (printed >= max_elements) {
      out += "...";
      break;
    }
    append_values(out, v, shape, dim + 1, offset + i * stride, max_elements, printed);
  }
  out += ']';
}

}  // namespace

std::ostream& operator<<(std::ostream& out, const Comparison& comparison) { return out << comparison.message(); }

Comparison allclose(const Tensor& actual, const Tensor& expected, double rtol, double atol, bool equal_nan) {
  KERASCPP_CHECK_VALUE(rtol >= 0 && atol >= 0 && std::isfinite(rtol) && std::isfinite(atol),
                       "allclose: rtol ({}) and atol ({}) must be finite and >= 0", rtol, atol);
  return compare("allclose", actual, expected, Tolerance{rtol, atol, equal_nan},
                 fmt::format("rtol {:g}, atol {:g}{}", rtol, atol, equal_nan ? ", equal_nan" : ""));
}

Comparison equal(const Tensor& actual, const Tensor& expected) {
  return compare("equal", actual, expected, Tolerance{}, "");
}

std::string to_string(const Tensor& tensor, std::int64_t max_elements) {
  if (!tensor.defined()) return "Tensor(undefined)";
  std::string out = fmt::format("Tensor({}, shape {}, ", dtype_name(tensor.dtype()), shape_str(tensor.shape()));
  std::int64_t printed = 0;
  append_values(out, host_values(tensor), tensor.shape(), 0, 0, std::max<std::int64_t>(max_elements, 1), printed);
  if (tensor.device().kind != Device::Kind::cpu) out += ", device " + tensor.device().str();
  return out + ")";
}

}  // namespace kerascpp::testing
