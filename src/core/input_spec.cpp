#include "kerascpp/core/input_spec.hpp"

#include <fmt/format.h>

namespace kerascpp {

namespace {

std::string rank_words(const InputSpec& s) {
  if (s.ndim) return fmt::format("rank {}", *s.ndim);
  if (s.min_ndim && s.max_ndim) return fmt::format("rank {} to {}", *s.min_ndim, *s.max_ndim);
  if (s.min_ndim) return fmt::format("rank at least {}", *s.min_ndim);
  if (s.max_ndim) return fmt::format("rank at most {}", *s.max_ndim);
  return {};
}

std::string with_layout(std::string words, const InputSpec& s) {
  if (!s.layout.empty()) words += (words.empty() ? "" : " ") + s.layout;
  return words;
}

}  // namespace

std::string InputSpec::to_string() const {
  std::string out = with_layout(rank_words(*this), *this);
  for (const auto& [axis, size] : axes) out += fmt::format("{}axis {} of size {}", out.empty() ? "" : ", ", axis, size);
  if (dtype) out += fmt::format("{}{}", out.empty() ? "" : ", ", dtype_name(*dtype));
  return out.empty() ? "any input" : out;
}

std::string InputSpec::mismatch(const Shape& shape, DType got_dtype) const {
  const int rank = static_cast<int>(shape.size());
  const bool rank_ok = (!ndim || rank == *ndim) && (!min_ndim || rank >= *min_ndim) && (!max_ndim || rank <= *max_ndim);
  if (!rank_ok)
    return fmt::format("expected {} input{}{}, got {}{}{}", rank_words(*this), layout.empty() ? "" : " ", layout,
                       shape_str(shape), rank_hint.empty() ? "" : "; ", rank_hint);
  for (const auto& [axis, size] : axes) {
    const int a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank || shape[static_cast<std::size_t>(a)] != size)
      return fmt::format("expected an input of {}, got {}: axis {} is not of size {}", to_string(), shape_str(shape),
                         axis, size);
  }
  if (dtype && got_dtype != *dtype)
    return fmt::format("expected a {} input, got dtype {}; this layer computes in {}, cast the data to {} first",
                       dtype_name(*dtype), dtype_name(got_dtype), dtype_name(*dtype), dtype_name(*dtype));
  return {};
}

}  // namespace kerascpp
