#include "data/padding.hpp"
#include "check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace kerascpp::detail {
namespace {

template <class T>
void fill_as(Tensor& t, double value) {
  std::fill_n(t.data<T>(), t.numel(), static_cast<T>(value));
}

void fill(Tensor& t, double value, const char* op, std::size_t c) {
  switch (t.dtype()) {
    case DType::float32:
      return fill_as<float>(t, value);
    case DType::int32:
      return fill_as<std::int32_t>(t, value);
    case DType::int64:
      return fill_as<std::int64_t>(t, value);
    case DType::uint8:
      return fill_as<std::uint8_t>(t, value);
    default:
      throw ValueError(
          fmt::format("Dataset.{}: component {} is {}; padding supports float32, int32, int64 and "
                      "uint8 — cast it with map() first",
                      op, c, dtype_name(t.dtype())));
  }
}

// Copies `src` (shape s) into the leading corner of `dst`, a block of shape `target` (same rank),
// one innermost run at a time.
void copy_into(const Tensor& src, char* dst, const Shape& target) {
  const Shape& s = src.shape();
  const std::size_t item = dtype_size(src.dtype());
  const auto* from = static_cast<const char*>(src.raw());
  if (s.empty()) {
    std::memcpy(dst, from, item);
    return;
  }
  const std::size_t r = s.size();
  const std::size_t run = static_cast<std::size_t>(s[r - 1]) * item;
  std::int64_t rows = 1;
  for (std::size_t d = 0; d + 1 < r; ++d) rows *= s[d];
  if (run == 0 || rows == 0) return;
  std::vector<std::int64_t> idx(r - 1, 0);
  for (std::int64_t row = 0; row < rows; ++row) {
    std::int64_t offset = 0;  // in target elements
    for (std::size_t d = 0; d + 1 < r; ++d) offset = offset * target[d] + idx[d];
    offset *= target[r - 1];
    std::memcpy(dst + static_cast<std::size_t>(offset) * item, from + static_cast<std::size_t>(row) * run, run);
    for (std::size_t d = r - 1; d-- > 0;) {  // odometer over the outer dims
      if (++idx[d] < s[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

void check_pad_spec(const PadSpec& spec, const char* op) {
  for (std::size_t c = 0; c < spec.padded_shapes.size(); ++c)
    for (std::int64_t d : spec.padded_shapes[c])
      KERASCPP_CHECK_VALUE(d >= -1,
                           "Dataset.{}: padded_shapes[{}] is {}; dims are >= 0, or -1 for the "
                           "longest in the batch",
                           op, c, shape_str(spec.padded_shapes[c]));
  KERASCPP_CHECK_VALUE(spec.padded_shapes.empty() || spec.padding_values.empty() ||
                           spec.padded_shapes.size() == spec.padding_values.size(),
                       "Dataset.{}: {} padded_shapes but {} padding_values; give one per component", op,
                       spec.padded_shapes.size(), spec.padding_values.size());
}

Example pad_and_stack(const std::vector<Example>& elements, const PadSpec& spec, const char* op) {
  const Example& first = elements.front();
  const std::size_t comps = first.size();
  KERASCPP_CHECK_VALUE(spec.padded_shapes.empty() || spec.padded_shapes.size() == comps,
                       "Dataset.{}: elements have {} components but padded_shapes has {}", op, comps,
                       spec.padded_shapes.size());
  KERASCPP_CHECK_VALUE(spec.padding_values.empty() || spec.padding_values.size() == comps,
                       "Dataset.{}: elements have {} components but padding_values has {}", op, comps,
                       spec.padding_values.size());
  const auto n = static_cast<std::int64_t>(elements.size());
  Example out;
  out.reserve(comps);
  for (std::size_t c = 0; c < comps; ++c) {
    const Tensor& f = first[c];
    const std::size_t r = static_cast<std::size_t>(f.rank());
    Shape target(r, 0);
    for (std::size_t e = 0; e < elements.size(); ++e) {
      KERASCPP_CHECK_SHAPE(elements[e].size() == comps,
                           "Dataset.{}: element 0 of a batch has {} components but element {} has {}", op, comps, e,
                           elements[e].size());
      const Tensor& t = elements[e][c];
      KERASCPP_CHECK_SHAPE(t.dtype() == f.dtype() && static_cast<std::size_t>(t.rank()) == r,
                           "Dataset.{}: component {} of element 0 of a batch is {} {} but element {} "
                           "is {} {}; padding needs the same rank and dtype",
                           op, c, shape_str(f.shape()), dtype_name(f.dtype()), e, shape_str(t.shape()),
                           dtype_name(t.dtype()));
      for (std::size_t d = 0; d < r; ++d) target[d] = std::max(target[d], t.shape()[d]);
    }
    if (!spec.padded_shapes.empty()) {
      const Shape& want = spec.padded_shapes[c];
      KERASCPP_CHECK_SHAPE(want.size() == r, "Dataset.{}: padded_shapes[{}] is {} but the component has rank {} ({})",
                           op, c, shape_str(want), r, shape_str(f.shape()));
      for (std::size_t d = 0; d < r; ++d) {
        const std::int64_t to = want[d] >= 0 ? want[d] : spec.unknown_dim_fill;
        if (to < 0) continue;  // -1: the longest in the batch
        KERASCPP_CHECK_SHAPE(target[d] <= to,
                             "Dataset.{}: component {} has size {} on axis {}, more than the {} it "
                             "is padded to; raise padded_shapes[{}] or cut the element with map()",
                             op, c, target[d], d, to, c);
        target[d] = to;
      }
    }
    Shape batch_shape{n};
    batch_shape.insert(batch_shape.end(), target.begin(), target.end());
    Tensor batch(batch_shape, f.dtype());
    fill(batch, spec.padding_values.empty() ? 0.0 : spec.padding_values[c], op, c);
    const std::size_t block = static_cast<std::size_t>(shape_numel(target)) * dtype_size(f.dtype());
    auto* dst = static_cast<char*>(batch.raw());
    for (const Example& e : elements) {
      copy_into(e[c], dst, target);
      dst += block;
    }
    out.push_back(std::move(batch));
  }
  return out;
}

}  // namespace kerascpp::detail
